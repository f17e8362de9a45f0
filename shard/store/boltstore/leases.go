package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/internal/lease"
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
	if err := lease.Check(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return s.leases().Acquire(name, holder, ttl, func() (uint64, error) { return s.nextLeaseTerm(ctx, name) })
}

// RenewLease extends a lease held by holder at term for ttl from now;
// ErrConflict if it expired or was taken by another.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := lease.Check(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	return s.leases().Renew(name, holder, term, ttl)
}

// ReleaseLease frees a lease held by holder at term; nothing happens when
// it is not.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := lease.Check(name, holder, time.Nanosecond); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	if err := s.view(ctx, noop); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	s.leases().Release(name, holder, term)
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
	holder, term := s.leases().Holder(name)
	return holder, term, nil
}

// SetLeaseClock makes the store's leases expire by now instead of the wall
// clock; tests pass a fake clock's Now.
func (s *Store) SetLeaseClock(now func() time.Time) { s.leases().SetClock(now) }

// leases is the process's held leases on the store (on its base, for a
// view).
func (s *Store) leases() *lease.Table { return lease.For(s.base()) }

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
