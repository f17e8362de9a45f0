package lease

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
)

// record is what the decisions read and write of a Lease's spec.
type record struct {
	// Holder is spec.holderIdentity; "" when the lease is free.
	Holder string
	// Term is spec.leaseTransitions: the last term handed out, kept when
	// the lease is released so the next holder's term is higher.
	Term uint64
	// Acquired is spec.acquireTime: when Holder took the lease.
	Acquired time.Time
	// Renewed is spec.renewTime, written by the holder from its clock at
	// the moment of the call (rounded up to the microsecond).
	Renewed time.Time
	// Duration is spec.leaseDurationSeconds: the TTL rounded up to whole
	// seconds.
	Duration time.Duration
}

// expiry is when the holder's own view of the lease ends.
func (r record) expiry() time.Time { return r.Renewed.Add(r.Duration) }

// heldFor reports whether, at now, the lease is still held in the eyes of
// someone other than its holder: until its expiry plus the clock skew
// allowed between members, since the expiry was computed on the holder's
// clock.
func (r record) heldFor(now time.Time, skew time.Duration) bool {
	return r.Holder != "" && now.Before(r.expiry().Add(skew))
}

// op is what a call asks of a lease.
type op int

const (
	acquire op = iota
	renew
	release
)

// request is one call: who asks, at which term (renew, release), for how
// long (acquire, renew).
type request struct {
	op     op
	holder string
	term   uint64
	ttl    time.Duration
}

// decision is what a call does with the lease it read.
type decision struct {
	// write says whether next is to be written (compare-and-set on the
	// version read).
	write bool
	next  record
	// term is the holder's term after an acquire.
	term uint64
	// err is the answer when the call is refused (wraps
	// store.ErrConflict); nothing is written.
	err error
}

// decide says what req does to the lease cur read at now (cur is the zero
// record when there is no Lease object yet).
//
//   - acquire: the holder keeps its term and renews while its own view of
//     the lease has not ended; anyone, the same holder included, takes a
//     free or ended lease with the next term; a lease of another holder
//     counts as ended only skew after its expiry.
//   - renew: only the holder at term, and only before the expiry (a lease
//     that ended is lost, even if nobody has taken it yet).
//   - release: frees the lease if holder has it at term, ended or not;
//     otherwise nothing happens. The term is kept.
func decide(cur record, req request, now time.Time, skew time.Duration) decision {
	ownsUnexpired := cur.Holder == req.holder && now.Before(cur.expiry())
	switch req.op {
	case acquire:
		if ownsUnexpired {
			return decision{write: true, next: renewed(cur, now, req.ttl), term: cur.Term}
		}
		if cur.Holder != req.holder && cur.heldFor(now, skew) {
			return decision{err: fmt.Errorf("held by %s at term %d until %s (+%v clock skew allowed): %w",
				cur.Holder, cur.Term, cur.expiry().Format(time.RFC3339Nano), skew, store.ErrConflict)}
		}
		next := record{Holder: req.holder, Term: cur.Term + 1, Acquired: stamp(now)}
		return decision{write: true, next: renewed(next, now, req.ttl), term: next.Term}
	case renew:
		switch {
		case cur.Holder != req.holder || cur.Term != req.term:
			return decision{err: fmt.Errorf("renew for %s at term %d: %s: %w",
				req.holder, req.term, describe(cur, now, skew), store.ErrConflict)}
		case !ownsUnexpired:
			return decision{err: fmt.Errorf("renew for %s at term %d: expired at %s: %w",
				req.holder, req.term, cur.expiry().Format(time.RFC3339Nano), store.ErrConflict)}
		}
		return decision{write: true, next: renewed(cur, now, req.ttl)}
	default: // release
		if cur.Holder != req.holder || cur.Term != req.term || cur.Holder == "" {
			return decision{}
		}
		return decision{write: true, next: record{Term: cur.Term}}
	}
}

// heldBy is the lease's holder and term as others see it at now; "" and 0
// when it is free or ended.
func heldBy(cur record, now time.Time, skew time.Duration) (string, uint64) {
	if !cur.heldFor(now, skew) {
		return "", 0
	}
	return cur.Holder, cur.Term
}

func describe(cur record, now time.Time, skew time.Duration) string {
	if holder, term := heldBy(cur, now, skew); holder != "" {
		return fmt.Sprintf("held by %s at term %d", holder, term)
	}
	return "not held"
}

// renewed is r renewed at now for ttl: a lease stamped at now (rounded
// up) for ttl rounded up to whole seconds lasts at least ttl from now.
func renewed(r record, now time.Time, ttl time.Duration) record {
	r.Renewed = stamp(now)
	r.Duration = durationSeconds(ttl) * time.Second
	return r
}

// stamp is now as a MicroTime keeps it, rounded up rather than truncated
// so the stored time is never before the call.
func stamp(now time.Time) time.Time {
	t := now.Round(0).Truncate(time.Microsecond)
	if t.Before(now.Round(0)) {
		t = t.Add(time.Microsecond)
	}
	return t
}

// durationSeconds is ttl in whole seconds, rounded up
// (spec.leaseDurationSeconds).
func durationSeconds(ttl time.Duration) time.Duration {
	return (ttl + time.Second - 1) / time.Second
}
