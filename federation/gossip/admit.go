package gossip

import (
	"context"
	"time"
)

// Holding the gossip key lets a process speak gossip; Admission decides
// whether it may be a member. With Config.Admission set, every member
// publishes a proof in its TagProof tag (made by Admission.Prove over its
// Claim), and a member is added to this one's view only after
// Admission.Verify accepted its claim and proof. Verdicts are remembered
// per claim and proof: a verified member's later messages (a new leader
// flag, a refutation) cost nothing, a refused one is tried again after a
// backoff, and a member that comes back with a new address or proof is
// verified anew.

// TagProof is the tag holding a member's proof of identity.
const TagProof = "proof"

// Claim is what a member says it is.
type Claim struct {
	Name    string
	Region  string
	APIAddr string
	// Addr is the member's gossip address (host:port), as advertised.
	Addr string
}

// Payload is the text a proof is made over: every field of the claim, so
// a proof copied to another name or address does not verify.
func (c Claim) Payload() []byte {
	b := []byte("peloton-gossip-member/v1")
	for _, f := range []string{c.Name, c.Region, c.APIAddr, c.Addr} {
		b = append(b, 0)
		b = append(b, f...)
	}
	return b
}

// key identifies a claim with its proof in the verdict book.
func (c Claim) key(proof string) string { return string(c.Payload()) + "\x00" + proof }

// Admission proves this member's identity and verifies others'. Verify may
// do I/O; it must return when ctx ends.
type Admission interface {
	Prove(c Claim) (string, error)
	Verify(ctx context.Context, c Claim, proof string) error
}

// verdict is what the book knows of a claim.
type verdict int

const (
	unknown  verdict = iota // never verified, or refused and due for another try
	pending                 // a verification is running
	admitted                // verified
	refused                 // verification failed; not tried again before retryAt
)

// Backoff of a refused claim: the first retry after admitBackoffMin,
// doubling up to admitBackoffMax. Entries not asked about for
// admitForget are dropped.
const (
	admitBackoffMin = time.Second
	admitBackoffMax = 30 * time.Second
	admitForget     = 10 * time.Minute
)

type admitEntry struct {
	state    verdict
	failures int
	retryAt  time.Time
	seen     time.Time
	reason   string
}

// admitBook is the pure core of admission: which claims are verified,
// refused or being verified, and when a refused one may be tried again.
// It reads no clock and starts nothing; the caller passes now and runs
// the verifications it is told to start.
type admitBook struct {
	entries map[string]*admitEntry
}

func newAdmitBook() *admitBook { return &admitBook{entries: map[string]*admitEntry{}} }

// decide says whether the claim is admitted now, and whether the caller
// should start a verification (the book then counts it as pending).
func (b *admitBook) decide(key string, now time.Time) (ok, start bool) {
	e := b.entries[key]
	if e == nil {
		e = &admitEntry{}
		b.entries[key] = e
	}
	e.seen = now
	switch e.state {
	case admitted:
		return true, false
	case pending:
		return false, false
	case refused:
		if now.Before(e.retryAt) {
			return false, false
		}
	}
	e.state = pending
	return false, true
}

// record stores a verification's result. first is true when the verdict
// or its reason changed, i.e. worth a log line.
func (b *admitBook) record(key string, reason string, now time.Time) (first bool) {
	e := b.entries[key]
	if e == nil {
		e = &admitEntry{seen: now}
		b.entries[key] = e
	}
	if reason == "" {
		first = e.state != admitted
		e.state, e.failures, e.reason = admitted, 0, ""
		return first
	}
	first = e.reason != reason
	e.state, e.reason = refused, reason
	e.failures++
	backoff := admitBackoffMin
	for i := 1; i < e.failures && backoff < admitBackoffMax; i++ {
		backoff *= 2
	}
	e.retryAt = now.Add(min(backoff, admitBackoffMax))
	return first
}

// forget drops entries not asked about since admitForget; a pending entry
// stays until its verification records.
func (b *admitBook) forget(now time.Time) {
	for k, e := range b.entries {
		if e.state != pending && now.Sub(e.seen) > admitForget {
			delete(b.entries, k)
		}
	}
}
