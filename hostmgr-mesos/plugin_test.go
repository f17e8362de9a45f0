package mesos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func TestConfigRejectsBadValues(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"no cluster", Config{Masters: []string{"http://m:5050"}}},
		{"slash in cluster", Config{Cluster: "a/b", Masters: []string{"http://m:5050"}}},
		{"no master", Config{Cluster: "dc1"}},
		{"not a url", Config{Cluster: "dc1", Masters: []string{"m:5050"}}},
		{"negative hold", Config{Cluster: "dc1", Masters: []string{"http://m:5050"}, OfferHold: -time.Second}},
		{"bad role", Config{Cluster: "dc1", Masters: []string{"http://m:5050"}, Role: "a b"}},
	}
	for _, c := range cases {
		if _, err := New(c.cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig", c.name, err)
		}
	}
}

// Each bad field is named in the error, the first in field order when
// several are bad.
func TestConfigErrorNamesTheField(t *testing.T) {
	m := []string{"http://m:5050"}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"cluster before masters", Config{Cluster: "a/b"}, `Cluster "a/b"`},
		{"no master", Config{Cluster: "dc1"}, "Masters: at least one"},
		{"second master not a url", Config{Cluster: "dc1", Masters: []string{"http://m:5050", "ftp://m"}}, `Masters[1] "ftp://m"`},
		{"first negative duration", Config{Cluster: "dc1", Masters: m, LaunchWait: -1, CallTimeout: -1}, "LaunchWait -1ns is negative"},
		{"backoff bounds", Config{Cluster: "dc1", Masters: m, MinBackoff: time.Minute}, "MaxBackoff 15s is below MinBackoff 1m0s"},
		{"negative workers", Config{Cluster: "dc1", Masters: m, CallWorkers: -1}, "CallWorkers must not be negative"},
		{"dot role", Config{Cluster: "dc1", Masters: m, Role: ".."}, `Role ".."`},
	}
	for _, c := range cases {
		err := c.cfg.validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig naming %q", c.name, err, c.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg := Config{Cluster: "dc1", Masters: []string{"http://m:5050", "https://n:5050/custom"}, OfferHold: time.Second}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://m:5050/api/v1/scheduler", "https://n:5050/custom"}; !slices.Equal(cfg.Masters, want) {
		t.Errorf("Masters = %v, want %v", cfg.Masters, want)
	}
	if cfg.OfferHold != time.Second || cfg.DeclineRefuse != DefaultDeclineRefuse || cfg.MaxBackoff != DefaultMaxBackoff {
		t.Errorf("durations: hold %v refuse %v max backoff %v", cfg.OfferHold, cfg.DeclineRefuse, cfg.MaxBackoff)
	}
	if cfg.HeartbeatMisses != DefaultHeartbeatMisses || cfg.CallWorkers != DefaultCallWorkers ||
		cfg.FrameworkName != DefaultFrameworkName || cfg.Role != DefaultRole || cfg.User != DefaultUser {
		t.Errorf("defaults not filled: %+v", cfg)
	}
	if cfg.FrameworkIDs == nil || cfg.Clock == nil || cfg.Logger == nil {
		t.Errorf("FrameworkIDs, Clock or Logger left nil")
	}
}

func TestOffersBecomeHostsWithLabels(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(3, 4, 4096)...)
	ids := &MemoryFrameworkIDStore{}
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, FrameworkIDs: ids})
	waitFor(t, "3 hosts", func() bool { return rp.sink.hostCount() == 3 })
	h, ok := rp.sink.host("dc1/agent-1")
	if !ok {
		t.Fatal("host dc1/agent-1 not reported")
	}
	if h.Kind != HostKind || h.Cluster != "dc1" || h.State != model.HostUp || h.Hostname != "agent-1" {
		t.Errorf("host = %+v", h)
	}
	if h.Capacity.MilliCPU != 4000 || h.Capacity.MemMB != 4096 || h.Labels["zone"] != "z1" || h.Labels["mesos.agent_id"] != "S1" {
		t.Errorf("capacity/labels = %+v %v", h.Capacity, h.Labels)
	}
	stored, _ := ids.LoadFrameworkID(context.Background())
	if stored == "" || stored != rp.p.FrameworkID() {
		t.Errorf("stored framework id %q, plugin has %q", stored, rp.p.FrameworkID())
	}
}

