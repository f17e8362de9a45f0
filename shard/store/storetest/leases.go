package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
)

// The lease tests run only against backends with the optional
// store.LeaseStore capability. Expiry is real time, so they use TTLs of
// about a second (Cassandra's TTLs are whole seconds) and poll with a
// deadline.

// longTTL is a TTL no test outlives.
const longTTL = time.Hour

// LeaseBackend is what the lease tests run against: a store.Store with
// the store.LeaseStore capability, or a backend that keeps only leases.
// After Close every call fails with store.ErrUnavailable.
type LeaseBackend interface {
	store.LeaseStore
	Close() error
}

// LeaseOpener returns a fresh backend holding no lease. The suite closes
// it when the subtest ends.
type LeaseOpener func(t *testing.T) LeaseBackend

// leaseCases are the lease tests: Run runs them on stores with leases,
// RunLeases on lease-only backends.
var leaseCases = []struct {
	name string
	test func(t *testing.T, ls LeaseBackend)
}{
	{"LeaseInvalidRequests", testLeaseInvalidRequests},
	{"LeaseAcquireRenewRelease", testLeaseAcquireRenewRelease},
	{"LeaseExpires", testLeaseExpires},
	{"ConcurrentAcquireOneWinner", testConcurrentAcquireOneWinner},
	{"LeasesClosedStore", testLeasesClosedStore},
	{"LeasesMatchReferenceModel", testLeasesMatchReferenceModel},
}

// RunLeases runs the lease contract suite against backends made by open
// (one that keeps leases apart from a store.Store, such as Kubernetes
// Lease objects).
func RunLeases(t *testing.T, open LeaseOpener) {
	for _, c := range leaseCases {
		runCase(t, c.name, open, c.test)
	}
}

// onLeases makes a lease test one of Run's: it skips stores without
// leases.
func onLeases(test func(t *testing.T, ls LeaseBackend)) func(t *testing.T, s store.Store) {
	return func(t *testing.T, s store.Store) {
		ls, ok := s.(LeaseBackend)
		if !ok {
			t.Skipf("%T has no leases (store.LeaseStore)", s)
		}
		test(t, ls)
	}
}

func requireHolder(t testing.TB, ls store.LeaseStore, name, wantHolder string, wantTerm uint64) {
	t.Helper()
	holder, term, err := ls.LeaseHolder(context.Background(), name)
	mustNil(t, err, "LeaseHolder "+name)
	if holder != wantHolder || term != wantTerm {
		t.Fatalf("LeaseHolder(%s) = %q at term %d, want %q at term %d", name, holder, term, wantHolder, wantTerm)
	}
}

func testLeaseInvalidRequests(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["AcquireLease with empty name"] = ls.AcquireLease(ctx, "", "a", longTTL)
	_, checks["AcquireLease with empty holder"] = ls.AcquireLease(ctx, "shard", "", longTTL)
	_, checks["AcquireLease with zero ttl"] = ls.AcquireLease(ctx, "shard", "a", 0)
	_, checks["AcquireLease with negative ttl"] = ls.AcquireLease(ctx, "shard", "a", -time.Second)
	checks["RenewLease with empty holder"] = ls.RenewLease(ctx, "shard", "", 1, longTTL)
	checks["RenewLease with zero ttl"] = ls.RenewLease(ctx, "shard", "a", 1, 0)
	checks["ReleaseLease with empty name"] = ls.ReleaseLease(ctx, "", "a", 1)
	_, _, checks["LeaseHolder with empty name"] = ls.LeaseHolder(ctx, "")
	for call, err := range checks {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", call, err)
		}
	}
	requireHolder(t, ls, "shard", "", 0)
}

