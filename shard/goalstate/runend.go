package goalstate

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Reasons the core records on tasks, besides the model's own.
const (
	// ReasonGangRestart: a member of the task's gang failed and the job
	// restarts its gangs whole.
	ReasonGangRestart = "GANG_RESTART"
)

// RetryPolicy is how a job retries its failed runs.
type RetryPolicy struct {
	// MaxAttempts is how many runs may fail before the task fails for
	// good; lost runs do not count.
	MaxAttempts uint32
	Backoff     Backoff
	// GangRestart: a gang whose member failed restarts whole; without it
	// the failure of a member fails the gang.
	GangRestart bool
}

// GangRestart is a restart of the task's gang in progress (a preemption, a
// drain, a gang restart, an unhealthy member): the run was killed for it.
type GangRestart struct {
	Reason  string
	Message string
}

// RunEnd is everything the decision at the end of a run looks at.
type RunEnd struct {
	// The task as it stood when its run ended.
	Instance uint32
	Run      uint32
	// Reason is the reason recorded on the task before the end (a stop
	// records KILLED_BY_USER before the kill comes back).
	Reason     string
	Failures   uint32
	RetryAfter time.Time
	// Stopping: the task's goal is to stop (the job or the task was
	// stopped, or its gang failed).
	Stopping bool

	// How the run ended: a terminal state, its reason and message.
	Ended     model.TaskState
	EndReason string
	Message   string

	// The job.
	Type   model.JobType
	Policy RetryPolicy
	// Gang: the task belongs to a gang of more than one.
	Gang bool
	// Restart is the restart of the task's gang in progress, if any.
	Restart *GangRestart

	Now time.Time
}

// RunEndAction is what the shell does with a task whose run ended.
type RunEndAction uint8

const (
	// RunEndNone: the state reached is not the end of a run; nothing to do.
	RunEndNone RunEndAction = iota
	// RunEndFinish: the task ends in State (it succeeded, or it was
	// stopped).
	RunEndFinish
	// RunEndGiveUp: the run failed and no attempt is left; the task ends
	// FAILED. With StopGang the rest of its gang is stopped too.
	RunEndGiveUp
	// RunEndRelaunch: the task starts a new run, not before RetryAfter.
	RunEndRelaunch
	// RunEndRestartGang: the run is recorded in State and the whole gang
	// restarts, with GangReason and GangMessage.
	RunEndRestartGang
	// RunEndGangMember: the run was killed by the restart of its gang; it
	// is recorded in State and the restart has one member less to wait for.
	RunEndGangMember
)

var runEndActionNames = [...]string{"none", "finish", "give-up", "relaunch", "restart-gang", "gang-member"}

func (a RunEndAction) String() string {
	if int(a) < len(runEndActionNames) {
		return runEndActionNames[a]
	}
	return fmt.Sprintf("RunEndAction(%d)", uint8(a))
}

// RunEndDecision is what follows the end of a run, and what the task
// records of it.
type RunEndDecision struct {
	Action RunEndAction
	// State is the state the ended run is recorded in (INITIALIZED for a
	// relaunch: the task starts its next run).
	State model.TaskState
	// Reason and Message are the task's after the decision.
	Reason  string
	Message string
	// Failures is the task's count of failed runs after this one.
	Failures uint32
	// RetryAfter is when the task may run again (zero: at once); Delay is
	// the backoff it came from.
	RetryAfter time.Time
	Delay      time.Duration
	// StopGang (with RunEndGiveUp): the rest of the gang stops.
	StopGang bool
	// GangReason and GangMessage (with RunEndRestartGang) are recorded on
	// the gang's members.
	GangReason  string
	GangMessage string
}

