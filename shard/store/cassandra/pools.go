package cassandra

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
	if err := codec.CheckPool(pool); err != nil {
		return fmt.Errorf("create pool: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("create pool %s: %w", pool.Path, err)
	}
	err := s.insertNew(ctx, s.q.createPool, pool.Path, int64(1), codec.EncodePool(pool, 1))
	if err != nil {
		return fmt.Errorf("create pool %s: %w", pool.Path, err)
	}
	pool.Revision = 1
	return nil
}

// UpdatePool replaces a pool whose stored revision equals pool.Revision and
// increments pool.Revision.
func (s *Store) UpdatePool(ctx context.Context, pool *model.Pool) error {
	if err := codec.CheckPool(pool); err != nil {
		return fmt.Errorf("update pool: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("update pool %s: %w", pool.Path, err)
	}
	err := s.compareAndSet(ctx, s.q.updatePool, pool.Revision, nil,
		int64(pool.Revision+1), codec.EncodePool(pool, pool.Revision+1), pool.Path, int64(pool.Revision))
	if err != nil {
		return fmt.Errorf("update pool %s: %w", pool.Path, err)
	}
	pool.Revision++
	return nil
}

// DeletePool removes a pool; its descendants are left alone.
func (s *Store) DeletePool(ctx context.Context, path string) error {
	if err := codec.CheckPoolPath(path); err != nil {
		return fmt.Errorf("delete pool: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("delete pool %s: %w", path, err)
	}
	applied, err := s.query(ctx, s.q.deletePool, path).MapScanCAS(map[string]any{})
	if err != nil {
		return fmt.Errorf("delete pool %s: %w", path, s.classify(ctx, err))
	}
	if !applied {
		return fmt.Errorf("delete pool %s: %w", path, store.ErrNotFound)
	}
	return nil
}

// ListPools returns every pool ordered by path, in byte order, so a pool
// always comes before its descendants.
func (s *Store) ListPools(ctx context.Context) ([]*model.Pool, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list pools: %w", err)
	}
	iter := s.query(ctx, s.q.listPools).Iter()
	var (
		pools  []*model.Pool
		path   string
		record []byte
		decErr error
	)
	for iter.Scan(&path, &record) {
		if record == nil {
			continue
		}
		pool, err := codec.DecodePool(path, record)
		if err != nil {
			decErr = cmp.Or(decErr, err)
			continue
		}
		pools = append(pools, pool)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("list pools: %w", s.classify(ctx, err))
	}
	if decErr != nil {
		return nil, fmt.Errorf("list pools: %w", decErr)
	}
	slices.SortFunc(pools, func(a, b *model.Pool) int { return cmp.Compare(a.Path, b.Path) })
	return pools, nil
}