func testLeaseAcquireRenewRelease(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	requireHolder(t, ls, "shard", "", 0)

	termA, err := ls.AcquireLease(ctx, "shard", "a", longTTL)
	mustNil(t, err, "AcquireLease a")
	if termA == 0 {
		t.Fatal("first term is 0; terms start at 1")
	}
	requireHolder(t, ls, "shard", "a", termA)
	again, err := ls.AcquireLease(ctx, "shard", "a", longTTL)
	mustNil(t, err, "AcquireLease a again")
	if again != termA {
		t.Fatalf("holder acquiring its own lease got term %d, want its term %d", again, termA)
	}

	_, err = ls.AcquireLease(ctx, "shard", "b", longTTL)
	requireIs(t, err, store.ErrConflict, "shard")
	requireIs(t, ls.RenewLease(ctx, "shard", "b", termA, longTTL), store.ErrConflict, "shard")
	requireIs(t, ls.RenewLease(ctx, "shard", "a", termA+1, longTTL), store.ErrConflict, "shard")
	mustNil(t, ls.RenewLease(ctx, "shard", "a", termA, longTTL), "RenewLease a")

	// Releases by another holder or at another term change nothing.
	mustNil(t, ls.ReleaseLease(ctx, "shard", "b", termA), "ReleaseLease by b")
	mustNil(t, ls.ReleaseLease(ctx, "shard", "a", termA+1), "ReleaseLease at a wrong term")
	requireHolder(t, ls, "shard", "a", termA)

	// Another lease is independent.
	termOther, err := ls.AcquireLease(ctx, "other", "b", longTTL)
	mustNil(t, err, "AcquireLease other by b")
	requireHolder(t, ls, "other", "b", termOther)
	requireHolder(t, ls, "shard", "a", termA)

	mustNil(t, ls.ReleaseLease(ctx, "shard", "a", termA), "ReleaseLease a")
	requireHolder(t, ls, "shard", "", 0)
	mustNil(t, ls.ReleaseLease(ctx, "shard", "a", termA), "ReleaseLease a twice")
	requireIs(t, ls.RenewLease(ctx, "shard", "a", termA, longTTL), store.ErrConflict, "shard")

	termB, err := ls.AcquireLease(ctx, "shard", "b", longTTL)
	mustNil(t, err, "AcquireLease b after release")
	if termB <= termA {
		t.Fatalf("new holder's term %d, want more than the previous %d", termB, termA)
	}
	requireHolder(t, ls, "shard", "b", termB)
	requireHolder(t, ls, "other", "b", termOther)
}

// testLeaseExpires checks that an unrenewed lease lasts at least its TTL,
// then ends by itself, and that a renewal extends it.
func testLeaseExpires(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	const ttl = time.Second

	renewed, err := ls.AcquireLease(ctx, "renewed", "a", ttl)
	mustNil(t, err, "AcquireLease renewed")
	mustNil(t, ls.RenewLease(ctx, "renewed", "a", renewed, longTTL), "RenewLease renewed")

	start := time.Now()
	lapsing, err := ls.AcquireLease(ctx, "lapsing", "a", ttl)
	mustNil(t, err, "AcquireLease lapsing")
	_, err = ls.AcquireLease(ctx, "lapsing", "b", ttl)
	if time.Since(start) < ttl {
		// Still within the TTL of a: b must not have it.
		requireIs(t, err, store.ErrConflict, "lapsing")
	}

	var taken uint64
	deadline := time.Now().Add(30 * time.Second)
	for poll := time.NewTicker(50 * time.Millisecond); ; <-poll.C {
		taken, err = ls.AcquireLease(ctx, "lapsing", "b", longTTL)
		if err == nil {
			poll.Stop()
			break
		}
		if !errors.Is(err, store.ErrConflict) || time.Now().After(deadline) {
			t.Fatalf("lapsing lease not taken over %v after its TTL: %v", time.Since(start), err)
		}
	}
	if elapsed := time.Since(start); elapsed < ttl {
		t.Fatalf("a lease with TTL %v was taken over after %v", ttl, elapsed)
	}
	if taken <= lapsing {
		t.Fatalf("term after expiry %d, want more than %d", taken, lapsing)
	}
	requireHolder(t, ls, "lapsing", "b", taken)
	requireIs(t, ls.RenewLease(ctx, "lapsing", "a", lapsing, ttl), store.ErrConflict, "lapsing")
	mustNil(t, ls.ReleaseLease(ctx, "lapsing", "a", lapsing), "ReleaseLease of a lost lease")
	requireHolder(t, ls, "lapsing", "b", taken)

	// The renewed lease outlived its first TTL.
	_, err = ls.AcquireLease(ctx, "renewed", "b", ttl)
	requireIs(t, err, store.ErrConflict, "renewed")
	requireHolder(t, ls, "renewed", "a", renewed)
}

