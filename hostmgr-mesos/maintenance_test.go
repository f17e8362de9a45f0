package mesos

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Maintenance makes the agent's host DRAINING with the window's start as
// its drain deadline; the plugin accepts the inverse offer when the start
// is ahead and declines it when the window has begun while its run is
// still there; the end of maintenance makes the host UP again.
func TestMaintenanceBecomesAHostDrain(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(2, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "hosts", func() bool { return rp.sink.hostCount() == 2 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{
		launch("jobM-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "1h"}),
		launch("jobM-1-1", "dc1/agent-1", 1, map[string]string{mesostest.EnvDuration: "1h"}),
	}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobM-0-1", model.TaskRunning)
	waitState(t, rp.sink, "jobM-1-1", model.TaskRunning)
	fw := rp.p.FrameworkID()

	start := time.Now().Add(time.Hour).Truncate(time.Second)
	if err := c.m.StartMaintenance("S0", start, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.m.StartMaintenance("S1", time.Now().Add(-time.Minute), time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "draining", func() bool { return hostState(rp.sink, "dc1/agent-0") == model.HostDraining })
	h, _ := rp.sink.host("dc1/agent-0")
	if got := hostmgr.DrainDeadline(&h); !got.Equal(start) {
		t.Errorf("drain deadline %v, want the window's start %v", got, start)
	}
	answer := func(agent string) string {
		a, err := c.m.InverseOfferAnswers(agent)
		if err != nil {
			t.Fatal(err)
		}
		return a[fw]
	}
	waitFor(t, "inverse offers answered", func() bool { return answer("S0") != "" && answer("S1") != "" })
	if answer("S0") != "ACCEPTED" || answer("S1") != "DECLINED" {
		t.Errorf("answers: S0 %s (window ahead), S1 %s (window begun, run there)", answer("S0"), answer("S1"))
	}
	// Offers keep coming while agents are under maintenance, so that
	// the plugin hears of its end.
	if err := c.m.StopMaintenance("S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "up again", func() bool { return hostState(rp.sink, "dc1/agent-0") == model.HostUp })
	if h, _ := rp.sink.host("dc1/agent-0"); h.Labels[hostmgr.LabelDrainDeadline] != "" {
		t.Errorf("drain deadline left on an UP host: %v", h.Labels)
	}
	if hostState(rp.sink, "dc1/agent-1") != model.HostDraining {
		t.Error("agent-1 is no longer draining")
	}
}
