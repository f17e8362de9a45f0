package mesostest

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func revocable(name string, v float64, role string) mesos.Resource {
	r := scalar(name, v, role)
	r.Revocable = &mesos.Resource_RevocableInfo{}
	return r
}

func hasRevocable(o mesos.Offer) bool {
	for _, r := range o.Resources {
		if r.Revocable != nil {
			return true
		}
	}
	return false
}

// Revocable resources are offered only to frameworks with
// REVOCABLE_RESOURCES; a task may run on them, and is preempted
// (TASK_GONE) when the agent's revocable slack shrinks below what it uses.
func TestRevocableResourcesAndPreemption(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 1, MemMB: 1024, RevocableCPU: 4, RevocableMemMB: 1024})
	plain := e.subscribe(t, frameworkInfo("plain", "r", ""))
	if o := plain.offer(e, "S0"); hasRevocable(o) {
		t.Fatalf("a framework without REVOCABLE_RESOURCES was offered %v", o.Resources)
	}
	e = newEmulated(t, AgentSpec{ID: "S0", CPU: 1, MemMB: 1024, RevocableCPU: 4, RevocableMemMB: 1024})
	f := e.subscribe(t, frameworkInfo("f", "r", "", mesos.FrameworkInfo_Capability_REVOCABLE_RESOURCES, mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	o := f.offer(e, "S0")
	if !hasRevocable(o) {
		t.Fatalf("no revocable resources offered: %v", o.Resources)
	}
	f.accept(o, launchOp(commandTask("best-effort", "S0", map[string]string{EnvDuration: "1h"}, revocable("cpus", 3, "r"), revocable("mem", 512, "r"))))
	waitUpdate(e, f, "best-effort", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING })
	if err := e.m.SetRevocable("S0", 1, 1024); err != nil {
		t.Fatal(err)
	}
	st := waitUpdate(e, f, "best-effort", func(mesos.TaskStatus) bool { return true })
	if st.GetState() != mesos.TASK_GONE || st.GetReason() != mesos.REASON_CONTAINER_PREEMPTED {
		t.Errorf("after the slack shrank: %v %v", st.GetState(), st.GetReason())
	}
}
