// Package lease holds the lease rules the stores that keep leases in
// process memory (memstore, boltstore) share: when a lease is free,
// expired or held by a holder, and when a holder gets a new term.
package lease

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/peloton-federated/peloton/shard/store"
)

// held is a lease taken and not yet released.
type held struct {
	holder  string
	term    uint64
	expires time.Time
}

// Table is the leases held in this process on one store: who holds each
// and until when.
type Table struct {
	// Mutex guards the table; its methods take it, a caller that reads or
	// writes Latest takes it too.
	sync.Mutex
	now  func() time.Time
	held map[string]held
	// Latest is the last term given for each lease, for a store that keeps
	// terms in memory only.
	Latest map[string]uint64
}

// tables keeps each store's Table beside it, keyed weakly so that a table
// goes away with its store.
var tables sync.Map // weak.Pointer[T] -> *Table

// For returns the Table of the store owner, made on first use.
func For[T any](owner *T) *Table {
	key := weak.Make(owner)
	if t, ok := tables.Load(key); ok {
		return t.(*Table)
	}
	t, loaded := tables.LoadOrStore(key, &Table{
		now:    time.Now,
		held:   make(map[string]held),
		Latest: make(map[string]uint64),
	})
	if !loaded {
		runtime.AddCleanup(owner, func(k weak.Pointer[T]) { tables.Delete(k) }, key)
	}
	return t.(*Table)
}

// SetClock makes the table's leases expire by now instead of the wall
// clock.
func (t *Table) SetClock(now func() time.Time) {
	t.Lock()
	defer t.Unlock()
	t.now = now
}

// live returns the unexpired lease on name, if any; the caller holds the
// lock.
func (t *Table) live(name string, now time.Time) (held, bool) {
	l, ok := t.held[name]
	if !ok || !now.Before(l.expires) {
		return held{}, false
	}
	return l, true
}

// Acquire takes the named lease for holder for ttl if it is free, expired
// or already held by holder (then it renews and keeps its term). A new
// holder gets the term next returns, which is called under the lock.
// ErrConflict when another holder has it.
func (t *Table) Acquire(name, holder string, ttl time.Duration, next func() (uint64, error)) (uint64, error) {
	t.Lock()
	defer t.Unlock()
	now := t.now()
	if l, ok := t.live(name, now); ok {
		if l.holder != holder {
			return 0, fmt.Errorf("acquire lease %s: held by %s at term %d: %w", name, l.holder, l.term, store.ErrConflict)
		}
		l.expires = now.Add(ttl)
		t.held[name] = l
		return l.term, nil
	}
	term, err := next()
	if err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	t.held[name] = held{holder: holder, term: term, expires: now.Add(ttl)}
	return term, nil
}

// NextLatest counts the named lease's term up in Latest and returns it: the
// next term of a store that keeps terms in memory only. The caller holds
// the lock (Acquire does).
func (t *Table) NextLatest(name string) func() (uint64, error) {
	return func() (uint64, error) {
		t.Latest[name]++
		return t.Latest[name], nil
	}
}

// Renew extends a lease held by holder at term for ttl from now;
// ErrConflict if it expired or was taken by another.
func (t *Table) Renew(name, holder string, term uint64, ttl time.Duration) error {
	t.Lock()
	defer t.Unlock()
	now := t.now()
	l, ok := t.live(name, now)
	if !ok || l.holder != holder || l.term != term {
		return fmt.Errorf("renew lease %s for %s at term %d: no longer held: %w", name, holder, term, store.ErrConflict)
	}
	l.expires = now.Add(ttl)
	t.held[name] = l
	return nil
}

// Release frees a lease held by holder at term; nothing happens when it is
// not.
func (t *Table) Release(name, holder string, term uint64) {
	t.Lock()
	defer t.Unlock()
	if l, ok := t.held[name]; ok && l.holder == holder && l.term == term {
		delete(t.held, name)
	}
}

// Holder returns the holder and term of an unexpired lease, or "" and 0
// when it is free.
func (t *Table) Holder(name string) (string, uint64) {
	t.Lock()
	defer t.Unlock()
	l, ok := t.live(name, t.now())
	if !ok {
		return "", 0
	}
	return l.holder, l.term
}

// Check checks a lease call's arguments: ErrInvalid for an empty name or
// holder or a ttl that is not positive.
func Check(name, holder string, ttl time.Duration) error {
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
