package cassandra

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// Leases (leader election) live in two tables of migration 1:
//
//	leases       name → holder, term, every write with a TTL, so a lease
//	             nobody renews disappears by itself;
//	lease_terms  name → the last term drawn, without TTL.
//
// Acquiring a free lease reads the last committed term L, inserts the
// lease IF NOT EXISTS with term L+1, then commits L+1 in lease_terms with
// a compare-and-set from L. Only a holder whose insert succeeded commits,
// so contenders that lose the insert change nothing. A commit that fails
// means another holder committed L+1 meanwhile: this insert landed after
// that holder's lease had ended, so it is given back and the answer is
// ErrConflict. Terms committed are therefore unique and increasing in
// commit order, and AcquireLease returns a new holder's term only after
// committing it. Every read of either table is a serial (Paxos) read, so
// it sees every compare-and-set before it.

var _ store.LeaseStore = (*Store)(nil)

// serialRead is LOCAL_SERIAL as a read's consistency: the read runs a
// Paxos round, so it sees every compare-and-set committed before it.
const serialRead = gocql.Consistency(gocql.LocalSerial)

// maxLeaseRounds bounds the retries of AcquireLease and of drawing a term
// when concurrent writers keep changing the row between a read and a
// compare-and-set.
const maxLeaseRounds = 5

// maxLeaseTTL is Cassandra's largest TTL (20 years), in seconds.
const maxLeaseTTL = 20 * 365 * 24 * 60 * 60

// leaseStatements are the lease CQL statements with the keyspace filled in.
type leaseStatements struct {
	getLease, insertLease, renewLease, deleteLease string
	getTerm, insertTerm, bumpTerm                  string
}

func (s *Store) leaseCQL() leaseStatements {
	f := func(format string) string { return fmt.Sprintf(format, s.cfg.Keyspace) }
	return leaseStatements{
		getLease:    f("SELECT holder, term FROM %s.leases WHERE name = ?"),
		insertLease: f("INSERT INTO %s.leases (name, holder, term) VALUES (?, ?, ?) IF NOT EXISTS USING TTL ?"),
		renewLease:  f("UPDATE %s.leases USING TTL ? SET holder = ?, term = ? WHERE name = ? IF holder = ? AND term = ?"),
		deleteLease: f("DELETE FROM %s.leases WHERE name = ? IF holder = ? AND term = ?"),
		getTerm:     f("SELECT term FROM %s.lease_terms WHERE name = ?"),
		insertTerm:  f("INSERT INTO %s.lease_terms (name, term) VALUES (?, ?) IF NOT EXISTS"),
		bumpTerm:    f("UPDATE %s.lease_terms SET term = ? WHERE name = ? IF term = ?"),
	}
}

func checkLease(name, holder string, ttl time.Duration) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: lease name is empty", store.ErrInvalid)
	case holder == "":
		return fmt.Errorf("%w: lease %s: holder is empty", store.ErrInvalid, name)
	case ttl <= 0 || ttl > maxLeaseTTL*time.Second:
		return fmt.Errorf("%w: lease %s: ttl %v out of range", store.ErrInvalid, name, ttl)
	}
	return nil
}

// ttlSeconds is the TTL written for ttl: whole seconds rounded up, plus
// one, because Cassandra computes a cell's expiry from the write time
// truncated to the second; the lease then lasts at least ttl.
func ttlSeconds(ttl time.Duration) int {
	secs := int((ttl + time.Second - 1) / time.Second)
	return min(secs+1, maxLeaseTTL)
}

// AcquireLease takes the named lease for holder for ttl if it is free or
// expired, or renews it if holder has it already (keeping its term). A
// new holder gets a term greater than any term given before. ErrConflict
// when another holder has it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	if err := checkLease(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return 0, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	q := s.leaseCQL()
	for range maxLeaseRounds {
		current, term, err := s.readLease(ctx, q, name)
		if err != nil {
			return 0, fmt.Errorf("acquire lease %s: %w", name, err)
		}
		var done bool
		switch current {
		case holder:
			done, err = s.reacquire(ctx, q, name, holder, term, ttl)
		case "":
			term, done, err = s.takeFree(ctx, q, name, holder, ttl)
		default:
			err = fmt.Errorf("held by %s at term %d: %w", current, term, store.ErrConflict)
		}
		if err != nil {
			return 0, fmt.Errorf("acquire lease %s: %w", name, err)
		}
		if done {
			return term, nil
		}
	}
	return 0, fmt.Errorf("acquire lease %s: changed %d times while acquiring: %w", name, maxLeaseRounds, store.ErrConflict)
}

// reacquire renews a lease that holder has at term, after checking that
// term is still the last one committed (a lease inserted but never
// committed, by a call that failed half way, is given back). done is
// false when the lease changed since it was read.
func (s *Store) reacquire(ctx context.Context, q leaseStatements, name, holder string, term uint64, ttl time.Duration) (done bool, err error) {
	last, _, err := s.readLeaseTerm(ctx, q, name)
	if err != nil {
		return false, err
	}
	if last != term {
		if err := s.deleteLease(ctx, q, name, holder, term); err != nil {
			return false, err
		}
		return false, fmt.Errorf("held by %s at term %d, but the last term is %d: given back: %w",
			holder, term, last, store.ErrConflict)
	}
	applied, err := s.query(ctx, q.renewLease, ttlSeconds(ttl), holder, int64(term), name, holder, int64(term)).
		MapScanCAS(map[string]any{})
	if err != nil {
		return false, s.classify(ctx, err)
	}
	return applied, nil
}

