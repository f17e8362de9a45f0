package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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

// PutHosts stores copies of host records in one batch; a nil record or one
// without an id writes nothing.
func (s *Store) PutHosts(ctx context.Context, hosts []*model.HostRecord) error {
	if err := codec.CheckHosts(hosts); err != nil {
		return fmt.Errorf("put hosts: %w", err)
	}
	staged := make([]*model.HostRecord, len(hosts))
	for i, h := range hosts {
		staged[i] = cloneHost(h)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, h := range staged {
		s.hosts[h.Host.ID] = h
	}
	return nil
}

// GetHost returns a copy of a host's record.
func (s *Store) GetHost(ctx context.Context, id model.HostID) (*model.HostRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	h, ok := s.hosts[id]
	if !ok {
		return nil, fmt.Errorf("host %s: %w", id, store.ErrNotFound)
	}
	return cloneHost(h), nil
}

// ListHosts returns copies of every host record ordered by id.
func (s *Store) ListHosts(ctx context.Context) ([]*model.HostRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]*model.HostRecord, 0, len(s.hosts))
	for _, h := range s.hosts {
		out = append(out, cloneHost(h))
	}
	slices.SortFunc(out, func(a, b *model.HostRecord) int { return cmp.Compare(a.Host.ID, b.Host.ID) })
	return out, nil
}

// DeleteHost forgets a host.
func (s *Store) DeleteHost(ctx context.Context, id model.HostID) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.hosts, id)
	return nil
}
