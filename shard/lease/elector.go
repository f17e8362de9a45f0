package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store"
)

// ErrAlreadyRunning means Run was called on an Elector that is running.
var ErrAlreadyRunning = errors.New("lease elector already running")

// Config says which lease an Elector competes for and how.
type Config struct {
	// Store keeps the lease; required.
	Store store.LeaseStore
	// Name is the lease, the same for every process of the shard, such
	// as "shard/<region>"; required.
	Name string
	// Holder names this process, unique among them and stable for its
	// lifetime (for example host:port of its API); required. Standbys
	// report it as the leader.
	Holder string
	// TTL is how long the store holds the lease after each renewal;
	// DefaultTTL when zero. A standby takes over at most about TTL plus
	// RetryEvery after the leader dies.
	TTL time.Duration
	// RenewEvery is how often the leader renews; TTL/3 when zero. It must
	// be less than TTL - SafetyMargin.
	RenewEvery time.Duration
	// RetryEvery is how often a standby tries to take the lease, and (at
	// most) how soon the leader retries a renewal that failed; TTL/5
	// when zero.
	RetryEvery time.Duration
	// SafetyMargin is how long before the store could let the lease go
	// the leader stops using it, for the clocks' differences; TTL/5 when
	// zero.
	SafetyMargin time.Duration
	// Clock keeps time; the wall clock when nil.
	Clock clock.Clock
	// Logger receives state transitions; discarded when nil.
	Logger *slog.Logger
}

// Role is whether an Elector leads.
type Role int

const (
	Standby Role = iota
	Leader
)

func (r Role) String() string {
	if r == Leader {
		return "leader"
	}
	return "standby"
}

// State is what an Elector knows.
type State struct {
	Role Role
	// Holder and Term are the lease's holder and term as last seen: this
	// process while it leads; "" and 0 when unknown or free.
	Holder string
	Term   uint64
	// SafeUntil is, while leading, when the lease stops being safe to use
	// unless renewed.
	SafeUntil time.Time
	// FailedRenewals counts, while leading, the renewals in a row the
	// store did not answer.
	FailedRenewals int
}

// Elector competes for one lease. Create it with New; call Run once.
type Elector struct {
	cfg     Config
	t       timing
	clk     clock.Clock
	log     *slog.Logger
	running atomic.Bool

	mu    sync.Mutex
	state State
}

// New checks cfg and returns an Elector; ErrInvalidConfig when cfg cannot
// work.
func New(cfg Config) (*Elector, error) {
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: no store", ErrInvalidConfig)
	case cfg.Name == "":
		return nil, fmt.Errorf("%w: no lease name", ErrInvalidConfig)
	case cfg.Holder == "":
		return nil, fmt.Errorf("%w: no holder name", ErrInvalidConfig)
	}
	t, err := newTiming(cfg.TTL, cfg.RenewEvery, cfg.RetryEvery, cfg.SafetyMargin)
	if err != nil {
		return nil, err
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{
		cfg: cfg, t: t, clk: clk,
		log: logger.With("lease", cfg.Name, "holder", cfg.Holder),
	}, nil
}

// State returns what the Elector knows now.
func (e *Elector) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

// Leader returns the lease's holder and term as last seen ("" and 0 when
// unknown or free); the holder is this process's Holder while it leads.
func (e *Elector) Leader() (holder string, term uint64) {
	s := e.State()
	return s.Holder, s.Term
}

func (e *Elector) setState(s State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state = s
}

// Run competes for the lease until ctx is cancelled, then returns nil.
//
// While standby it tries to take the lease every RetryEvery and records
// who holds it (Leader). Once elected it calls onElected in a goroutine
// of its own with a context that is cancelled when leadership ends: when
// ctx is cancelled, when the store gives the lease to another, or when
// the lease could not be renewed before its safe deadline. onElected
// must return soon after its context is cancelled. Run waits for it,
// gives the lease back, calls onLost (when not nil) and, unless ctx is
// done, becomes a standby again. If onElected returns by itself, the
// Elector resigns the same way and waits RetryEvery before competing
// again, so another process can take over.
func (e *Elector) Run(ctx context.Context, onElected func(ctx context.Context, term uint64), onLost func()) error {
	if onElected == nil {
		return fmt.Errorf("%w: no onElected callback", ErrInvalidConfig)
	}
	if !e.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer e.running.Store(false)
	e.log.Info("lease elector started", "ttl", e.t.ttl, "renew_every", e.t.renewEvery,
		"retry_every", e.t.retryEvery, "safety_margin", e.t.margin)
	for {
		term, first, ok := e.campaign(ctx)
		if !ok {
			return nil
		}
		ended := e.lead(ctx, term, first, onElected)
		if onLost != nil {
			onLost()
		}
		if !e.wait(ctx, ended.Add(e.t.retryEvery)) {
			return nil
		}
	}
}

// wait blocks until the clock reaches at (true) or ctx is done (false).
func (e *Elector) wait(ctx context.Context, at time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-e.clk.After(at.Sub(e.clk.Now())):
		return true
	}
}

