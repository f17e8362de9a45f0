package mesostest

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func probedTask(id string, failures uint32) mesos.TaskInfo {
	ti := commandTask(id, "S0", map[string]string{EnvDuration: "1h"}, scalar("cpus", 1, "r"))
	delay, every, grace := 0.05, 0.05, 0.0
	ti.HealthCheck = &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 31000},
		DelaySeconds: &delay, IntervalSeconds: &every, GracePeriodSeconds: &grace, ConsecutiveFailures: &failures}
	ti.Check = &mesos.CheckInfo{Type: mesos.CheckInfo_TCP, TCP: &mesos.CheckInfo_Tcp{Port: 31000}, DelaySeconds: &delay, IntervalSeconds: &every}
	return ti
}

// waitUpdate lets time pass in steps until the task's next update matches.
func waitUpdate(e *emulated, f *testFramework, task string, ok func(mesos.TaskStatus) bool) mesos.TaskStatus {
	f.t.Helper()
	for i := 0; i < 100; i++ {
		e.tick(20 * time.Millisecond)
		for j, ev := range f.backlog {
			if ev.Type == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == task {
				f.backlog = append(f.backlog[:j], f.backlog[j+1:]...)
				st := ev.Update.Status
				f.ack(st)
				if ok(st) {
					return st
				}
				break
			}
		}
		select {
		case ev := <-f.events:
			f.backlog = append(f.backlog, ev)
		case <-time.After(5 * time.Millisecond):
		}
	}
	f.t.Fatalf("no matching update of %s", task)
	return mesos.TaskStatus{}
}

// The health verdict flows back as TASK_RUNNING with healthy set after
// the check's delay; the agent switch turns it unhealthy, and enough
// failures in a row kill the task with healthy false. The check reports
// its result in check_status, empty before the first.
func TestHealthChecksAndChecksReport(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	f := e.subscribe(t, frameworkInfo("f", "r", ""))
	f.accept(f.offer(e, "S0"), launchOp(probedTask("h1", 3)))

	running := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING })
	if running.Healthy != nil || running.CheckStatus == nil || running.CheckStatus.TCP == nil || running.CheckStatus.TCP.Succeeded != nil {
		t.Errorf("first RUNNING: healthy %v check %v, want no verdict and an empty check result", running.Healthy, running.CheckStatus)
	}
	healthy := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.Healthy != nil })
	if !*healthy.Healthy || healthy.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED || healthy.GetState() != mesos.TASK_RUNNING {
		t.Errorf("health update %v %v healthy=%v", healthy.GetState(), healthy.GetReason(), *healthy.Healthy)
	}
	ready := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.GetReason() == mesos.REASON_TASK_CHECK_STATUS_UPDATED })
	if !ready.CheckStatus.TCP.GetSucceeded() {
		t.Errorf("check update %v", ready.CheckStatus)
	}
	e.m.SetTaskReady("h1", false)
	notReady := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.GetReason() == mesos.REASON_TASK_CHECK_STATUS_UPDATED })
	if notReady.CheckStatus.TCP.GetSucceeded() || notReady.GetState() != mesos.TASK_RUNNING {
		t.Errorf("failed check update %v %v", notReady.GetState(), notReady.CheckStatus)
	}

	if err := e.m.SetAgentHealthy("S0", false); err != nil {
		t.Fatal(err)
	}
	unhealthy := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.Healthy != nil && !*st.Healthy })
	if unhealthy.GetState() != mesos.TASK_RUNNING {
		t.Errorf("first unhealthy update is %v", unhealthy.GetState())
	}
	killed := waitUpdate(e, f, "h1", func(st mesos.TaskStatus) bool { return st.GetState() != mesos.TASK_RUNNING })
	if killed.GetState() != mesos.TASK_KILLED || killed.Healthy == nil || *killed.Healthy {
		t.Errorf("after 3 failed checks: %v healthy=%v %q", killed.GetState(), killed.Healthy, killed.GetMessage())
	}
	if e.m.Stats().HealthKills != 1 {
		t.Errorf("health kills = %d", e.m.Stats().HealthKills)
	}

	// A task-level switch wins over the agent's.
	e.m.SetTaskHealthy("h2", true)
	f.accept(f.offer(e, "S0"), launchOp(probedTask("h2", 1)))
	st := waitUpdate(e, f, "h2", func(st mesos.TaskStatus) bool { return st.Healthy != nil })
	if !*st.Healthy {
		t.Error("task switch healthy lost to the agent switch")
	}
}
