package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// ErrJobFinished: the operation needs a job that has not finished.
var ErrJobFinished = errors.New("job has finished")

// CloseUpdateRecord ends an update that is not (or no longer) its job's
// running one; the next pass writes its record. Callers hold e.mu.
func (b rolloutBook) CloseUpdateRecord(e *State, u *model.Update, st model.UpdateState, msg string, now time.Time) {
	u.State, u.Message, u.CompletionTime = st, msg, now
	e.endedUpdates = append(e.endedUpdates, u)
}

// EndUpdate ends the job's running update; the loop writes it.
func (b rolloutBook) EndUpdate(e *State, je *Job, st model.UpdateState, msg string, now time.Time) {
	ro := b[je.Job.ID]
	if ro == nil || !ro.End(st, msg, now) {
		return
	}
	if ro.Update.CanaryExtra {
		// Extra canaries left are beyond the count: they go under the SLA.
		if c := je.Configs[je.Job.ConfigVersion]; c != nil && je.Job.Spec.Instances != c.Spec.Instances {
			je.Job.Spec.Instances = c.Spec.Instances
			je.Dirty, je.Record = true, true
		}
	}
	e.Log.Info("job update ended", "job", je.Job.ID, "update", ro.Update.ID, "state", st, "message", msg)
}

// UpdateEntry is the job entry of the job an update id names (nil if the
// engine does not have it); the caller holds the lock.
func (b rolloutBook) UpdateEntry(e *State, id model.UpdateID) (*Job, error) {
	job, _, ok := id.Parse()
	if !ok {
		return nil, fmt.Errorf("update id %q: want <job>.<version>: %w", id, ErrInvalid)
	}
	return e.Jobs[job], nil
}

// SyncExtraCanaries keeps the job's instance count at what its update
// runs (rollout.Job.Instances): its target's, plus the extra canaries
// until the promotion.
func (b rolloutBook) SyncExtraCanaries(je *Job, ro *rollout.Job) {
	if !ro.Update.CanaryExtra {
		return
	}
	c := je.Configs[ro.Target()]
	if c == nil {
		return
	}
	want := ro.Instances(c.Spec.Instances)
	if want > c.Spec.Instances {
		ro.Track(c.Spec.Instances, want-c.Spec.Instances) // a failing extra canary counts
	}
	if je.Job.Spec.Instances != want {
		je.Job.Spec.Instances = want
		je.Dirty, je.Record = true, true
	}
}