func testConcurrentAcquireOneWinner(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	const contenders = 8
	terms := make([]uint64, contenders)
	errs := make([]error, contenders)
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Go(func() {
			terms[i], errs[i] = ls.AcquireLease(ctx, "shard", fmt.Sprintf("holder-%d", i), longTTL)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("holder-%d and holder-%d both acquired the lease", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("holder-%d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no contender acquired a free lease")
	}
	requireHolder(t, ls, "shard", fmt.Sprintf("holder-%d", winner), terms[winner])
}

func testLeasesClosedStore(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	term, err := ls.AcquireLease(ctx, "shard", "a", longTTL)
	mustNil(t, err, "AcquireLease")
	mustNil(t, ls.Close(), "Close")
	checks := map[string]error{
		"RenewLease":   ls.RenewLease(ctx, "shard", "a", term, longTTL),
		"ReleaseLease": ls.ReleaseLease(ctx, "shard", "a", term),
	}
	_, checks["AcquireLease"] = ls.AcquireLease(ctx, "shard", "b", longTTL)
	_, _, checks["LeaseHolder"] = ls.LeaseHolder(ctx, "shard")
	for call, err := range checks {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on a closed store: %v, want ErrUnavailable", call, err)
		}
	}
}

// leaseReference is the naive model of one lease that never expires.
type leaseReference struct {
	holder   string
	term     uint64
	lastTerm uint64 // the highest term handed out
}

// testLeasesMatchReferenceModel runs random calls by three holders and
// compares every answer with the reference. Terms are checked for what
// the contract promises: a new holder's term is higher than every term
// before it.
func testLeasesMatchReferenceModel(t *testing.T, ls LeaseBackend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	holders := []string{"a", "b", "c"}
	var ref leaseReference
	for step := range 150 {
		holder := holders[rng.IntN(len(holders))]
		// Mostly the right term, sometimes a stale or future one.
		term := ref.term
		if rng.IntN(4) == 0 {
			term = uint64(rng.IntN(int(ref.lastTerm) + 2))
		}
		where := func(call string) string {
			return fmt.Sprintf("step %d: %s by %s at term %d (reference: %q at %d)", step, call, holder, term, ref.holder, ref.term)
		}
		switch op := rng.IntN(4); op {
		case 0:
			got, err := ls.AcquireLease(ctx, "shard", holder, longTTL)
			switch {
			case ref.holder != "" && ref.holder != holder:
				if !errors.Is(err, store.ErrConflict) {
					t.Fatalf("%s: %v, want ErrConflict", where("AcquireLease"), err)
				}
			case err != nil:
				t.Fatalf("%s: %v", where("AcquireLease"), err)
			case ref.holder == holder && got != ref.term:
				t.Fatalf("%s: term %d, want the held term %d", where("AcquireLease"), got, ref.term)
			case ref.holder == "" && got <= ref.lastTerm:
				t.Fatalf("%s: term %d, want more than %d", where("AcquireLease"), got, ref.lastTerm)
			default:
				ref.holder, ref.term, ref.lastTerm = holder, got, max(ref.lastTerm, got)
			}
		case 1:
			err := ls.RenewLease(ctx, "shard", holder, term, longTTL)
			held := ref.holder == holder && ref.term == term
			if held && err != nil || !held && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("%s: %v (held: %v)", where("RenewLease"), err, held)
			}
		case 2:
			mustNil(t, ls.ReleaseLease(ctx, "shard", holder, term), where("ReleaseLease"))
			if ref.holder == holder && ref.term == term {
				ref.holder, ref.term = "", 0
			}
		case 3:
			gotHolder, gotTerm, err := ls.LeaseHolder(ctx, "shard")
			mustNil(t, err, where("LeaseHolder"))
			if gotHolder != ref.holder || gotTerm != ref.term {
				t.Fatalf("%s: %q at %d", where("LeaseHolder"), gotHolder, gotTerm)
			}
		}
	}
}
