package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"time"
	"weak"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
)

// Leases. A bbolt file is open in one process at a time, so a lease is an
// in-process lease: who holds it and until when live in memory, beside the
// Store. Only each lease's last term is written to the file (bucket
// "lease_terms", created on first use), so terms keep increasing across
// restarts and stay usable as fencing tokens.

var leaseTermsBucket = []byte("lease_terms")

var _ store.LeaseStore = (*Store)(nil)

// AcquireLease takes the named lease for holder for ttl if it is free,
// expired or already held by holder (then it renews and keeps its term).
// A new holder gets the next term. ErrConflict when another holder has it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	if err := checkLease(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	t := s.leases()
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
	term, err := s.nextLeaseTerm(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	t.held[name] = heldLease{holder: holder, term: term, expires: now.Add(ttl)}
	return term, nil
}

// RenewLease extends a lease held by holder at term for ttl from now;
// ErrConflict if it expired or was taken by another.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := checkLease(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	t := s.leases()
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

// ReleaseLease frees a lease held by holder at term; nothing happens when
// it is not.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := checkLease(name, holder, time.Nanosecond); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	t := s.leases()
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.held[name]; ok && l.holder == holder && l.term == term {
		delete(t.held, name)
	}
	return nil
}

// LeaseHolder returns the holder and term of an unexpired lease, or ""
// and 0 when it is free.
func (s *Store) LeaseHolder(ctx context.Context, name string) (string, uint64, error) {
	if name == "" {
		return "", 0, fmt.Errorf("lease: %w: lease name is empty", store.ErrInvalid)
	}
	if err := s.view(ctx, noop); err != nil {
		return "", 0, fmt.Errorf("lease %s: %w", name, err)
	}
	t := s.leases()
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.live(name, t.now())
	if !ok {
		return "", 0, nil
	}
	return l.holder, l.term, nil
}

// SetLeaseClock makes the store's leases expire by now instead of the wall
// clock; tests pass a fake clock's Now.
func (s *Store) SetLeaseClock(now func() time.Time) {
	t := s.leases()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.now = now
}

// nextLeaseTerm increments the lease's stored term and returns it.
func (s *Store) nextLeaseTerm(ctx context.Context, name string) (uint64, error) {
	var term uint64
	err := s.base().update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(leaseTermsBucket)
		if err != nil {
			return err
		}
		last, err := storedTerm(b, name)
		if err != nil {
			return err
		}
		term = last + 1
		return b.Put([]byte(name), binary.BigEndian.AppendUint64(nil, term))
	})
	return term, err
}

func noop(*bolt.Tx) error { return nil }

// leaseTables keeps each Store's held leases beside it, keyed weakly so
// that a table goes away with its store.
var leaseTables sync.Map // weak.Pointer[Store] -> *leaseTable

func (s *Store) leases() *leaseTable {
	s = s.base()
	key := weak.Make(s)
	if t, ok := leaseTables.Load(key); ok {
		return t.(*leaseTable)
	}
	t, loaded := leaseTables.LoadOrStore(key, &leaseTable{now: time.Now, held: make(map[string]heldLease)})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[Store]) { leaseTables.Delete(k) }, key)
	}
	return t.(*leaseTable)
}

// heldLease is a lease taken and not yet released.
type heldLease struct {
	holder  string
	term    uint64
	expires time.Time
}

// leaseTable is the process's held leases on one store.
type leaseTable struct {
	mu   sync.Mutex
	now  func() time.Time
	held map[string]heldLease
}

// live returns the unexpired lease on name, if any.
func (t *leaseTable) live(name string, now time.Time) (heldLease, bool) {
	l, ok := t.held[name]
	if !ok || !now.Before(l.expires) {
		return heldLease{}, false
	}
	return l, true
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
