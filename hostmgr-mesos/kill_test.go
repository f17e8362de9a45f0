package mesos

import (
	"context"
	"slices"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// The plugin subscribes with TASK_KILLING_STATE and sends the task's kill
// grace as its kill policy: a command that ignores SIGTERM is reported
// KILLED when the grace period ends, the master showing it TASK_KILLING
// meanwhile, and the shard sees no state between RUNNING and KILLED. A
// Kill's own grace overrides the task's.
func TestKillGraceIsTheKillPolicy(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	info, _ := c.m.FrameworkInfo(rp.p.FrameworkID())
	if !slices.ContainsFunc(info.Capabilities, func(cp mesoslib.FrameworkInfo_Capability) bool {
		return cp.Type == mesoslib.FrameworkInfo_Capability_TASK_KILLING_STATE
	}) {
		t.Fatalf("capabilities %v lack TASK_KILLING_STATE", info.Capabilities)
	}
	stubborn := map[string]string{mesostest.EnvDuration: "1h", mesostest.EnvStopDelay: "1h"}
	graced := launch("jobG-0-1", "dc1/agent-0", 1, stubborn)
	graced.Task.KillGrace = 400 * time.Millisecond
	overridden := launch("jobG-1-1", "dc1/agent-0", 1, stubborn)
	overridden.Task.KillGrace = time.Hour
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{graced, overridden}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobG-0-1", model.TaskRunning)
	waitState(t, rp.sink, "jobG-1-1", model.TaskRunning)

	start := time.Now()
	if err := rp.p.Kill(context.Background(), "jobG-0-1", "dc1/agent-0", 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "TASK_KILLING at the master", func() bool { return masterState(c.m, "jobG-0-1") == mesoslib.TASK_KILLING })
	waitState(t, rp.sink, "jobG-0-1", model.TaskKilled)
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("killed after %v, before the 400ms grace", took)
	}
	if got := rp.sink.states("jobG-0-1"); !slices.Equal(got, []model.TaskState{model.TaskRunning, model.TaskKilled}) {
		t.Errorf("shard saw %v, want RUNNING then KILLED", got)
	}

	start = time.Now()
	if err := rp.p.Kill(context.Background(), "jobG-1-1", "dc1/agent-0", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobG-1-1", model.TaskKilled)
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("killed after %v, want the Kill's 200ms grace, not the task's hour", took)
	}
}

func masterState(m *mesostest.Master, task string) mesoslib.TaskState {
	for _, v := range m.Tasks() {
		if v.ID == task {
			return v.State
		}
	}
	return -1
}
