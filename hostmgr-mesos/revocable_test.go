package mesos

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Revocable work runs on the agent's revocable cpus and mem, ordinary work
// never does; the slack the shard reads equals the revocable resources;
// a revocable run Mesos preempts is reported LOST.
func TestRevocableResourcesForRevocableWorkOnly(t *testing.T) {
	c := newCluster(t, mesostest.Config{KeepTaskInfos: true},
		mesostest.AgentSpec{ID: "S0", Hostname: "agent-0", CPU: 1, MemMB: 1024, DiskMB: 100, RevocableCPU: 4, RevocableMemMB: 2048})
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, LaunchWait: 300 * time.Millisecond})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	waitFor(t, "slack known", func() bool { _, ok := rp.p.MeasuredUsage("dc1/agent-0"); return ok })
	if used, _ := rp.p.MeasuredUsage("dc1/agent-0"); used.MilliCPU != -4000 || used.MemMB != -2048 {
		t.Errorf("usage %+v, want the slack to be the 4 revocable cpus and 2048 MB", used)
	}

	best := launch("jobV-0-1", "dc1/agent-0", 3, map[string]string{mesostest.EnvDuration: "1h"})
	best.Revocable = true
	ordinary := launch("jobO-0-1", "dc1/agent-0", 2, map[string]string{mesostest.EnvDuration: "1h"})
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{best, ordinary}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobV-0-1", model.TaskRunning)
	if st := waitState(t, rp.sink, "jobO-0-1", model.TaskLost); st.Reason != model.ReasonLaunchError {
		t.Errorf("ordinary run that fits only the revocable resources: %+v", st)
	}
	ti, _ := c.m.TaskInfo("jobV-0-1")
	for _, r := range ti.Resources {
		if (r.Name == "cpus" || r.Name == "mem") && r.Revocable == nil {
			t.Errorf("revocable run uses ordinary %s", r.Name)
		}
	}
	if h, _ := rp.sink.host("dc1/agent-0"); h.Capacity.MilliCPU != 1000 {
		t.Errorf("capacity %+v counts revocable resources", h.Capacity)
	}

	if err := c.m.SetRevocable("S0", 1, 2048); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, rp.sink, "jobV-0-1", model.TaskLost); st.Reason != model.ReasonHostLost {
		t.Errorf("preempted revocable run: %+v", st)
	}
}
