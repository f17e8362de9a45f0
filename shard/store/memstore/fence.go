package memstore

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/store"
)

// Fencing: a fence is the newest term recorded for a lease name, by
// AcquireLease or by Fence. A view made by Fence checks it under the
// store's write lock, before it changes anything.

var _ store.Fencer = (*Store)(nil)

// fence is the lease a view's writes are fenced by.
type fence struct {
	name string
	term uint64
}

// Fence records term as the newest of name and returns a view of the
// store whose writes fail with store.ErrFenced once a newer term is
// recorded.
func (s *Store) Fence(ctx context.Context, name string, term uint64) (store.Store, error) {
	if name == "" || term == 0 {
		return nil, fmt.Errorf("fence: %w: name %q, term %d: both are required", store.ErrInvalid, name, term)
	}
	if err := s.leaseCall(ctx); err != nil {
		return nil, fmt.Errorf("fence %s: %w", name, err)
	}
	t := s.leases()
	t.Lock()
	defer t.Unlock()
	if stored := t.Latest[name]; stored > term {
		return nil, fmt.Errorf("fence %s at term %d: %w: term %d is recorded", name, term, store.ErrFenced, stored)
	}
	t.Latest[name] = term
	return &Store{state: s.state, fence: &fence{name: name, term: term}}, nil
}

// checkFence refuses a write of a view whose term is no longer the newest;
// the caller holds the write lock.
func (s *Store) checkFence() error {
	if s.fence == nil {
		return nil
	}
	t := s.leases()
	t.Lock()
	defer t.Unlock()
	if stored := t.Latest[s.fence.name]; stored > s.fence.term {
		return fmt.Errorf("%w: %s is at term %d, this writer at %d", store.ErrFenced, s.fence.name, stored, s.fence.term)
	}
	return nil
}
