package memstore

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreatePool stores a new pool with Revision 1 and sets pool.Revision to 1.
func (s *Store) CreatePool(ctx context.Context, pool *model.Pool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return poolKind.create(ctx, s, s.pools, pool)
}

// UpdatePool replaces a pool whose stored revision equals pool.Revision and
// increments pool.Revision.
func (s *Store) UpdatePool(ctx context.Context, pool *model.Pool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return poolKind.write(ctx, s, s.pools, pool)
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
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return poolKind.list(s.pools, nil, comparePools)
}
