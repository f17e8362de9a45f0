package core

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// countFailures records instances that failed on the config the update
// moves them to: a run that failed, or a health check that failed, after
// the update restarted them. Past MaxFailures the update fails and, when
// it was asked to, rolls back. It reports whether the update stopped
// rolling forward this pass.
func (b rolloutBook) countFailures(e *State, je *Job, ro *rollout.Job, now time.Time) bool {
	verdict, why := ro.CountFailures(func(inst uint32) *model.TaskRuntime {
		if int(inst) >= len(je.Tasks) || IsCold(je.Tasks[inst]) {
			return nil
		}
		return je.Tasks[inst]
	})
	switch verdict {
	case rollout.Fail:
		b.EndUpdate(e, je, model.UpdateFailed, why, now)
	case rollout.RollBack:
		if err := b.StartRollback(e, je, ro, why, now); err != nil {
			b.EndUpdate(e, je, model.UpdateFailed, why+" failed: "+err.Error(), now)
		}
	default:
		return false
	}
	return true
}

// StartRollback turns the job's update around: the job's config becomes
// the update's FromVersion again, and the loop moves instances back with
// the same batch size and SLA.
func (b rolloutBook) StartRollback(e *State, je *Job, ro *rollout.Job, why string, now time.Time) error {
	u := ro.Update
	old := je.Configs[u.FromVersion] // kept since the update started or was recovered
	if old == nil {
		return fmt.Errorf("config %d of the job is not held: %w", u.FromVersion, ErrUpdateState)
	}
	spec := *old.Spec
	if je.Job.Spec.Type == model.JobDaemon {
		spec.Instances = je.Job.Spec.Instances
	}
	cur := je.Current()
	je.Configs[je.Job.ConfigVersion] = NewConfigView(cur.Spec)
	je.Job.Spec, je.Job.ConfigVersion = spec, u.FromVersion
	je.Configs[u.FromVersion] = NewConfigView(je.SpecCopy())
	je.Record = true
	ro.RollBack(why)
	e.Queue.Sched.SetJobLimit(je.Job.ID, spec.MaxRunning)
	e.Visit(je)
	e.Log.Info("job update rolling back", "job", je.Job.ID, "update", u.ID, "to", u.FromVersion, "why", why)
	return nil
}

// ErrUpdateState: the update is not in a state the operation needs.
var ErrUpdateState = fmt.Errorf("update state: %w", ErrInvalid)
