package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/lease"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// The shell tests run electors on one memstore whose leases expire by a
// fake clock. Nothing sleeps: a test advances the clock, then polls the
// electors' state (or a call count) with a wall-clock deadline.

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	ttl        = 10 * time.Second
	renewEvery = 3 * time.Second
	retryEvery = time.Second
	margin     = 2 * time.Second // safe for 8s after each call
	leaseName  = "shard/test"
)

// eventually polls cond until it holds, failing the test after 5 seconds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		<-poll.C
	}
}

// acquireCall is one AcquireLease call as the store saw it.
type acquireCall struct {
	at   time.Time // on the fake clock
	term uint64
	err  error
}

// faultyStore is one process's view of the shared store, with the faults
// a test switches on.
type faultyStore struct {
	store.LeaseStore
	clk clock.Clock

	dropRelease   atomic.Bool // the process was killed: it never gives its lease back
	failRenewals  atomic.Bool // renewals answer ErrUnavailable
	blockRenewals atomic.Bool // renewals never answer (until cancelled)

	renewalsStarted   atomic.Int64
	renewalsCancelled atomic.Int64

	mu       sync.Mutex
	acquires []acquireCall
	heldFrom time.Time // when the last successful acquire or renewal was sent
}

func (s *faultyStore) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	at := s.clk.Now()
	term, err := s.LeaseStore.AcquireLease(ctx, name, holder, ttl)
	s.mu.Lock()
	s.acquires = append(s.acquires, acquireCall{at: at, term: term, err: err})
	if err == nil {
		s.heldFrom = at
	}
	s.mu.Unlock()
	return term, err
}

func (s *faultyStore) acquireCalls() []acquireCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]acquireCall(nil), s.acquires...)
}

func (s *faultyStore) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	s.renewalsStarted.Add(1)
	switch {
	case s.blockRenewals.Load():
		<-ctx.Done()
		s.renewalsCancelled.Add(1)
		return fmt.Errorf("renew: %w: %w", store.ErrUnavailable, ctx.Err())
	case s.failRenewals.Load():
		return fmt.Errorf("renew: %w", store.ErrUnavailable)
	}
	at := s.clk.Now()
	err := s.LeaseStore.RenewLease(ctx, name, holder, term, ttl)
	if err == nil {
		s.mu.Lock()
		s.heldFrom = at
		s.mu.Unlock()
	}
	return err
}

// lastHeldFrom is when the last successful acquire or renewal was sent:
// the store holds the lease at least a TTL after it.
func (s *faultyStore) lastHeldFrom() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldFrom
}

func (s *faultyStore) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if s.dropRelease.Load() {
		return nil
	}
	return s.LeaseStore.ReleaseLease(ctx, name, holder, term)
}

// cluster is the shared store and clock of a test's processes.
type cluster struct {
	t   *testing.T
	clk *clock.Fake
	mem *memstore.Store
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, clk: clock.NewFake(t0), mem: memstore.New()}
	c.mem.SetLeaseClock(c.clk.Now)
	return c
}

// advanceTo moves the fake clock to t0 + d.
func (c *cluster) advanceTo(d time.Duration) {
	c.t.Helper()
	if step := t0.Add(d).Sub(c.clk.Now()); step > 0 {
		c.clk.Advance(step)
	}
}

func (c *cluster) requireHolder(wantHolder string, wantTerm uint64) {
	c.t.Helper()
	holder, term, err := c.mem.LeaseHolder(context.Background(), leaseName)
	if err != nil || holder != wantHolder || term != wantTerm {
		c.t.Fatalf("store: lease held by %q at term %d (%v), want %q at term %d", holder, term, err, wantHolder, wantTerm)
	}
}

// process is one running Elector.
type process struct {
	t        *testing.T
	holder   string
	elector  *lease.Elector
	store    *faultyStore
	stop     context.CancelFunc
	returned chan error
	losses   atomic.Int64

	mu      sync.Mutex
	terms   []uint64
	leading context.Context // the context of the latest onElected
}

// start runs an Elector for holder. work is the leader's work; nil means
// "run until cancelled".
func (c *cluster) start(holder string, work func(ctx context.Context, term uint64)) *process {
	c.t.Helper()
	p := &process{t: c.t, holder: holder, store: &faultyStore{LeaseStore: c.mem, clk: c.clk}, returned: make(chan error, 1)}
	e, err := lease.New(lease.Config{
		Store: p.store, Name: leaseName, Holder: holder,
		TTL: ttl, RenewEvery: renewEvery, RetryEvery: retryEvery, SafetyMargin: margin,
		Clock: c.clk,
	})
	if err != nil {
		c.t.Fatalf("New: %v", err)
	}
	p.elector = e
	ctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go func() {
		p.returned <- e.Run(ctx, func(ctx context.Context, term uint64) {
			p.mu.Lock()
			p.terms = append(p.terms, term)
			p.leading = ctx
			p.mu.Unlock()
			if work != nil {
				work(ctx, term)
				return
			}
			<-ctx.Done()
		}, func() { p.losses.Add(1) })
	}()
	c.t.Cleanup(func() {
		stop()
		<-p.returned
	})
	return p
}

