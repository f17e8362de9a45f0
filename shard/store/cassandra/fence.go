package cassandra

import (
	"context"
	"fmt"
	"sync"

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
	name   string
	term   uint64
	checks fenceChecks
}

// Check rounds are shared. Every write of a view checks the fence, and
// every check is a Paxos round on the one lease_terms row: run one round
// per write and concurrent writers contend for that row, each retrying
// its round, so that they advance about one at a time. Instead a writer
// joins the round in flight, if any, before its write (the check before a
// write only narrows the window fence.go describes, which is open anyway),
// and after its write, where the check must see the write's effects
// (confirmFence), it waits for the next round to start: every writer that
// finished its write meanwhile shares that one.

// fenceRound is one check of the fence, shared by whoever waits for it.
type fenceRound struct {
	done chan struct{}
	err  error
}

// fenceChecks runs a view's check rounds one at a time.
type fenceChecks struct {
	mu      sync.Mutex
	current *fenceRound // in flight, nil when none is
	queued  *fenceRound // starts when current ends
}

// before returns the outcome of the round in flight, or of a new one.
func (c *fenceChecks) before(ctx context.Context, check func(context.Context) error) error {
	return c.joinBefore(check).wait(ctx)
}

// after returns the outcome of a round that starts after it was called.
func (c *fenceChecks) after(ctx context.Context, check func(context.Context) error) error {
	return c.joinAfter(check).wait(ctx)
}

// joinBefore returns the round in flight, or a new one.
func (c *fenceChecks) joinBefore(check func(context.Context) error) *fenceRound {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current == nil {
		return c.start(check)
	}
	return c.current
}

// joinAfter returns a round that starts now or once the one in flight
// ended.
func (c *fenceChecks) joinAfter(check func(context.Context) error) *fenceRound {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.current == nil:
		return c.start(check)
	case c.queued == nil:
		c.queued = &fenceRound{done: make(chan struct{})}
	}
	return c.queued
}

// start makes a new round the one in flight and runs it, then the rounds
// queued behind it; callers hold c.mu. A round is not any caller's: it
// runs to its end, bounded by the store's request timeout, whoever stops
// waiting.
func (c *fenceChecks) start(check func(context.Context) error) *fenceRound {
	r := &fenceRound{done: make(chan struct{})}
	c.current = r
	go func() {
		for r != nil {
			r.err = check(context.Background())
			close(r.done)
			c.mu.Lock()
			r, c.queued = c.queued, nil
			c.current = r
			c.mu.Unlock()
		}
	}()
	return r
}

// wait returns the round's outcome, or ctx's error if it ends first.
func (r *fenceRound) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
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
// with a conditional write, in the round in flight if there is one.
func (s *Store) beginWrite(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if s.fence == nil {
		return nil
	}
	return s.fence.checks.before(ctx, s.checkFence)
}

// checkFence checks the fence with a conditional write: applied only while
// the view's term is the newest recorded.
func (s *Store) checkFence(ctx context.Context) error {
	f := s.fence
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