// takeFree inserts the lease for holder with the term after the last
// committed one, then commits that term in lease_terms. If the commit
// fails, a newer holder has committed the same or a later term since
// (this insert landed after its lease ended): the lease is given back and
// the answer is ErrConflict. done is false when the lease was taken for
// holder by a concurrent call (the caller renews it).
func (s *Store) takeFree(ctx context.Context, q leaseStatements, name, holder string, ttl time.Duration) (term uint64, done bool, err error) {
	last, found, err := s.readLeaseTerm(ctx, q, name)
	if err != nil {
		return 0, false, err
	}
	term = last + 1
	prev := map[string]any{}
	applied, err := s.query(ctx, q.insertLease, name, holder, int64(term), ttlSeconds(ttl)).MapScanCAS(prev)
	if err != nil {
		return 0, false, s.classify(ctx, err)
	}
	if !applied {
		other, _ := prev["holder"].(string)
		if other == holder {
			return 0, false, nil
		}
		otherTerm, _ := prev["term"].(int64)
		return 0, false, fmt.Errorf("held by %s at term %d: %w", other, otherTerm, store.ErrConflict)
	}
	if found {
		applied, err = s.query(ctx, q.bumpTerm, int64(term), name, int64(last)).MapScanCAS(prev)
	} else {
		applied, err = s.query(ctx, q.insertTerm, name, int64(term)).MapScanCAS(prev)
	}
	if err == nil && applied {
		return term, true, nil
	}
	if relErr := s.deleteLease(ctx, q, name, holder, term); relErr != nil && err == nil {
		err = relErr
	}
	if err != nil {
		return 0, false, s.classify(ctx, err)
	}
	return 0, false, fmt.Errorf("term %d was committed by another holder meanwhile: given back: %w", term, store.ErrConflict)
}

// deleteLease deletes the lease if holder has it at term.
func (s *Store) deleteLease(ctx context.Context, q leaseStatements, name, holder string, term uint64) error {
	if _, err := s.query(ctx, q.deleteLease, name, holder, int64(term)).MapScanCAS(map[string]any{}); err != nil {
		return s.classify(ctx, err)
	}
	return nil
}

// RenewLease extends a lease held by holder at term by ttl from now;
// ErrConflict naming the current holder if it expired or was taken.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := checkLease(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	q := s.leaseCQL()
	prev := map[string]any{}
	applied, err := s.query(ctx, q.renewLease, ttlSeconds(ttl), holder, int64(term), name, holder, int64(term)).
		MapScanCAS(prev)
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", name, s.classify(ctx, err))
	}
	if !applied {
		other, _ := prev["holder"].(string)
		otherTerm, _ := prev["term"].(int64)
		if other == "" {
			return fmt.Errorf("renew lease %s for %s at term %d: expired: %w", name, holder, term, store.ErrConflict)
		}
		return fmt.Errorf("renew lease %s for %s at term %d: held by %s at term %d: %w",
			name, holder, term, other, otherTerm, store.ErrConflict)
	}
	return nil
}

// ReleaseLease deletes a lease held by holder at term; nothing happens
// when it is not.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := checkLease(name, holder, time.Second); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	if err := s.deleteLease(ctx, s.leaseCQL(), name, holder, term); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// LeaseHolder returns the holder and term of the lease, or "" and 0 when
// it is free. It is a serial read: it sees every acquisition before it.
func (s *Store) LeaseHolder(ctx context.Context, name string) (string, uint64, error) {
	if name == "" {
		return "", 0, fmt.Errorf("lease: %w: lease name is empty", store.ErrInvalid)
	}
	if err := s.begin(ctx); err != nil {
		return "", 0, fmt.Errorf("lease %s: %w", name, err)
	}
	holder, term, err := s.readLease(ctx, s.leaseCQL(), name)
	if err != nil {
		return "", 0, fmt.Errorf("lease %s: %w", name, err)
	}
	return holder, term, nil
}

// readLease is a serial read of a lease: "" and 0 when there is none.
func (s *Store) readLease(ctx context.Context, q leaseStatements, name string) (string, uint64, error) {
	var holder string
	var term int64
	err := s.query(ctx, q.getLease, name).Consistency(serialRead).Scan(&holder, &term)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return "", 0, nil
	case err != nil:
		return "", 0, s.classify(ctx, err)
	case holder == "":
		return "", 0, nil
	}
	return holder, uint64(max(term, 0)), nil
}

// readLeaseTerm is a serial read of a lease's last drawn term.
func (s *Store) readLeaseTerm(ctx context.Context, q leaseStatements, name string) (term uint64, found bool, err error) {
	var stored int64
	err = s.query(ctx, q.getTerm, name).Consistency(serialRead).Scan(&stored)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, s.classify(ctx, err)
	}
	return uint64(max(stored, 0)), true, nil
}