// campaign tries to take the lease every RetryEvery until it does (ok) or
// ctx is done. first is the new leader's first step.
func (e *Elector) campaign(ctx context.Context) (term uint64, first leaderStep, ok bool) {
	storeDown := false
	for {
		sentAt := e.clk.Now()
		term, err := e.cfg.Store.AcquireLease(ctx, e.cfg.Name, e.cfg.Holder, e.t.ttl)
		if ctx.Err() != nil {
			if err == nil {
				e.release(ctx, term)
			}
			return 0, leaderStep{}, false
		}
		switch {
		case err == nil:
			if safe, ok := elected(e.clk.Now(), sentAt, e.t); ok {
				return term, leaderStep{safeUntil: safe, renewAt: sentAt.Add(e.t.renewEvery)}, true
			}
			e.log.Warn("lease acquired too late to use; giving it back", "term", term)
			e.release(ctx, term)
		case errors.Is(err, store.ErrConflict):
			storeDown = false
			e.observe(ctx)
		default:
			if !storeDown {
				e.log.Warn("cannot reach the lease store; retrying", "error", err)
			}
			storeDown = true
		}
		if !e.wait(ctx, sentAt.Add(e.t.retryEvery)) {
			return 0, leaderStep{}, false
		}
	}
}

// observe records who holds the lease, logging a change of leader.
func (e *Elector) observe(ctx context.Context) {
	holder, term, err := e.cfg.Store.LeaseHolder(ctx, e.cfg.Name)
	if err != nil {
		return // the next attempt tries again
	}
	if old := e.State(); old.Holder != holder || old.Term != term {
		e.log.Info("standby: lease holder changed", "leader", holder, "term", term)
	}
	e.setState(State{Role: Standby, Holder: holder, Term: term})
}

// lead runs onElected while the lease is held, and returns once it has
// returned and the lease has been given back, with the time leadership
// ended.
func (e *Elector) lead(ctx context.Context, term uint64, first leaderStep, onElected func(context.Context, uint64)) time.Time {
	e.setState(State{Role: Leader, Holder: e.cfg.Holder, Term: term, SafeUntil: first.safeUntil})
	e.log.Info("elected leader", "term", term, "safe_until", first.safeUntil)
	leaderCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		onElected(leaderCtx, term)
	}()
	reason := e.hold(ctx, term, first, done)
	ended := e.clk.Now()
	stop()
	<-done
	e.release(ctx, term)
	e.setState(State{Role: Standby})
	e.log.Info("stopped leading", "term", term, "reason", reason)
	return ended
}

// hold renews the lease until leadership ends, and says why it ended.
func (e *Elector) hold(ctx context.Context, term uint64, step leaderStep, done <-chan struct{}) string {
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return "shutting down"
		case <-done:
			return "the leader's work returned"
		case <-e.clk.After(step.renewAt.Sub(e.clk.Now())):
		}
		now := e.clk.Now()
		if expired(now, step.safeUntil) {
			return string(lostUnrenewed)
		}
		outcome, err := e.renew(ctx, term, step.safeUntil, done)
		if ctx.Err() != nil {
			return "shutting down"
		}
		step = afterRenewal(e.clk.Now(), now, step.safeUntil, outcome, e.t)
		if step.lost != stillLeading {
			if err != nil {
				return fmt.Sprintf("%s: %v", step.lost, err)
			}
			return string(step.lost)
		}
		switch {
		case outcome == failed:
			failures++
			e.log.Warn("lease renewal failed; retrying", "term", term, "safe_until", step.safeUntil,
				"failures", failures, "error", err)
		case failures > 0:
			e.log.Info("lease renewed again", "term", term, "after_failures", failures)
			failures = 0
		}
		e.setState(State{Role: Leader, Holder: e.cfg.Holder, Term: term, SafeUntil: step.safeUntil, FailedRenewals: failures})
	}
}

// renew calls the store, but gives up waiting when the lease stops being
// safe (failed) or the leader's work returns.
func (e *Elector) renew(ctx context.Context, term uint64, safeUntil time.Time, done <-chan struct{}) (renewal, error) {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	answer := make(chan error, 1)
	go func() {
		answer <- e.cfg.Store.RenewLease(callCtx, e.cfg.Name, e.cfg.Holder, term, e.t.ttl)
	}()
	select {
	case err := <-answer:
		switch {
		case err == nil:
			return renewed, nil
		case errors.Is(err, store.ErrConflict):
			return refused, err
		default:
			return failed, err
		}
	case <-e.clk.After(safeUntil.Sub(e.clk.Now())):
		return failed, errors.New("renewal still unanswered")
	case <-done:
		return failed, errors.New("the leader's work returned during a renewal")
	}
}

// release gives the lease back, also after ctx is cancelled, waiting at
// most one TTL of wall time (past that the lease has ended anyway).
func (e *Elector) release(ctx context.Context, term uint64) {
	releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.t.ttl)
	defer cancel()
	if err := e.cfg.Store.ReleaseLease(releaseCtx, e.cfg.Name, e.cfg.Holder, term); err != nil {
		e.log.Warn("could not give the lease back; it ends by itself", "term", term, "error", err)
	}
}
