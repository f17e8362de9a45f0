package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/internal/lease"
)

var _ store.LeaseStore = (*Store)(nil)

// AcquireLease takes the named lease for holder for ttl if it is free,
// expired or already held by holder (then it renews and keeps its term).
// A new holder gets the next term. ErrConflict when another holder has it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	if err := s.leaseCall(ctx); err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	if err := lease.Check(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	t := s.leases()
	return t.Acquire(name, holder, ttl, t.NextLatest(name))
}

// RenewLease extends a lease held by holder at term for ttl from now;
// ErrConflict if it expired or was taken by another.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := s.leaseCall(ctx); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	if err := lease.Check(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	return s.leases().Renew(name, holder, term, ttl)
}

// ReleaseLease frees a lease held by holder at term; nothing happens when
// it is not.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := s.leaseCall(ctx); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	if err := lease.Check(name, holder, time.Nanosecond); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	s.leases().Release(name, holder, term)
	return nil
}

// LeaseHolder returns the holder and term of an unexpired lease, or ""
// and 0 when it is free.
func (s *Store) LeaseHolder(ctx context.Context, name string) (string, uint64, error) {
	if err := s.leaseCall(ctx); err != nil {
		return "", 0, fmt.Errorf("lease %s: %w", name, err)
	}
	if name == "" {
		return "", 0, fmt.Errorf("lease: %w: lease name is empty", store.ErrInvalid)
	}
	holder, term := s.leases().Holder(name)
	return holder, term, nil
}

// SetLeaseClock makes the store's leases expire by now instead of the wall
// clock; tests pass a fake clock's Now.
func (s *Store) SetLeaseClock(now func() time.Time) { s.leases().SetClock(now) }

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

// leases is the process's leases on the store's state, which its views
// share: who holds each, until when, and the last term each lease was
// given (Latest).
func (s *Store) leases() *lease.Table { return lease.For(s.state) }