func TestLaunchedRunsFinishOrFailWithExitCode(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(2, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "hosts", func() bool { return rp.sink.hostCount() == 2 })
	err := rp.p.Launch(context.Background(), []hostmgr.Launch{
		launch("jobA-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "50ms"}),
		launch("jobA-1-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "50ms", mesostest.EnvExitCode: "3"}),
		launch("jobA-2-1", "dc1/agent-1", 1, map[string]string{mesostest.EnvDuration: "50ms"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ok := waitState(t, rp.sink, "jobA-0-1", model.TaskSucceeded)
	if ok.Reason != model.ReasonExitZero || ok.Host != "dc1/agent-0" {
		t.Errorf("succeeded status = %+v", ok)
	}
	failed := waitState(t, rp.sink, "jobA-1-1", model.TaskFailed)
	if failed.ExitCode != 3 || failed.Reason != model.ReasonExitNonZero {
		t.Errorf("failed status = %+v", failed)
	}
	waitState(t, rp.sink, "jobA-2-1", model.TaskSucceeded)
	if got := rp.sink.states("jobA-0-1"); got[0] != model.TaskRunning {
		t.Errorf("first state = %v, want RUNNING first", got)
	}
	// Every update was acknowledged: the master forgets ended tasks only then.
	waitFor(t, "all updates acknowledged", func() bool { return len(c.m.Tasks()) == 0 })
	if s := c.m.Stats(); s.BadRequests != 0 || s.TasksLaunched != 3 {
		t.Errorf("master stats = %+v", s)
	}
}

func TestKillEndsRunKilled(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobK-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "1h"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobK-0-1", model.TaskRunning)
	if err := rp.p.Kill(context.Background(), "jobK-0-1", "dc1/agent-0", time.Second); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobK-0-1", model.TaskKilled)
	if st.Reason != model.ReasonKilled {
		t.Errorf("killed status = %+v", st)
	}
}

func TestAgentFailureRemovesHostAndLosesRuns(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(2, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "hosts", func() bool { return rp.sink.hostCount() == 2 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobF-0-1", "dc1/agent-1", 1, map[string]string{mesostest.EnvDuration: "1h"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobF-0-1", model.TaskRunning)
	if err := c.m.RemoveAgent("S1"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobF-0-1", model.TaskLost)
	if st.Reason != model.ReasonHostLost {
		t.Errorf("lost status = %+v", st)
	}
	waitFor(t, "host removed", func() bool { _, ok := rp.sink.host("dc1/agent-1"); return !ok })
	// A launch on the removed host is reported LOST at once.
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobF-0-2", "dc1/agent-1", 1, nil)}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobF-0-2", model.TaskLost)
}

func TestRestartResubscribesWithSameFrameworkAndReconciles(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	ids := &MemoryFrameworkIDStore{}
	first := startPlugin(t, Config{Masters: []string{c.srv.URL}, FrameworkIDs: ids, FailoverTimeout: time.Minute})
	waitFor(t, "host", func() bool { return first.sink.hostCount() == 1 })
	if err := first.p.Launch(context.Background(), []hostmgr.Launch{
		launch("jobR-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "700ms"}),
	}); err != nil {
		t.Fatal(err)
	}
	waitState(t, first.sink, "jobR-0-1", model.TaskRunning)
	fwID := first.p.FrameworkID()
	first.stop()
	waitFor(t, "master sees the disconnect", func() bool { return !c.m.Subscribed(fwID) })

	second := startPlugin(t, Config{Masters: []string{c.srv.URL}, FrameworkIDs: ids, FailoverTimeout: time.Minute})
	if err := second.p.Reconcile(context.Background(), []hostmgr.RunRef{
		{Run: "jobR-0-1", Host: "dc1/agent-0"},
		{Run: "jobR-1-1", Host: "dc1/agent-0"}, // never launched
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "resubscribed", second.p.Connected)
	if got := second.p.FrameworkID(); got != fwID {
		t.Fatalf("framework id after restart = %q, want %q", got, fwID)
	}
	lost := waitState(t, second.sink, "jobR-1-1", model.TaskLost)
	if lost.Reason != model.ReasonUnknownTask {
		t.Errorf("unknown run status = %+v", lost)
	}
	waitState(t, second.sink, "jobR-0-1", model.TaskSucceeded)
	if ids := c.m.FrameworkIDs(); len(ids) != 1 {
		t.Errorf("master frameworks = %v, want one", ids)
	}
}

func TestRescindedOfferLosesNoLaunch(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	waitFor(t, "offer held", func() bool { return c.m.OutstandingOffers() == 1 })
	// The RESCIND does not reach the plugin before it accepts: the master
	// drops the launch, and the plugin launches it again with the next
	// offer, the shard seeing nothing of it.
	c.m.SetSilent(true)
	if n := c.m.RescindOffers("S0"); n != 1 {
		t.Fatalf("rescinded %d offers", n)
	}
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobX-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	// The plugin accepts on its own goroutine: the RESCIND must stay
	// unheard until its ACCEPT reached the master.
	waitFor(t, "the ACCEPT of the rescinded offer", func() bool { return c.m.Stats().Calls["ACCEPT"] >= 1 })
	c.m.SetSilent(false)
	waitState(t, rp.sink, "jobX-0-1", model.TaskSucceeded)
	if got := rp.sink.states("jobX-0-1"); !slices.Equal(got, []model.TaskState{model.TaskRunning, model.TaskSucceeded}) {
		t.Errorf("shard saw %v, want RUNNING then SUCCEEDED", got)
	}
	if n := c.m.Stats().Calls["ACCEPT"]; n != 2 {
		t.Errorf("%d ACCEPTs, want the dropped one and its retry", n)
	}
	// After the RESCIND arrived, a launch waits for the re-offer and runs.
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobX-0-2", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobX-0-2", model.TaskSucceeded)
}

func TestLaunchWithoutEnoughResourcesIsLost(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 2, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, LaunchWait: 300 * time.Millisecond})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobB-0-1", "dc1/agent-0", 3, nil)}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobB-0-1", model.TaskLost)
	if st.Reason != model.ReasonLaunchError {
		t.Errorf("status = %+v", st)
	}
	if s := c.m.Stats(); s.TasksLaunched != 0 {
		t.Errorf("master launched %d tasks", s.TasksLaunched)
	}
}

func TestRedirectToLeadingMaster(t *testing.T) {
	leader := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	standby := newCluster(t, mesostest.Config{})
	standby.m.SetRedirect(leader.srv.Listener.Addr().String())
	rp := startPlugin(t, Config{Masters: []string{standby.srv.URL}})
	waitFor(t, "host through the leader", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobL-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobL-0-1", model.TaskSucceeded)
	if standby.m.Stats().Subscribes != 0 || len(standby.m.FrameworkIDs()) != 0 {
		t.Error("standby registered the framework")
	}
}

func TestHeartbeatLossReconnects(t *testing.T) {
	c := newCluster(t, mesostest.Config{HeartbeatInterval: 50 * time.Millisecond}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, HeartbeatMisses: 3})
	waitFor(t, "subscribed", rp.p.Connected)
	id := rp.p.FrameworkID()
	c.m.SetSilent(true)
	waitFor(t, "disconnect on silence", func() bool { return !rp.p.Connected() })
	waitFor(t, "second subscribe", func() bool { return c.m.Stats().Subscribes >= 2 })
	c.m.SetSilent(false)
	waitFor(t, "reconnected", rp.p.Connected)
	if rp.p.FrameworkID() != id {
		t.Errorf("framework id changed from %q to %q", id, rp.p.FrameworkID())
	}
}

func TestMaintenanceDrainsHost(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := c.m.StartMaintenance("S0", time.Now().Add(time.Hour), time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "draining", func() bool { h, _ := rp.sink.host("dc1/agent-0"); return h.State == model.HostDraining })
	if err := c.m.StopMaintenance("S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "up again", func() bool { h, _ := rp.sink.host("dc1/agent-0"); return h.State == model.HostUp })
}

func TestJSONEncodingWorksEndToEnd(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, JSON: true})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobJ-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobJ-0-1", model.TaskSucceeded)
}

func TestSuppressWhenIdleReviveOnLaunch(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, OfferHold: 100 * time.Millisecond})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	waitFor(t, "suppressed", func() bool { return c.m.Stats().Calls["SUPPRESS"] > 0 })
	waitFor(t, "no offer outstanding", func() bool { return c.m.OutstandingOffers() == 0 })
	// The host keeps its remembered capacity, so placement still picks it;
	// the launch revives offers and runs.
	if h, _ := rp.sink.host("dc1/agent-0"); h.Capacity.MilliCPU != 4000 {
		t.Fatalf("capacity after suppress = %+v", h.Capacity)
	}
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobS-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobS-0-1", model.TaskSucceeded)
	if c.m.Stats().Calls["REVIVE"] == 0 {
		t.Error("no REVIVE sent")
	}
}

// Launches of several Launch calls bound for one agent wait together while
// the agent's offer is out, and go in one ACCEPT when it is offered again.
func TestLaunchesOfSeveralCallsShareOneAccept(t *testing.T) {
	// Time passes only when the test ticks the master.
	c := newCluster(t, mesostest.Config{AllocationInterval: time.Hour, HeartbeatInterval: time.Hour}, agents(2, 8, 8192)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, OfferHold: time.Hour})
	waitFor(t, "subscription", func() bool {
		ids := c.m.FrameworkIDs()
		return len(ids) == 1 && c.m.Subscribed(ids[0])
	})
	c.m.Tick()
	waitFor(t, "hosts", func() bool { return rp.sink.hostCount() == 2 })
	heldOn := func(agent string) int {
		rp.p.mu.Lock()
		defer rp.p.mu.Unlock()
		return len(rp.p.agents[agent].offers)
	}
	if n := c.m.RescindOffers("S0"); n != 1 {
		t.Fatalf("%d offers of S0 rescinded", n)
	}
	waitFor(t, "S0's offer dropped", func() bool { return heldOn("S0") == 0 })
	before := c.m.Stats().Calls["ACCEPT"]
	for i := range 3 {
		if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch(fmt.Sprintf("jobG-%d-1", i), "dc1/agent-0", 1, nil)}); err != nil {
			t.Fatal(err)
		}
	}
	rp.p.mu.Lock()
	waiting := len(rp.p.waiting)
	rp.p.mu.Unlock()
	if waiting != 3 || c.m.Stats().Calls["ACCEPT"] != before {
		t.Fatalf("before the re-offer: %d launches waiting, %d ACCEPTs sent", waiting, c.m.Stats().Calls["ACCEPT"]-before)
	}
	c.m.Tick() // offers S0 again
	waitFor(t, "three tasks launched", func() bool { return c.m.Stats().TasksLaunched == 3 })
	if n := c.m.Stats().Calls["ACCEPT"] - before; n != 1 {
		t.Errorf("%d ACCEPTs for three launches on one agent, want 1", n)
	}
}

// A launch waiting on an agent that fails is reported LOST at once.
func TestWaitingLaunchOnFailedAgentIsLost(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 2, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, LaunchWait: time.Hour})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobW-0-1", "dc1/agent-0", 3, nil)}); err != nil {
		t.Fatal(err)
	}
	if err := c.m.PartitionAgent("S0"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobW-0-1", model.TaskLost)
	if st.Reason != model.ReasonHostLost {
		t.Errorf("status = %+v", st)
	}
}