// DecideRunEnd decides what follows the end of a task's run: a retry after
// a backoff, a relaunch, a gang restart, giving up, or the end of the task.
//
// In order: a run killed by its gang's restart waits for the rest of the
// gang; a task whose goal is to stop ends; a long-running instance that is
// not in a gang runs again whatever way its run ended, after the backoff of
// its failures so far (an exit that was not a success counts as one); a
// success ends a batch task; a failure is retried until the job's max
// attempts (a gang restarts whole when the job says so, else it fails
// whole); a lost run is relaunched at once and does not count as a
// failure, and a lost gang member restarts its gang.
func DecideRunEnd(in RunEnd) RunEndDecision {
	d := RunEndDecision{
		Reason:     recordedReason(in.Reason, in.EndReason),
		Message:    in.Message,
		Failures:   in.Failures,
		RetryAfter: in.RetryAfter,
	}
	if !in.Ended.IsTerminal() {
		return d
	}
	// What a run that was stopped rather than ended by itself records.
	stopped := in.Ended
	if stopped != model.TaskSucceeded && stopped != model.TaskFailed {
		stopped = model.TaskKilled
	}
	switch {
	case in.Restart != nil:
		d.Action, d.State = RunEndGangMember, stopped
		d.Reason, d.Message = in.Restart.Reason, in.Restart.Message+"; "+in.Message
		return d
	case in.Stopping:
		d.Action, d.State = RunEndFinish, stopped
		return d
	}
	longRunning := in.Type != model.JobBatch
	if longRunning && !in.Gang && in.Ended != model.TaskLost {
		// A service runs until it is stopped.
		if in.Ended != model.TaskSucceeded {
			d.Failures++
		}
		d.relaunchAfter(in, in.Policy.Backoff.Delay(d.Failures))
		d.Reason = model.ReasonRetrying
		d.Message = fmt.Sprintf("run %d %s (%s); a service runs again after %s", in.Run, in.Ended, in.Message, d.Delay)
		return d
	}
	switch in.Ended {
	case model.TaskSucceeded:
		d.Action, d.State = RunEndFinish, model.TaskSucceeded
	case model.TaskFailed, model.TaskKilled:
		d.failed(in)
	case model.TaskLost:
		d.lost(in)
	}
	return d
}

// failed decides for a run of a batch task or a gang member that failed
// (or was killed by something other than a stop): a retry after the
// backoff, a gang restart, or giving up.
func (d *RunEndDecision) failed(in RunEnd) {
	d.Failures++
	retry := d.Failures < in.Policy.MaxAttempts
	if !retry || (in.Gang && !in.Policy.GangRestart) {
		d.Action, d.State, d.StopGang = RunEndGiveUp, model.TaskFailed, in.Gang
		return
	}
	d.relaunchAfter(in, in.Policy.Backoff.Delay(d.Failures))
	d.Message = fmt.Sprintf("run %d %s (%s); retry %d of %d after %s", in.Run, in.Ended, in.Message, d.Failures, in.Policy.MaxAttempts-1, d.Delay)
	if in.Gang {
		d.Action, d.State = RunEndRestartGang, model.TaskFailed
		d.GangReason = ReasonGangRestart
		d.GangMessage = fmt.Sprintf("instance %d failed: %s", in.Instance, in.Message)
		return
	}
	d.Reason = model.ReasonRetrying
}

// lost decides for a lost run: it runs again at once and does not count
// as a failure, so every task runs to a terminal state at least once; a
// lost gang member restarts its gang.
func (d *RunEndDecision) lost(in RunEnd) {
	d.RetryAfter, d.Delay = time.Time{}, 0
	if in.Gang {
		d.Action, d.State = RunEndRestartGang, model.TaskLost
		d.GangReason = in.EndReason
		d.GangMessage = fmt.Sprintf("instance %d lost: %s", in.Instance, in.Message)
		return
	}
	d.Action, d.State = RunEndRelaunch, model.TaskInitialized
	d.Message = fmt.Sprintf("run %d lost (%s); relaunching", in.Run, in.Message)
}

// relaunchAfter makes d a relaunch after delay.
func (d *RunEndDecision) relaunchAfter(in RunEnd, delay time.Duration) {
	d.Action, d.State = RunEndRelaunch, model.TaskInitialized
	d.Delay, d.RetryAfter = delay, in.Now.Add(delay)
}

// recordedReason is the reason a task keeps when its run ends: the end's,
// unless the end says no more than "killed" and the task already has one
// (the kill a preemption, drain or stop asked for).
func recordedReason(prev, end string) string {
	if prev == "" || (end != model.ReasonKilled && end != "") {
		return end
	}
	return prev
}
