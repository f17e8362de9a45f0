package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// control runs op on the job's running update named id, under the
// engine's lock, and returns a copy of it after.
func (s *updateShell) control(ctx context.Context, id model.UpdateID, op func(je *core.Job, ro *rollout.Job, now time.Time) error) (*model.Update, error) {
	s.e.lock()
	je, err := s.e.c.Rollouts.UpdateEntry(&s.e.c, id)
	if err == nil && je == nil {
		err = fmt.Errorf("update %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	ro := s.e.c.Rollouts[je.Job.ID]
	if ro == nil || ro.Update.ID != id {
		s.e.mu.Unlock()
		return nil, fmt.Errorf("update %s is not the job's running update (it ended): %w", id, core.ErrUpdateState)
	}
	u := ro.Update
	if err := op(je, ro, s.e.cfg.Clock.Now()); err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	ro.Dirty = true
	s.e.c.Visit(je)
	cp := *u
	wait := s.e.awaitWrite()
	s.e.mu.Unlock()
	if err := wait(ctx); err != nil {
		return nil, fmt.Errorf("store update %s: %w", id, err)
	}
	return &cp, nil
}

// pause stops a running update from starting new batches; batches
// in flight finish.
func (s *updateShell) pause(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return s.control(ctx, id, func(je *core.Job, ro *rollout.Job, now time.Time) error {
		u := ro.Update
		if u.State.IsTerminal() {
			return fmt.Errorf("update %s is %s: only a running update can be paused: %w", id, u.State, core.ErrUpdateState)
		}
		u.Paused = true
		return nil
	})
}

// resume lets a paused update go on.
func (s *updateShell) resume(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return s.control(ctx, id, func(je *core.Job, ro *rollout.Job, now time.Time) error {
		u := ro.Update
		if !u.Paused {
			return fmt.Errorf("update %s is not paused: %w", id, core.ErrUpdateState)
		}
		u.Paused = false
		return nil
	})
}

// promote ends a running update's canary phase.
func (s *updateShell) promote(ctx context.Context, id model.UpdateID, by string) (*model.Update, error) {
	return s.control(ctx, id, func(je *core.Job, ro *rollout.Job, now time.Time) error {
		if err := ro.Promote(by); err != nil {
			return fmt.Errorf("%w: %w", err, core.ErrUpdateState)
		}
		s.e.c.Log.Info("job update promoted", "job", je.Job.ID, "update", id, "by", by)
		return nil
	})
}

// rollback moves the instances of a running update back to its
// FromVersion, with the same batch size and SLA.
func (s *updateShell) rollback(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return s.control(ctx, id, func(je *core.Job, ro *rollout.Job, now time.Time) error {
		if u := ro.Update; u.State != model.UpdateRollingForward {
			return fmt.Errorf("update %s is %s: only an update rolling forward can be rolled back: %w", id, u.State, core.ErrUpdateState)
		}
		return s.e.c.Rollouts.StartRollback(&s.e.c, je, ro, "rolled back by an operator", now)
	})
}
