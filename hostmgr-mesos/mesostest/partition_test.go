package mesostest

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func reconcileCall(task, agent string) *scheduler.Call {
	return &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{Tasks: []scheduler.Call_Reconcile_Task{
		{TaskID: mesos.TaskID{Value: task}, AgentID: &mesos.AgentID{Value: agent}}}}}
}

// A partition-aware framework hears TASK_UNREACHABLE (and FAILURE) when
// an agent is partitioned, TASK_RUNNING from reconciliation once it is
// back, and TASK_GONE_BY_OPERATOR when an operator marks it gone; a
// framework that is not partition-aware hears TASK_LOST.
func TestUnreachableAgents(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	f := e.subscribe(t, frameworkInfo("f", "r", "", mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	f.accept(f.offer(e, "S0"), launchOp(commandTask("t1", "S0", map[string]string{EnvDuration: "1h"}, scalar("cpus", 1, "r"))))
	waitUpdate(e, f, "t1", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING })

	if err := e.m.PartitionAgent("S0"); err != nil {
		t.Fatal(err)
	}
	st := f.update("t1")
	if st.GetState() != mesos.TASK_UNREACHABLE || len(st.UUID) != 0 || st.GetSource() != mesos.SOURCE_MASTER {
		t.Errorf("on partition: %v uuid=%v source=%v, want TASK_UNREACHABLE from the master", st.GetState(), st.UUID, st.GetSource())
	}
	if ev := f.next(scheduler.Event_FAILURE); ev.Failure.AgentID.Value != "S0" {
		t.Errorf("FAILURE for %v", ev.Failure.AgentID)
	}
	f.call(reconcileCall("t1", "S0"))
	if st := f.update("t1"); st.GetState() != mesos.TASK_UNREACHABLE {
		t.Errorf("reconciled while unreachable: %v", st.GetState())
	}
	for i := 0; i < 5; i++ {
		e.tick(20 * time.Millisecond)
	}
	if n := e.m.OutstandingOffers(); n != 0 {
		t.Errorf("%d offers of an unreachable agent", n)
	}

	if err := e.m.ReconnectAgent("S0"); err != nil {
		t.Fatal(err)
	}
	f.call(reconcileCall("t1", "S0"))
	if st := f.update("t1"); st.GetState() != mesos.TASK_RUNNING {
		t.Errorf("reconciled after the agent came back: %v", st.GetState())
	}
	f.offer(e, "S0")

	if err := e.m.PartitionAgent("S0"); err != nil {
		t.Fatal(err)
	}
	f.update("t1")
	if err := e.m.MarkAgentGone("S0"); err != nil {
		t.Fatal(err)
	}
	if st := f.update("t1"); st.GetState() != mesos.TASK_GONE_BY_OPERATOR {
		t.Errorf("marked gone: %v", st.GetState())
	}
	f.call(reconcileCall("t1", "S0"))
	if st := f.update("t1"); st.GetState() != mesos.TASK_GONE_BY_OPERATOR {
		t.Errorf("reconciled after marked gone: %v", st.GetState())
	}

	e = newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	g := e.subscribe(t, frameworkInfo("g", "r", ""))
	g.accept(g.offer(e, "S0"), launchOp(commandTask("t2", "S0", map[string]string{EnvDuration: "1h"}, scalar("cpus", 1, "r"))))
	waitUpdate(e, g, "t2", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING })
	if err := e.m.PartitionAgent("S0"); err != nil {
		t.Fatal(err)
	}
	if st := g.update("t2"); st.GetState() != mesos.TASK_LOST {
		t.Errorf("not partition-aware: %v, want TASK_LOST", st.GetState())
	}
}
