package jobmgr

import (
	"context"
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
func (e *Engine) countFailures(je *jobEntry, ro *rollout.Job, now time.Time) bool {
	verdict, why := ro.CountFailures(func(inst uint32) *model.TaskRuntime {
		if int(inst) >= len(je.tasks) || isCold(je.tasks[inst]) {
			return nil
		}
		return je.tasks[inst]
	})
	switch verdict {
	case rollout.Fail:
		e.endUpdate(je, model.UpdateFailed, why, now)
	case rollout.RollBack:
		if err := e.startRollback(je, ro, why, now); err != nil {
			e.endUpdate(je, model.UpdateFailed, why+" failed: "+err.Error(), now)
		}
	default:
		return false
	}
	return true
}

// startRollback turns the job's update around: the job's config becomes
// the update's FromVersion again, and the loop moves instances back with
// the same batch size and SLA.
func (e *Engine) startRollback(je *jobEntry, ro *rollout.Job, why string, now time.Time) error {
	u := ro.Update
	old := je.configs[u.FromVersion] // kept since the update started or was recovered
	if old == nil {
		return fmt.Errorf("config %d of the job is not held: %w", u.FromVersion, ErrUpdateState)
	}
	spec := *old.spec
	if je.job.Spec.Type == model.JobDaemon {
		spec.Instances = je.job.Spec.Instances
	}
	cur := je.current()
	je.configs[je.job.ConfigVersion] = newConfigView(cur.spec)
	je.job.Spec, je.job.ConfigVersion = spec, u.FromVersion
	je.configs[u.FromVersion] = newConfigView(je.specCopy())
	je.record = true
	ro.RollBack(why)
	e.sched.SetJobLimit(je.job.ID, spec.MaxRunning)
	e.visit(je)
	e.log.Info("job update rolling back", "job", je.job.ID, "update", u.ID, "to", u.FromVersion, "why", why)
	return nil
}

// ErrUpdateState: the update is not in a state the operation needs.
var ErrUpdateState = fmt.Errorf("update state: %w", ErrInvalid)

// controlUpdate runs op on the job's running update named id, under the
// engine's lock, and returns a copy of it after.
func (e *Engine) controlUpdate(ctx context.Context, id model.UpdateID, op func(je *jobEntry, ro *rollout.Job, now time.Time) error) (*model.Update, error) {
	e.lock()
	je, err := e.updateEntry(id)
	if err == nil && je == nil {
		err = fmt.Errorf("update %s: %w", id, ErrNotFound)
	}
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	ro := e.rollouts[je.job.ID]
	if ro == nil || ro.Update.ID != id {
		e.mu.Unlock()
		return nil, fmt.Errorf("update %s is not the job's running update (it ended): %w", id, ErrUpdateState)
	}
	u := ro.Update
	if err := op(je, ro, e.cfg.Clock.Now()); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	ro.Dirty = true
	e.visit(je)
	cp := *u
	wait := e.awaitWrite()
	e.mu.Unlock()
	if err := wait(ctx); err != nil {
		return nil, fmt.Errorf("store update %s: %w", id, err)
	}
	return &cp, nil
}

// pauseUpdate stops a running update from starting new batches; batches
// in flight finish.
func (e *Engine) pauseUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, ro *rollout.Job, now time.Time) error {
		u := ro.Update
		if u.State.IsTerminal() {
			return fmt.Errorf("update %s is %s: only a running update can be paused: %w", id, u.State, ErrUpdateState)
		}
		u.Paused = true
		return nil
	})
}

// resumeUpdate lets a paused update go on.
func (e *Engine) resumeUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, ro *rollout.Job, now time.Time) error {
		u := ro.Update
		if !u.Paused {
			return fmt.Errorf("update %s is not paused: %w", id, ErrUpdateState)
		}
		u.Paused = false
		return nil
	})
}

// promoteUpdate ends a running update's canary phase.
func (e *Engine) promoteUpdate(ctx context.Context, id model.UpdateID, by string) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, ro *rollout.Job, now time.Time) error {
		if err := ro.Promote(by); err != nil {
			return fmt.Errorf("%w: %w", err, ErrUpdateState)
		}
		e.log.Info("job update promoted", "job", je.job.ID, "update", id, "by", by)
		return nil
	})
}

// rollbackUpdate moves the instances of a running update back to its
// FromVersion, with the same batch size and SLA.
func (e *Engine) rollbackUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, ro *rollout.Job, now time.Time) error {
		if u := ro.Update; u.State != model.UpdateRollingForward {
			return fmt.Errorf("update %s is %s: only an update rolling forward can be rolled back: %w", id, u.State, ErrUpdateState)
		}
		return e.startRollback(je, ro, "rolled back by an operator", now)
	})
}
