package mesos

import (
	"context"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func hostState(s *recordingSink, id model.HostID) model.HostState {
	h, ok := s.host(id)
	if !ok {
		return 0
	}
	return h.State
}

// A partitioned agent's host goes DOWN and its run stays RUNNING in the
// shard; when the agent comes back the host is UP again and the run was
// never lost. Partitioned again and marked gone by an operator, the run is
// LOST at once and the host removed.
func TestUnreachableRunIsNotLostWhileItsAgentMayComeBack(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(2, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, UnreachableWait: time.Hour})
	waitFor(t, "hosts", func() bool { return rp.sink.hostCount() == 2 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobU-0-1", "dc1/agent-1", 1, map[string]string{mesostest.EnvDuration: "1h"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobU-0-1", model.TaskRunning)

	if err := c.m.PartitionAgent("S1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "host down", func() bool { return hostState(rp.sink, "dc1/agent-1") == model.HostDown })
	// A launch on it is refused at once.
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobU-1-1", "dc1/agent-1", 1, nil)}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobU-1-1", model.TaskLost)
	time.Sleep(300 * time.Millisecond)
	if st, _ := rp.sink.last("jobU-0-1"); st.State != model.TaskRunning {
		t.Fatalf("unreachable run reported %v", st.State)
	}

	if err := c.m.ReconnectAgent("S1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "host up again", func() bool { return hostState(rp.sink, "dc1/agent-1") == model.HostUp })
	waitFor(t, "reconciled running", func() bool { return len(rp.sink.states("jobU-0-1")) >= 2 })
	for _, s := range rp.sink.states("jobU-0-1") {
		if s != model.TaskRunning {
			t.Fatalf("run states %v, want RUNNING only", rp.sink.states("jobU-0-1"))
		}
	}

	if err := c.m.PartitionAgent("S1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "host down", func() bool { return hostState(rp.sink, "dc1/agent-1") == model.HostDown })
	if err := c.m.MarkAgentGone("S1"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobU-0-1", model.TaskLost)
	if st.Reason != model.ReasonHostLost {
		t.Errorf("gone run: %+v", st)
	}
	waitFor(t, "host removed", func() bool { _, ok := rp.sink.host("dc1/agent-1"); return !ok })
}

// A run unreachable for UnreachableWait is reported LOST and its host
// removed; when the agent comes back after all, the run still going
// there is killed.
func TestUnreachableRunIsLostAfterTheWait(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, UnreachableWait: 400 * time.Millisecond})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobW-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "1h"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobW-0-1", model.TaskRunning)
	start := time.Now()
	if err := c.m.PartitionAgent("S0"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "jobW-0-1", model.TaskLost)
	if took := time.Since(start); took < 400*time.Millisecond || st.Reason != model.ReasonHostLost {
		t.Errorf("lost after %v: %+v", took, st)
	}
	waitFor(t, "host removed", func() bool { _, ok := rp.sink.host("dc1/agent-0"); return !ok })

	if err := c.m.ReconnectAgent("S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "host back", func() bool { return hostState(rp.sink, "dc1/agent-0") == model.HostUp })
	waitFor(t, "the run going on behind the shard's back is killed", func() bool {
		return masterState(c.m, "jobW-0-1") == mesoslib.TASK_KILLED || masterState(c.m, "jobW-0-1") == -1
	})
}
