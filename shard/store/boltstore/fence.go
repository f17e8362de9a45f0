package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
)

// Fencing. A fence is a lease's entry in the lease_terms bucket: the
// newest term recorded for that name, by AcquireLease or by Fence. A view
// made by Fence checks, inside every write transaction, that no newer
// term than its own is recorded; bbolt runs one write transaction at a
// time, so the check and the write are one atomic step.

var _ store.Fencer = (*Store)(nil)

// fence is the lease a view's writes are fenced by.
type fence struct {
	name string
	term uint64
}

// base is the store a view was made from, or s itself.
func (s *Store) base() *Store {
	if s.root != nil {
		return s.root
	}
	return s
}

// Fence records term as the newest of name and returns a view of the
// store whose writes fail with store.ErrFenced once a newer term is
// recorded.
func (s *Store) Fence(ctx context.Context, name string, term uint64) (store.Store, error) {
	if name == "" || term == 0 {
		return nil, fmt.Errorf("fence: %w: name %q, term %d: both are required", store.ErrInvalid, name, term)
	}
	root := s.base()
	err := root.update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(leaseTermsBucket)
		if err != nil {
			return err
		}
		stored, err := storedTerm(b, name)
		if err != nil {
			return err
		}
		switch {
		case stored > term:
			return fmt.Errorf("%w: term %d of %s is recorded, given %d", store.ErrFenced, stored, name, term)
		case stored < term:
			return b.Put([]byte(name), binary.BigEndian.AppendUint64(nil, term))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fence %s at term %d: %w", name, term, err)
	}
	return &Store{db: root.db, specs: root.specs, fence: &fence{name: name, term: term}, root: root, commits: root.commits}, nil
}

// fenced wraps a write transaction of a view with its fence check.
func (s *Store) fenced(fn func(tx *bolt.Tx) error) func(tx *bolt.Tx) error {
	f := s.fence
	if f == nil {
		return fn
	}
	return func(tx *bolt.Tx) error {
		var stored uint64
		if b := tx.Bucket(leaseTermsBucket); b != nil {
			var err error
			if stored, err = storedTerm(b, f.name); err != nil {
				return err
			}
		}
		if stored > f.term {
			return fmt.Errorf("%w: %s is at term %d, this writer at %d", store.ErrFenced, f.name, stored, f.term)
		}
		return fn(tx)
	}
}

// storedTerm reads a lease's recorded term (0 when none).
func storedTerm(b *bolt.Bucket, name string) (uint64, error) {
	switch v := b.Get([]byte(name)); len(v) {
	case 0:
		return 0, nil
	case 8:
		return binary.BigEndian.Uint64(v), nil
	default:
		return 0, fmt.Errorf("%w: lease %s: stored term has %d bytes", ErrCorrupt, name, len(v))
	}
}
