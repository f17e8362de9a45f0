package goalstate

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// base is a batch task's run 2 ending, with three attempts, 1 s doubling
// to 1 min, not in a gang.
func base(mod ...func(*RunEnd)) RunEnd {
	in := RunEnd{
		Instance:  3,
		Run:       2,
		Ended:     model.TaskFailed,
		EndReason: model.ReasonExitNonZero,
		Message:   "exit 1",
		Type:      model.JobBatch,
		Policy:    RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Base: time.Second, Max: time.Minute}},
		Now:       t0,
	}
	for _, m := range mod {
		m(&in)
	}
	return in
}

func ended(s model.TaskState, reason, msg string) func(*RunEnd) {
	return func(in *RunEnd) { in.Ended, in.EndReason, in.Message = s, reason, msg }
}
func of(ty model.JobType) func(*RunEnd)     { return func(in *RunEnd) { in.Type = ty } }
func failures(n uint32) func(*RunEnd)       { return func(in *RunEnd) { in.Failures = n } }
func attempts(n uint32) func(*RunEnd)       { return func(in *RunEnd) { in.Policy.MaxAttempts = n } }
func prevReason(r string) func(*RunEnd)     { return func(in *RunEnd) { in.Reason = r } }
func retryAfter(at time.Time) func(*RunEnd) { return func(in *RunEnd) { in.RetryAfter = at } }
func stopping(in *RunEnd)                   { in.Stopping = true }
func gang(in *RunEnd)                       { in.Gang = true }
func gangRestart(in *RunEnd)                { in.Gang, in.Policy.GangRestart = true, true }
func restarting(in *RunEnd) {
	in.Restart = &GangRestart{Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement"}
}

func TestDecideRunEnd(t *testing.T) {
	earlier := t0.Add(-time.Hour)
	cases := []struct {
		name string
		in   RunEnd
		want RunEndDecision
	}{
		// Not the end of a run.
		{"running is no end", base(ended(model.TaskRunning, "", "")),
			RunEndDecision{Action: RunEndNone}},

		// A gang being restarted: its members' ends are counted, nothing else.
		{"restart: killed member", base(restarting, ended(model.TaskKilled, model.ReasonKilled, "killed")),
			RunEndDecision{Action: RunEndGangMember, State: model.TaskKilled, Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement; killed"}},
		{"restart: lost member records killed", base(restarting, ended(model.TaskLost, model.ReasonHostLost, "gone")),
			RunEndDecision{Action: RunEndGangMember, State: model.TaskKilled, Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement; gone"}},
		{"restart: failed member records failed, no failure counted", base(restarting, failures(1)),
			RunEndDecision{Action: RunEndGangMember, State: model.TaskFailed, Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement; exit 1", Failures: 1}},
		{"restart: succeeded member records succeeded", base(restarting, ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndGangMember, State: model.TaskSucceeded, Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement; exit 0"}},
		{"restart wins over the stop goal", base(restarting, stopping, ended(model.TaskKilled, model.ReasonKilled, "killed")),
			RunEndDecision{Action: RunEndGangMember, State: model.TaskKilled, Reason: model.ReasonPreempted, Message: "preempted: pool over entitlement; killed"}},

		// The goal is to stop: the task ends, whatever it is.
		{"stop: killed keeps the stop's reason", base(stopping, prevReason(model.ReasonKilled), ended(model.TaskKilled, "", "signal 15")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskKilled, Reason: model.ReasonKilled, Message: "signal 15"}},
		{"stop: lost ends killed", base(stopping, prevReason(model.ReasonKilled), ended(model.TaskLost, model.ReasonHostLost, "gone")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskKilled, Reason: model.ReasonHostLost, Message: "gone"}},
		{"stop: failed ends failed, not counted", base(stopping, failures(1)),
			RunEndDecision{Action: RunEndFinish, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 1}},
		{"stop: a service ends too", base(stopping, of(model.JobService), ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskSucceeded, Reason: model.ReasonExitZero, Message: "exit 0"}},
		{"stop: retry time kept", base(stopping, retryAfter(earlier), ended(model.TaskKilled, model.ReasonKilled, "")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskKilled, Reason: model.ReasonKilled, RetryAfter: earlier}},

		// A service runs again, whatever way its run ended.
		{"service: exit 0 runs again after the base", base(of(model.JobService), ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying,
				Message: "run 2 SUCCEEDED (exit 0); a service runs again after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"service: first failure waits the base", base(of(model.JobService)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 1,
				Message: "run 2 FAILED (exit 1); a service runs again after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"service: third failure waits 4 s", base(of(model.JobService), failures(2)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 3,
				Message: "run 2 FAILED (exit 1); a service runs again after 4s", RetryAfter: t0.Add(4 * time.Second), Delay: 4 * time.Second}},
		{"service: ignores max attempts and caps the backoff", base(of(model.JobService), failures(20)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 21,
				Message: "run 2 FAILED (exit 1); a service runs again after 1m0s", RetryAfter: t0.Add(time.Minute), Delay: time.Minute}},
		{"service: exit 0 after failures keeps their backoff", base(of(model.JobService), failures(3), ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 3,
				Message: "run 2 SUCCEEDED (exit 0); a service runs again after 4s", RetryAfter: t0.Add(4 * time.Second), Delay: 4 * time.Second}},
		{"service: killed counts as a failure", base(of(model.JobService), ended(model.TaskKilled, model.ReasonKilled, "oom")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 1,
				Message: "run 2 KILLED (oom); a service runs again after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"stateful runs again like a service", base(of(model.JobStateful)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 1,
				Message: "run 2 FAILED (exit 1); a service runs again after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"daemon runs again like a service", base(of(model.JobDaemon), failures(1)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 2,
				Message: "run 2 FAILED (exit 1); a service runs again after 2s", RetryAfter: t0.Add(2 * time.Second), Delay: 2 * time.Second}},
		{"service: lost relaunches at once, not counted", base(of(model.JobService), failures(2), retryAfter(earlier), ended(model.TaskLost, model.ReasonHostLost, "host gone")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonHostLost, Failures: 2,
				Message: "run 2 lost (host gone); relaunching"}},
		{"service in a gang: exit 0 ends the task", base(of(model.JobService), gangRestart, ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskSucceeded, Reason: model.ReasonExitZero, Message: "exit 0"}},
		{"service in a gang: failure restarts the gang", base(of(model.JobService), gangRestart),
			RunEndDecision{Action: RunEndRestartGang, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Failures: 1,
				Message: "run 2 FAILED (exit 1); retry 1 of 2 after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second,
				GangReason: ReasonGangRestart, GangMessage: "instance 3 failed: exit 1"}},

		// Batch.
		{"batch: success ends the task", base(ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskSucceeded, Reason: model.ReasonExitZero, Message: "exit 0"}},
		{"batch: first failure retried after the base", base(),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 1,
				Message: "run 2 FAILED (exit 1); retry 1 of 2 after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"batch: second failure retried after 2 s", base(failures(1)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 2,
				Message: "run 2 FAILED (exit 1); retry 2 of 2 after 2s", RetryAfter: t0.Add(2 * time.Second), Delay: 2 * time.Second}},
		{"batch: gives up at max attempts", base(failures(2), retryAfter(earlier)),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 3, RetryAfter: earlier}},
		{"batch: killed by the host counts as a failure", base(ended(model.TaskKilled, "OOM", "out of memory")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 1,
				Message: "run 2 KILLED (out of memory); retry 1 of 2 after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second}},
		{"batch: one attempt gives up at once", base(attempts(1)),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 1}},
		{"batch: zero attempts gives up at once", base(attempts(0)),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 1}},
		{"batch: backoff capped", base(attempts(100), failures(30)),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonRetrying, Failures: 31,
				Message: "run 2 FAILED (exit 1); retry 31 of 99 after 1m0s", RetryAfter: t0.Add(time.Minute), Delay: time.Minute}},
		{"batch: lost relaunches at once, not counted", base(failures(2), retryAfter(earlier), ended(model.TaskLost, model.ReasonHostLost, "host gone")),
			RunEndDecision{Action: RunEndRelaunch, State: model.TaskInitialized, Reason: model.ReasonHostLost, Failures: 2,
				Message: "run 2 lost (host gone); relaunching"}},

		// Gangs.
		{"gang restart: failure restarts the gang", base(gangRestart),
			RunEndDecision{Action: RunEndRestartGang, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Failures: 1,
				Message: "run 2 FAILED (exit 1); retry 1 of 2 after 1s", RetryAfter: t0.Add(time.Second), Delay: time.Second,
				GangReason: ReasonGangRestart, GangMessage: "instance 3 failed: exit 1"}},
		{"gang restart: last attempt fails the gang", base(gangRestart, failures(2)),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 3, StopGang: true}},
		{"gang without restart: a failure fails the gang", base(gang),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 1, StopGang: true}},
		{"gang: lost member restarts the gang at once", base(gang, retryAfter(earlier), ended(model.TaskLost, model.ReasonHostLost, "host gone")),
			RunEndDecision{Action: RunEndRestartGang, State: model.TaskLost, Reason: model.ReasonHostLost, Message: "host gone",
				GangReason: model.ReasonHostLost, GangMessage: "instance 3 lost: host gone"}},
		{"gang: success ends the member", base(gang, ended(model.TaskSucceeded, model.ReasonExitZero, "exit 0")),
			RunEndDecision{Action: RunEndFinish, State: model.TaskSucceeded, Reason: model.ReasonExitZero, Message: "exit 0"}},

		// Which reason the task keeps.
		{"reason: a bare kill keeps the one asked for", base(attempts(1), prevReason("HOST_DRAINED"), ended(model.TaskKilled, model.ReasonKilled, "")),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: "HOST_DRAINED", Failures: 1}},
		{"reason: no reason keeps the one asked for", base(attempts(1), prevReason(model.ReasonPreempted), ended(model.TaskKilled, "", "")),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonPreempted, Failures: 1}},
		{"reason: a kill with nothing before is recorded", base(attempts(1), ended(model.TaskKilled, model.ReasonKilled, "")),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonKilled, Failures: 1}},
		{"reason: a real reason replaces the old", base(attempts(1), prevReason(model.ReasonRetrying)),
			RunEndDecision{Action: RunEndGiveUp, State: model.TaskFailed, Reason: model.ReasonExitNonZero, Message: "exit 1", Failures: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DecideRunEnd(c.in); got != c.want {
				t.Errorf("DecideRunEnd\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// The same input gives the same decision, and the input is left alone.
func TestDecideRunEndIsPure(t *testing.T) {
	r := &GangRestart{Reason: "R", Message: "M"}
	in := base(gangRestart, failures(1), func(in *RunEnd) { in.Restart = r })
	cp, rcp := in, *r
	a, b := DecideRunEnd(in), DecideRunEnd(in)
	if a != b {
		t.Fatalf("two answers: %+v, %+v", a, b)
	}
	if in != cp || *r != rcp {
		t.Fatalf("input changed")
	}
}

func TestRunEndActionNames(t *testing.T) {
	for a := RunEndNone; a <= RunEndGangMember; a++ {
		if s := a.String(); s == "" || s[0] == 'R' {
			t.Errorf("action %d has no name: %q", a, s)
		}
	}
	if s := RunEndAction(99).String(); s != "RunEndAction(99)" {
		t.Errorf("unknown action %q", s)
	}
}