// shutdown cancels the process's Run and waits for it to return.
func (p *process) shutdown() {
	p.t.Helper()
	p.stop()
	if err := <-p.returned; err != nil {
		p.t.Fatalf("%s: Run returned %v", p.holder, err)
	}
	p.returned <- nil // for the cleanup
}

func (p *process) elections() []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint64(nil), p.terms...)
}

func (p *process) leadingCtx() context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leading
}

func (p *process) waitLeader(term uint64) {
	p.t.Helper()
	eventually(p.t, fmt.Sprintf("%s leads at term %d", p.holder, term), func() bool {
		s := p.elector.State()
		terms := p.elections()
		return s.Role == lease.Leader && s.Term == term && len(terms) > 0 && terms[len(terms)-1] == term
	})
	if holder, got := p.elector.Leader(); holder != p.holder || got != term {
		p.t.Fatalf("%s: Leader() = %q at %d while leading at term %d", p.holder, holder, got, term)
	}
}

func (p *process) requireLeading() {
	p.t.Helper()
	if ctx := p.leadingCtx(); ctx == nil || ctx.Err() != nil || p.elector.State().Role != lease.Leader {
		p.t.Fatalf("%s stopped leading at %v", p.holder, p.elector.State())
	}
}

func (p *process) waitStopped(losses int64) {
	p.t.Helper()
	eventually(p.t, fmt.Sprintf("%s stops leading (%d losses)", p.holder, losses), func() bool {
		ctx := p.leadingCtx()
		return ctx != nil && ctx.Err() != nil && p.losses.Load() == losses && p.elector.State().Role == lease.Standby
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	mem := memstore.New()
	good := lease.Config{Store: mem, Name: "n", Holder: "h", TTL: ttl}
	cases := map[string]func(c *lease.Config){
		"no store":                    func(c *lease.Config) { c.Store = nil },
		"no name":                     func(c *lease.Config) { c.Name = "" },
		"no holder":                   func(c *lease.Config) { c.Holder = "" },
		"negative ttl":                func(c *lease.Config) { c.TTL = -time.Second },
		"renewal after safe deadline": func(c *lease.Config) { c.RenewEvery = 9 * time.Second },
		"margin as long as the ttl":   func(c *lease.Config) { c.SafetyMargin = ttl },
	}
	for name, breakIt := range cases {
		cfg := good
		breakIt(&cfg)
		if _, err := lease.New(cfg); !errors.Is(err, lease.ErrInvalidConfig) {
			t.Errorf("%s: New returned %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := lease.New(good); err != nil {
		t.Fatalf("New with a good config: %v", err)
	}
}

func TestRunRejectsMisuse(t *testing.T) {
	c := newCluster(t)
	e, err := lease.New(lease.Config{Store: c.mem, Name: leaseName, Holder: "a", TTL: ttl, Clock: c.clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background(), nil, nil); !errors.Is(err, lease.ErrInvalidConfig) {
		t.Fatalf("Run without onElected: %v, want ErrInvalidConfig", err)
	}
	p := c.start("b", nil)
	p.waitLeader(1)
	if err := p.elector.Run(context.Background(), func(context.Context, uint64) {}, nil); !errors.Is(err, lease.ErrAlreadyRunning) {
		t.Fatalf("second Run: %v, want ErrAlreadyRunning", err)
	}
	p.requireLeading()
}

func TestLeaderKeepsLeaseByRenewingThenReleasesOnShutdown(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1)
	if got := a.elector.State().SafeUntil; !got.Equal(t0.Add(ttl - margin)) {
		t.Fatalf("safe until %v after acquiring at t0, want t0+%v", got.Sub(t0), ttl-margin)
	}
	// Ten renewals: three times the TTL.
	for i := 1; i <= 10; i++ {
		at := time.Duration(i) * renewEvery
		c.advanceTo(at)
		eventually(t, fmt.Sprintf("renewal %d", i), func() bool {
			return a.elector.State().SafeUntil.Equal(t0.Add(at + ttl - margin))
		})
		a.requireLeading()
		c.requireHolder("a", 1)
	}
	if n := a.store.renewalsStarted.Load(); n != 10 {
		t.Fatalf("%d renewals after 10 renewal intervals, want 10", n)
	}
	leading := a.leadingCtx()
	a.shutdown()
	if leading.Err() == nil {
		t.Fatal("leader's context still live after Run returned")
	}
	if n := a.losses.Load(); n != 1 {
		t.Fatalf("onLost called %d times, want 1", n)
	}
	c.requireHolder("", 0)
}

func TestStandbyReportsLeaderAndTakesOverAfterRelease(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1)
	b := c.start("b", nil)
	eventually(t, "b reports a as leader", func() bool {
		holder, term := b.elector.Leader()
		return holder == "a" && term == 1
	})
	if b.elector.State().Role != lease.Standby || len(b.elections()) != 0 {
		t.Fatalf("b leads while a holds the lease: %+v", b.elector.State())
	}
	a.shutdown()
	c.requireHolder("", 0)
	c.advanceTo(retryEvery)
	b.waitLeader(2)
	c.requireHolder("b", 2)
}

func TestStandbyTakesOverAfterKilledLeaderLeaseExpires(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1) // acquired at t0: the store holds it until t0 + ttl
	b := c.start("b", nil)
	eventually(t, "b's first attempt", func() bool { return len(b.store.acquireCalls()) == 1 })
	a.store.dropRelease.Store(true) // killed: it renews no more and never releases
	a.shutdown()
	c.requireHolder("a", 1)

	for i := 1; b.elector.State().Role != lease.Leader; i++ {
		if i > 20 {
			t.Fatal("b never took over")
		}
		c.advanceTo(time.Duration(i) * retryEvery)
		eventually(t, fmt.Sprintf("b's attempt %d", i+1), func() bool { return len(b.store.acquireCalls()) == i+1 })
		if last := b.store.acquireCalls()[i]; last.err == nil {
			b.waitLeader(last.term)
		}
	}
	for _, call := range b.store.acquireCalls() {
		switch {
		case call.at.Before(t0.Add(ttl)) && !errors.Is(call.err, store.ErrConflict):
			t.Fatalf("b's attempt at t0+%v: %v, want ErrConflict while a's lease lasts", call.at.Sub(t0), call.err)
		case !call.at.Before(t0.Add(ttl)) && call.err != nil:
			t.Fatalf("b's attempt at t0+%v: %v after a's lease ended", call.at.Sub(t0), call.err)
		}
	}
	if got := b.elections(); len(got) != 1 || got[0] <= 1 {
		t.Fatalf("b elected at terms %v, want once at a term above a's 1", got)
	}
}

func TestLeaderStopsWhenRenewalsFailUntilItsSafeDeadline(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1) // safe until t0 + 8s
	a.store.failRenewals.Store(true)

	// Renew at 3s; after each failure retry every second: 4s, 5s, 6s, 7s.
	for i, at := range []time.Duration{3, 4, 5, 6, 7} {
		c.advanceTo(at * time.Second)
		eventually(t, fmt.Sprintf("failed renewal %d", i+1), func() bool {
			return a.elector.State().FailedRenewals == i+1
		})
		a.requireLeading()
	}
	c.advanceTo(ttl - margin)
	a.waitStopped(1)
	if now := c.clk.Now(); !now.Before(t0.Add(ttl)) {
		t.Fatalf("leader stopped at t0+%v, not before its lease could expire at t0+%v", now.Sub(t0), ttl)
	}
	c.requireHolder("", 0) // given back on the way out

	// The store answers again: the elector competes and wins a new term.
	a.store.failRenewals.Store(false)
	c.advanceTo(ttl - margin + retryEvery)
	a.waitLeader(2)
}

func TestLeaderStopsAtOnceWhenRenewalIsRefused(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1)
	ctx := context.Background()
	if err := c.mem.ReleaseLease(ctx, leaseName, "a", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.mem.AcquireLease(ctx, leaseName, "thief", time.Hour); err != nil {
		t.Fatal(err)
	}
	c.advanceTo(renewEvery)
	a.waitStopped(1) // at 3s, long before its safe deadline at 8s
	c.advanceTo(renewEvery + retryEvery)
	eventually(t, "a reports the thief as leader", func() bool {
		holder, term := a.elector.Leader()
		return holder == "thief" && term == 2
	})
	c.requireHolder("thief", 2)
}

func TestLeaderStopsAtSafeDeadlineWhileRenewalHangs(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", nil)
	a.waitLeader(1)
	a.store.blockRenewals.Store(true)
	c.advanceTo(renewEvery)
	eventually(t, "the renewal call starts", func() bool { return a.store.renewalsStarted.Load() == 1 })
	a.requireLeading()
	c.advanceTo(ttl - margin)
	a.waitStopped(1)
	eventually(t, "the hung renewal is cancelled", func() bool { return a.store.renewalsCancelled.Load() == 1 })
}

func TestLeaderWhoseWorkReturnsResigns(t *testing.T) {
	c := newCluster(t)
	var once atomic.Bool
	a := c.start("a", func(ctx context.Context, term uint64) {
		if once.CompareAndSwap(false, true) {
			return // gives up at once, the first time
		}
		<-ctx.Done()
	})
	eventually(t, "a resigns", func() bool { return a.losses.Load() == 1 && len(a.elections()) == 1 })
	c.requireHolder("", 0)
	c.advanceTo(retryEvery / 2)
	b := c.start("b", nil)
	b.waitLeader(2)
	c.advanceTo(retryEvery)
	eventually(t, "a reports b as leader", func() bool {
		holder, term := a.elector.Leader()
		return holder == "b" && term == 2
	})
	if got := a.elections(); len(got) != 1 {
		t.Fatalf("a elected at terms %v while b leads", got)
	}
}
