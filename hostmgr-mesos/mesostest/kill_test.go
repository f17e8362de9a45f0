package mesostest

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func killCall(task string, grace time.Duration) *scheduler.Call {
	c := &scheduler.Call{Type: scheduler.Call_KILL, Kill: &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: task}, AgentID: &mesos.AgentID{Value: "S0"}}}
	if grace >= 0 {
		c.Kill.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: grace.Nanoseconds()}}
	}
	return c
}

// A KILL sends TASK_KILLING to a framework with TASK_KILLING_STATE; a
// command that ignores SIGTERM ends TASK_KILLED when the task's kill
// policy grace period ends, one that exits on SIGTERM ends at once, and a
// KILL's own kill policy overrides the task's. A framework without the
// capability never sees TASK_KILLING.
func TestKillHonoursKillPolicyAndTaskKilling(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	f := e.subscribe(t, frameworkInfo("f", "r", "", mesos.FrameworkInfo_Capability_TASK_KILLING_STATE))
	stubborn := commandTask("stubborn", "S0", map[string]string{EnvDuration: "1h", EnvStopDelay: "1h"}, scalar("cpus", 1, "r"))
	stubborn.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: (600 * time.Millisecond).Nanoseconds()}}
	polite := commandTask("polite", "S0", map[string]string{EnvDuration: "1h", EnvStopDelay: "100ms"}, scalar("cpus", 1, "r"))
	f.accept(f.offer(e, "S0"), launchOp(stubborn, polite))
	isRunning := func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING }
	waitUpdate(e, f, "stubborn", isRunning)
	waitUpdate(e, f, "polite", isRunning)

	killedAt := e.clk.Now()
	if code := f.call(killCall("stubborn", -1)); code != 202 {
		t.Fatalf("KILL answered %d", code)
	}
	killing := waitUpdate(e, f, "stubborn", func(mesos.TaskStatus) bool { return true })
	if killing.GetState() != mesos.TASK_KILLING || len(killing.UUID) == 0 {
		t.Fatalf("first update after KILL: %v (uuid %v), want a reliable TASK_KILLING", killing.GetState(), killing.UUID)
	}
	killed := waitUpdate(e, f, "stubborn", func(mesos.TaskStatus) bool { return true })
	if took := e.clk.Now().Sub(killedAt); killed.GetState() != mesos.TASK_KILLED || took < 600*time.Millisecond || took > time.Second {
		t.Errorf("stubborn task: %v after %v (%q), want TASK_KILLED at the 600ms grace", killed.GetState(), took, killed.GetMessage())
	}
	if killed.GetMessage() != "Command terminated with signal Killed" {
		t.Errorf("escalated kill message %q", killed.GetMessage())
	}

	killedAt = e.clk.Now()
	f.call(killCall("polite", 10*time.Second))
	waitUpdate(e, f, "polite", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_KILLING })
	done := waitUpdate(e, f, "polite", func(mesos.TaskStatus) bool { return true })
	if took := e.clk.Now().Sub(killedAt); done.GetState() != mesos.TASK_KILLED || took > 300*time.Millisecond {
		t.Errorf("polite task: %v after %v, want TASK_KILLED once it exits (100ms)", done.GetState(), took)
	}

	// Without TASK_KILLING_STATE: straight to TASK_KILLED, after the
	// default grace period when the command ignores SIGTERM; a second
	// KILL with a shorter grace period cuts it short.
	e = newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	g := e.subscribe(t, frameworkInfo("g", "r", ""))
	g.accept(g.offer(e, "S0"), launchOp(commandTask("plain", "S0", map[string]string{EnvDuration: "1h", EnvStopDelay: "1h"}, scalar("cpus", 1, "r"))))
	waitUpdate(e, g, "plain", isRunning)
	killedAt = e.clk.Now()
	g.call(killCall("plain", -1))
	e.tick(time.Second)
	if code := g.call(killCall("plain", 0)); code != 202 {
		t.Fatalf("second KILL answered %d", code)
	}
	end := waitUpdate(e, g, "plain", func(mesos.TaskStatus) bool { return true })
	if took := e.clk.Now().Sub(killedAt); end.GetState() != mesos.TASK_KILLED || took >= DefaultKillGrace {
		t.Errorf("plain task: %v after %v, want TASK_KILLED cut short by the second KILL", end.GetState(), took)
	}
}
