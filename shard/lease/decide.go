package lease

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig means an Elector's Config cannot work (a missing store
// or name, durations that leave no time to renew).
var ErrInvalidConfig = errors.New("invalid lease elector config")

// Defaults for the zero durations of Config.
const (
	DefaultTTL = 10 * time.Second
	// The others are fractions of the TTL: renew every third, retry every
	// fifth, and stop a fifth of the TTL before the lease could end.
	defaultRenewDivisor  = 3
	defaultRetryDivisor  = 5
	defaultMarginDivisor = 5
)

// timing is an Elector's durations, defaulted and checked.
type timing struct {
	ttl, renewEvery, retryEvery, margin time.Duration
}

// newTiming fills zero durations with defaults and checks that a leader
// gets to renew at least once before its lease stops being safe.
func newTiming(ttl, renewEvery, retryEvery, margin time.Duration) (timing, error) {
	t := timing{ttl: ttl, renewEvery: renewEvery, retryEvery: retryEvery, margin: margin}
	if t.ttl == 0 {
		t.ttl = DefaultTTL
	}
	if t.renewEvery == 0 {
		t.renewEvery = t.ttl / defaultRenewDivisor
	}
	if t.retryEvery == 0 {
		t.retryEvery = t.ttl / defaultRetryDivisor
	}
	if t.margin == 0 {
		t.margin = t.ttl / defaultMarginDivisor
	}
	switch {
	case t.ttl < 0 || t.renewEvery < 0 || t.retryEvery < 0 || t.margin < 0:
		return timing{}, fmt.Errorf("%w: negative duration (ttl %v, renew every %v, retry every %v, safety margin %v)",
			ErrInvalidConfig, t.ttl, t.renewEvery, t.retryEvery, t.margin)
	case t.margin >= t.ttl:
		return timing{}, fmt.Errorf("%w: safety margin %v must be less than the ttl %v", ErrInvalidConfig, t.margin, t.ttl)
	case t.renewEvery == 0 || t.retryEvery == 0:
		return timing{}, fmt.Errorf("%w: ttl %v too short to derive renewal and retry intervals", ErrInvalidConfig, t.ttl)
	case t.renewEvery >= t.ttl-t.margin:
		return timing{}, fmt.Errorf("%w: renew every %v must be less than ttl %v minus safety margin %v",
			ErrInvalidConfig, t.renewEvery, t.ttl, t.margin)
	}
	return t, nil
}

// safeUntil is how long a lease taken or renewed by a call started at
// sentAt may be used: the store holds it at least until sentAt + ttl, and
// the margin covers the difference between the clocks' rates.
func (t timing) safeUntil(sentAt time.Time) time.Time {
	return sentAt.Add(t.ttl - t.margin)
}

// expired reports whether a lease safe until safeUntil may no longer be
// used at now.
func expired(now, safeUntil time.Time) bool { return !now.Before(safeUntil) }

// retryAfterFailure is how soon a leader tries again after a renewal the
// store could not answer: its retry interval, but never slower than its
// renewal interval.
func (t timing) retryAfterFailure() time.Duration { return min(t.retryEvery, t.renewEvery) }

// renewal is how a renewal call ended.
type renewal int

const (
	// renewed: the store extended the lease.
	renewed renewal = iota
	// refused: the store says the lease is no longer this holder's
	// (store.ErrConflict).
	refused
	// failed: the store did not answer either way (unavailable, timed
	// out); the lease may or may not have been extended.
	failed
)

// lossReason says why a leader stopped leading; empty while it leads.
type lossReason string

const (
	stillLeading lossReason = ""
	// lostToAnother: the store refused a renewal.
	lostToAnother lossReason = "the store gave the lease to another holder"
	// lostUnrenewed: no renewal succeeded before the safe deadline.
	lostUnrenewed lossReason = "the lease could not be renewed before its safe deadline"
	// lostLateAnswer: a renewal succeeded, but its answer came after the
	// deadline it set.
	lostLateAnswer lossReason = "a renewal was answered after the lease stopped being safe"
)

// leaderStep is what a leader does next.
type leaderStep struct {
	// safeUntil is when the lease stops being safe to use.
	safeUntil time.Time
	// renewAt is when to call the store next.
	renewAt time.Time
	// lost is why leadership ended, or stillLeading.
	lost lossReason
}

// afterRenewal decides what a leader does after a renewal call that was
// sent at sentAt and ended with r at now, while its lease was safe until
// safeUntil.
func afterRenewal(now, sentAt, safeUntil time.Time, r renewal, t timing) leaderStep {
	switch r {
	case refused:
		return leaderStep{safeUntil: safeUntil, lost: lostToAnother}
	case renewed:
		safe := t.safeUntil(sentAt)
		if safe.Before(safeUntil) {
			safe = safeUntil // an earlier renewal promised more
		}
		if expired(now, safe) {
			return leaderStep{safeUntil: safe, lost: lostLateAnswer}
		}
		// sentAt + renewEvery is before safe: newTiming checks that
		// renewEvery < ttl - margin.
		return leaderStep{safeUntil: safe, renewAt: latest(now, sentAt.Add(t.renewEvery))}
	default:
		if expired(now, safeUntil) {
			return leaderStep{safeUntil: safeUntil, lost: lostUnrenewed}
		}
		at := now.Add(t.retryAfterFailure())
		if at.After(safeUntil) {
			at = safeUntil // wake up when the lease ends, to give it up
		}
		return leaderStep{safeUntil: safeUntil, renewAt: at}
	}
}

// elected reports whether a lease taken by an acquire call sent at sentAt
// and answered at now may still be used, and until when.
func elected(now, sentAt time.Time, t timing) (safeUntil time.Time, ok bool) {
	safe := t.safeUntil(sentAt)
	return safe, !expired(now, safe)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
