package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreatePool stores a new pool with Revision 1 and sets pool.Revision to 1.
func (s *Store) CreatePool(ctx context.Context, pool *model.Pool) error {
	if err := codec.CheckPool(pool); err != nil {
		return fmt.Errorf("create pool: %w", err)
	}
	key, value := []byte(pool.Path), encodePool(pool, 1)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		pools := tx.Bucket(poolsBucket)
		if pools.Get(key) != nil {
			return store.ErrExists
		}
		return pools.Put(key, value)
	})
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
	key, value := []byte(pool.Path), encodePool(pool, pool.Revision+1)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		pools := tx.Bucket(poolsBucket)
		old := pools.Get(key)
		if old == nil {
			return store.ErrNotFound
		}
		rev, err := storedRevision(old, poolRecordVersion)
		if err != nil {
			return err
		}
		if rev != pool.Revision {
			return fmt.Errorf("stored revision %d, given %d: %w", rev, pool.Revision, store.ErrConflict)
		}
		return pools.Put(key, value)
	})
	if err != nil {
		return fmt.Errorf("update pool %s: %w", pool.Path, err)
	}
	pool.Revision++
	return nil
}

// DeletePool removes a pool. Its descendants, if any, are left alone: the
// tree's shape is the resource manager's business.
func (s *Store) DeletePool(ctx context.Context, path string) error {
	if err := codec.CheckPoolPath(path); err != nil {
		return fmt.Errorf("delete pool: %w", err)
	}
	key := []byte(path)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		pools := tx.Bucket(poolsBucket)
		if pools.Get(key) == nil {
			return store.ErrNotFound
		}
		return pools.Delete(key)
	})
	if err != nil {
		return fmt.Errorf("delete pool %s: %w", path, err)
	}
	return nil
}

// ListPools returns every pool ordered by path, in byte order, so a pool
// always comes before its descendants.
func (s *Store) ListPools(ctx context.Context) ([]*model.Pool, error) {
	var pools []*model.Pool
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(poolsBucket).ForEach(func(k, v []byte) error {
			pool, err := decodePool(string(k), v)
			if err != nil {
				return err
			}
			pools = append(pools, pool)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list pools: %w", err)
	}
	return pools, nil
}
