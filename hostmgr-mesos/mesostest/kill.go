package mesostest

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// EnvStopDelay is how long an emulated task's command takes to exit after
// SIGTERM (a Go duration; 0, the default, exits at once). A task whose
// stop delay is longer than its kill grace period is killed with SIGKILL
// when the grace period ends.
const EnvStopDelay = "PELOTON_SIM_STOP_DELAY"

// DefaultKillGrace is the grace period of the command executor when
// neither the task's kill policy nor the KILL call names one (Mesos's
// src/launcher/executor.cpp: 3 seconds, kept for backwards
// compatibility).
const DefaultKillGrace = 3 * time.Second

// killer is a task's kill state, as the command executor keeps it: the
// kill policy's grace period from its TaskInfo (negative: none), how long
// its command takes to exit after SIGTERM, and, once a KILL arrived,
// whether the command is being killed and whether it will take SIGKILL.
type killer struct {
	policy    time.Duration
	stopDelay time.Duration
	killing   bool
	escalated bool
}

// killMessage is the message of a killed task's TASK_KILLED.
func (k *killer) killMessage() string {
	if k.escalated {
		return "Command terminated with signal Killed"
	}
	return "Command terminated with signal Terminated"
}

// kill carries out KILL (scheduler.proto, Call.Kill): an unknown task is
// answered TASK_LOST; a task not running yet ends TASK_KILLED at the next
// tick; a running one gets SIGTERM, and TASK_KILLING when its framework
// has the TASK_KILLING_STATE capability, and ends TASK_KILLED when its
// command exits or, at the latest, when the grace period ends (SIGKILL).
// The grace period is the KILL's kill policy, else the task's, else
// DefaultKillGrace; a later KILL with a kill policy can shorten it.
func (m *Master) kill(fw *framework, k *scheduler.Call_Kill, now time.Time) {
	t := fw.tasks[k.TaskID.Value]
	if t == nil {
		agentID := ""
		if k.AgentID != nil {
			agentID = k.AgentID.Value
		}
		reason := mesos.REASON_RECONCILIATION
		m.masterUpdate(fw, k.TaskID.Value, agentID, mesos.TASK_LOST, &reason, "Attempted to kill an unknown task")
		return
	}
	if t.terminal() || t.agent.unreachable {
		return // an unreachable agent never hears of the kill
	}
	if t.state != mesos.TASK_RUNNING && t.state != mesos.TASK_KILLING {
		m.schedule(t, phaseKill, now)
		return
	}
	grace := DefaultKillGrace
	override := k.KillPolicy.GetGracePeriod()
	switch {
	case override != nil:
		grace = max(time.Duration(override.GetNanoseconds()), 0)
	case t.killing:
		return // killed already; only a new kill policy changes anything
	case t.policy >= 0:
		grace = t.policy
	}
	exit, escalated := now.Add(t.stopDelay), t.stopDelay > grace
	if escalated {
		exit = now.Add(grace)
	}
	if t.killing && !exit.Before(t.due) {
		return
	}
	if !t.endAt.IsZero() && t.endAt.Before(exit) {
		// The command ends on its own first; the executor reports it
		// killed all the same, as it sent the signal.
		exit, escalated = t.endAt, false
	}
	if !t.killing && fw.killingState {
		t.state = mesos.TASK_KILLING
		m.agentUpdate(t, mesos.TASK_KILLING, nil, "Command is being killed")
	}
	t.killing, t.escalated = true, escalated
	m.schedule(t, phaseKill, exit)
}
