package memstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/peloton-federated/peloton/shard/store"
)

var _ store.LeaseStore = (*Store)(nil)

// AcquireLease takes the named lease for holder for ttl if it is free,
// expired or already held by holder (then it renews and keeps its term).
// A new holder gets the next term. ErrConflict when another holder has it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	if err := s.leaseCall(ctx); err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return s.leases().acquire(name, holder, ttl)
}

// RenewLease extends a lease held by holder at term for ttl from now;
// ErrConflict if it expired or was taken by another.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := s.leaseCall(ctx); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	return s.leases().renew(name, holder, term, ttl)
}

// ReleaseLease frees a lease held by holder at term; nothing happens when
// it is not.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := s.leaseCall(ctx); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return s.leases().release(name, holder, term)
}

// LeaseHolder returns the holder and term of an unexpired lease, or ""
// and 0 when it is free.
func (s *Store) LeaseHolder(ctx context.Context, name string) (string, uint64, error) {
	if err := s.leaseCall(ctx); err != nil {
		return "", 0, fmt.Errorf("lease %s: %w", name, err)
	}
	return s.leases().current(name)
}

// SetLeaseClock makes the store's leases expire by now instead of the wall
// clock; tests pass a fake clock's Now.
func (s *Store) SetLeaseClock(now func() time.Time) {
	t := s.leases()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.now = now
}

func (s *Store) leaseCall(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// leaseTables keeps each Store's leases beside it, keyed weakly so that a
// table goes away with its store.
var leaseTables sync.Map // weak.Pointer[state] -> *leaseTable

func (s *Store) leases() *leaseTable {
	key := weak.Make(s.state)
	if t, ok := leaseTables.Load(key); ok {
		return t.(*leaseTable)
	}
	t, loaded := leaseTables.LoadOrStore(key, &leaseTable{
		now:    time.Now,
		held:   make(map[string]heldLease),
		latest: make(map[string]uint64),
	})
	if !loaded {
		runtime.AddCleanup(s.state, func(k weak.Pointer[state]) { leaseTables.Delete(k) }, key)
	}
	return t.(*leaseTable)
}

// heldLease is a lease taken and not yet released.
type heldLease struct {
	holder  string
	term    uint64
	expires time.Time
}

// leaseTable is the process's leases: who holds each, until when, and the
// last term each lease was given.
type leaseTable struct {
	mu     sync.Mutex
	now    func() time.Time
	held   map[string]heldLease
	latest map[string]uint64
}

func checkLease(name, holder string, ttl time.Duration) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: lease name is empty", store.ErrInvalid)
	case holder == "":
		return fmt.Errorf("%w: lease %s: holder is empty", store.ErrInvalid, name)
	case ttl <= 0:
		return fmt.Errorf("%w: lease %s: ttl %v is not positive", store.ErrInvalid, name, ttl)
	}
	return nil
}

// live returns the unexpired lease on name, if any.
func (t *leaseTable) live(name string, now time.Time) (heldLease, bool) {
	l, ok := t.held[name]
	if !ok || !now.Before(l.expires) {
		return heldLease{}, false
	}
	return l, true
}

func (t *leaseTable) acquire(name, holder string, ttl time.Duration) (uint64, error) {
	if err := checkLease(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if l, ok := t.live(name, now); ok {
		if l.holder != holder {
			return 0, fmt.Errorf("acquire lease %s: held by %s at term %d: %w", name, l.holder, l.term, store.ErrConflict)
		}
		l.expires = now.Add(ttl)
		t.held[name] = l
		return l.term, nil
	}
	t.latest[name]++
	term := t.latest[name]
	t.held[name] = heldLease{holder: holder, term: term, expires: now.Add(ttl)}
	return term, nil
}

func (t *leaseTable) renew(name, holder string, term uint64, ttl time.Duration) error {
	if err := checkLease(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	l, ok := t.live(name, now)
	if !ok || l.holder != holder || l.term != term {
		return fmt.Errorf("renew lease %s for %s at term %d: no longer held: %w", name, holder, term, store.ErrConflict)
	}
	l.expires = now.Add(ttl)
	t.held[name] = l
	return nil
}

func (t *leaseTable) release(name, holder string, term uint64) error {
	if err := checkLease(name, holder, time.Nanosecond); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.held[name]; ok && l.holder == holder && l.term == term {
		delete(t.held, name)
	}
	return nil
}

func (t *leaseTable) current(name string) (string, uint64, error) {
	if name == "" {
		return "", 0, fmt.Errorf("lease: %w: lease name is empty", store.ErrInvalid)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.live(name, t.now())
	if !ok {
		return "", 0, nil
	}
	return l.holder, l.term, nil
}
