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

// CreatePool stores a new pool with Revision 1 and sets pool.Revision to 1.
func (s *Store) CreatePool(ctx context.Context, pool *model.Pool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := codec.CheckPool(pool); err != nil {
		return fmt.Errorf("create pool: %w", err)
	}
	stored := clonePool(pool)
	stored.Revision = 1
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.pools[pool.Path]; ok {
		return fmt.Errorf("create pool %s: %w", pool.Path, store.ErrExists)
	}
	s.pools[pool.Path] = stored
	pool.Revision = 1
	return nil
}

// UpdatePool replaces a pool whose stored revision equals pool.Revision and
// increments pool.Revision.
func (s *Store) UpdatePool(ctx context.Context, pool *model.Pool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := codec.CheckPool(pool); err != nil {
		return fmt.Errorf("update pool: %w", err)
	}
	stored := clonePool(pool)
	stored.Revision = pool.Revision + 1
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	old, ok := s.pools[pool.Path]
	if !ok {
		return fmt.Errorf("update pool %s: %w", pool.Path, store.ErrNotFound)
	}
	if old.Revision != pool.Revision {
		return fmt.Errorf("update pool %s: stored revision %d, given %d: %w",
			pool.Path, old.Revision, pool.Revision, store.ErrConflict)
	}
	s.pools[pool.Path] = stored
	pool.Revision = stored.Revision
	return nil
}

// DeletePool removes a pool. Its descendants, if any, are left alone: the
// tree's shape is the resource manager's business.
func (s *Store) DeletePool(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := codec.CheckPoolPath(path); err != nil {
		return fmt.Errorf("delete pool: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.pools[path]; !ok {
		return fmt.Errorf("delete pool %s: %w", path, store.ErrNotFound)
	}
	delete(s.pools, path)
	return nil
}

// ListPools returns copies of every pool ordered by path, in byte order,
// so a pool always comes before its descendants.
func (s *Store) ListPools(ctx context.Context) ([]*model.Pool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	out := make([]*model.Pool, 0, len(s.pools))
	for _, p := range s.pools {
		out = append(out, clonePool(p))
	}
	slices.SortFunc(out, func(a, b *model.Pool) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}
