package memstore

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreateUpdate stores a new update of an existing job with Revision 1 and
// sets u.Revision to 1.
func (s *Store) CreateUpdate(ctx context.Context, u *model.Update) error {
	return updateKind.create(ctx, s, s.updates, u)
}

// WriteUpdate replaces an update whose stored revision equals u.Revision
// and increments u.Revision. An update's job never changes.
func (s *Store) WriteUpdate(ctx context.Context, u *model.Update) error {
	return updateKind.write(ctx, s, s.updates, u)
}

// GetUpdate returns a copy of an update.
func (s *Store) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	return updateKind.get(ctx, s, s.updates, id)
}

// ListUpdates returns copies of a job's updates, oldest first (by create
// time, then id); ErrNotFound if the job does not exist.
func (s *Store) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if _, ok := s.jobs[job]; !ok {
		return nil, fmt.Errorf("updates of job %s: %w", job, store.ErrNotFound)
	}
	return updateKind.list(s.updates, func(u *model.Update) bool { return u.Job == job }, codec.CompareUpdates)
}
