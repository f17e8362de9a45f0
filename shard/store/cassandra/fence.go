package cassandra

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/store"
)

// Fencing. A fence is a lease's row in lease_terms: the newest term
// recorded for the name, by AcquireLease or by Fence. A view made by Fence
// runs, before each write, a conditional write on that row,
// "UPDATE lease_terms SET term = t WHERE name = n IF term = t": a Paxos
// round that is applied only while t is still the newest term. Cassandra
// cannot make that condition and a write to another partition one
// transaction, so a writer paused between its check and its write can
// still land that one write after a takeover; every later write is
// refused. The window is one write long, where without the check it is
// unbounded. Revisioned records need nothing more (the new leader's next
// compare-and-set finds the stray write), but a new job would be stored
// where the new leader never looks: CreateJobs checks the fence once more
// after its writes and does not answer a job created unless it held
// (confirmFence).

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
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("fence %s: %w", name, err)
	}
	q := s.leaseCQL()
	for range maxLeaseRounds {
		stored, found, err := s.readLeaseTerm(ctx, q, name)
		if err != nil {
			return nil, fmt.Errorf("fence %s: %w", name, err)
		}
		if stored > term {
			return nil, fmt.Errorf("fence %s at term %d: %w: term %d is recorded", name, term, store.ErrFenced, stored)
		}
		applied := true
		switch {
		case !found:
			applied, err = s.query(ctx, q.insertTerm, name, int64(term)).MapScanCAS(map[string]any{})
		case stored < term:
			applied, err = s.query(ctx, q.bumpTerm, int64(term), name, int64(stored)).MapScanCAS(map[string]any{})
		}
		if err != nil {
			return nil, fmt.Errorf("fence %s: %w", name, s.classify(ctx, err))
		}
		if applied {
			return &Store{cfg: s.cfg, session: s.session, q: s.q, closed: s.closed, specs: s.specs, partitions: s.partitions, knownDays: s.knownDays,
				fence: &fence{name: name, term: term}}, nil
		}
	}
	return nil, fmt.Errorf("fence %s: changed %d times while fencing: %w", name, maxLeaseRounds, store.ErrConflict)
}

// beginWrite is begin for a write: on a view, it also checks the fence
// with a conditional write.
func (s *Store) beginWrite(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	f := s.fence
	if f == nil {
		return nil
	}
	q := s.leaseCQL()
	prev := map[string]any{}
	applied, err := s.query(ctx, q.bumpTerm, int64(f.term), f.name, int64(f.term)).MapScanCAS(prev)
	if err != nil {
		return s.classify(ctx, err)
	}
	if !applied {
		stored, _ := prev["term"].(int64)
		return fmt.Errorf("%w: %s is at term %d, this writer at %d", store.ErrFenced, f.name, stored, f.term)
	}
	return nil
}
