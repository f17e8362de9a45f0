package jobmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// countFailures records instances that failed on the config the update
// moves them to: a run that failed, or a health check that failed, after
// the update restarted them. Past MaxFailures the update fails and, when
// it was asked to, rolls back. It reports whether the update stopped
// rolling forward this pass.
func (e *Engine) countFailures(je *jobEntry, target uint64, now time.Time) bool {
	u := je.update
	if je.failBase == nil {
		je.failBase, je.failed = map[uint32]uint32{}, map[uint32]bool{}
	}
	for inst, base := range je.failBase {
		if int(inst) >= len(je.tasks) || je.failed[inst] {
			continue
		}
		t := je.tasks[inst]
		if t != nil && !isCold(t) && t.ConfigVersion == target && t.Failures > base {
			je.failed[inst] = true
		}
	}
	if n := uint32(len(je.failed)); u.State == model.UpdateRollingForward && n != u.InstancesFailed {
		u.InstancesFailed = n
		je.updateDirty = true
	}
	if u.State != model.UpdateRollingForward || u.InstancesFailed <= u.MaxFailures {
		return false
	}
	why := fmt.Sprintf("%d instances failed on config %d (at most %d allowed)", u.InstancesFailed, u.ToVersion, u.MaxFailures)
	if !u.RollbackOnFailure {
		e.endUpdate(je, model.UpdateFailed, why, now)
		return true
	}
	if err := e.startRollback(je, why+"; rolling back", now); err != nil {
		e.endUpdate(je, model.UpdateFailed, why+"; rolling back failed: "+err.Error(), now)
	}
	return true
}

// startRollback turns the job's update around: the job's config becomes
// the update's FromVersion again, and the loop moves instances back with
// the same batch size and SLA.
func (e *Engine) startRollback(je *jobEntry, why string, now time.Time) error {
	u := je.update
	old := je.configs[u.FromVersion]
	if old == nil {
		spec, err := e.cfg.Store.GetJobConfig(context.Background(), je.job.ID, u.FromVersion)
		if err != nil {
			return fmt.Errorf("config %d: %w", u.FromVersion, err)
		}
		old = newConfigView(spec)
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
	u.State, u.Message, u.Paused = model.UpdateRollingBack, why, false
	je.updateReason = why
	je.updating, je.failBase, je.failed = map[uint32]bool{}, map[uint32]uint32{}, map[uint32]bool{}
	je.updateDirty = true
	e.sched.SetJobLimit(je.job.ID, spec.MaxRunning)
	e.visit(je)
	e.log.Info("job update rolling back", "job", je.job.ID, "update", u.ID, "to", u.FromVersion, "why", why)
	return nil
}

// ErrUpdateState: the update is not in a state the operation needs.
var ErrUpdateState = fmt.Errorf("update state: %w", ErrInvalid)

// controlUpdate runs op on the job's running update named id, under the
// engine's lock, and returns a copy of it after.
func (e *Engine) controlUpdate(ctx context.Context, id model.UpdateID, op func(je *jobEntry, u *model.Update, now time.Time) error) (*model.Update, error) {
	e.lock()
	je, err := e.updateEntry(id)
	if err == nil && je == nil {
		err = fmt.Errorf("update %s: %w", id, ErrNotFound)
	}
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	u := je.update
	if u == nil || u.ID != id {
		e.mu.Unlock()
		return nil, fmt.Errorf("update %s is not the job's running update (it ended): %w", id, ErrUpdateState)
	}
	if err := op(je, u, e.cfg.Clock.Now()); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	je.updateDirty = true
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
	return e.controlUpdate(ctx, id, func(je *jobEntry, u *model.Update, now time.Time) error {
		if u.State.IsTerminal() {
			return fmt.Errorf("update %s is %s: only a running update can be paused: %w", id, u.State, ErrUpdateState)
		}
		u.Paused = true
		return nil
	})
}

// resumeUpdate lets a paused update go on.
func (e *Engine) resumeUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, u *model.Update, now time.Time) error {
		if !u.Paused {
			return fmt.Errorf("update %s is not paused: %w", id, ErrUpdateState)
		}
		u.Paused = false
		return nil
	})
}

// rollbackUpdate moves the instances of a running update back to its
// FromVersion, with the same batch size and SLA.
func (e *Engine) rollbackUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return e.controlUpdate(ctx, id, func(je *jobEntry, u *model.Update, now time.Time) error {
		if u.State != model.UpdateRollingForward {
			return fmt.Errorf("update %s is %s: only an update rolling forward can be rolled back: %w", id, u.State, ErrUpdateState)
		}
		return e.startRollback(je, "rolled back by an operator", now)
	})
}
