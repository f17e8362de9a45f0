package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// Config wires an Engine.
type Config struct {
	Region  string
	Store   store.Store
	Hosts   *hostmgr.HostCache
	Plugins []hostmgr.Plugin
	Clock   clock.Clock
	Logger  *slog.Logger
	// Interval between passes of the goal-state loop when nothing kicks it.
	Interval time.Duration
	// RetryBackoff is the delay before the first retry of a failed run; it
	// doubles per failure up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// CreateBatch bounds how many task records one pass creates, and how
	// many tasks of stopped jobs it stops, over every job.
	CreateBatch int
	// LaunchGrace is how long a placed task waits for its host to be
	// reported before it goes back to the queue.
	LaunchGrace time.Duration
	// EntitlementPeriod is how long a pool must stay above its entitlement
	// (while another pool wants what it holds) before its preemptible work
	// is preempted: the hysteresis that keeps preemption from flapping.
	// Entitlement itself is recomputed on every pass of the loop.
	EntitlementPeriod time.Duration
	// KeepEndedTasks keeps every task of running jobs in memory, rather
	// than reading those that ended for good from the store.
	KeepEndedTasks bool
	// EventRetention is how long the history of jobs and tasks is kept in
	// the store.
	EventRetention time.Duration
	// HostPools tunes the policy that moves hosts between host pools.
	HostPools core.HostPoolConfig
	// Reservation tunes host reservations for tasks that fit no host.
	Reservation core.ReservationConfig
	// Limits bound what the region accepts.
	Limits core.Limits
	// APIAddr is the gateway address handed to tasks as PELOTON_API_ADDR.
	APIAddr string
}

func (c *Config) core() core.Settings {
	return core.Settings{
		Region: c.Region, Hosts: c.Hosts, Interval: c.Interval,
		RetryBackoff: c.RetryBackoff, MaxRetryBackoff: c.MaxRetryBackoff,
		CreateBatch: c.CreateBatch, LaunchGrace: c.LaunchGrace,
		EntitlementPeriod: c.EntitlementPeriod, KeepEndedTasks: c.KeepEndedTasks,
		EventRetention: c.EventRetention, HostPools: c.HostPools,
		Reservation: c.Reservation, Limits: c.Limits, APIAddr: c.APIAddr,
	}
}

// DefaultEventRetention is how long events are kept unless configured.
const DefaultEventRetention = 7 * 24 * time.Hour

func (c *Config) defaults() {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Limits.Defaults()
	if c.Interval == 0 {
		c.Interval = 100 * time.Millisecond
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = time.Second
	}
	if c.MaxRetryBackoff == 0 {
		c.MaxRetryBackoff = time.Minute
	}
	if c.CreateBatch == 0 {
		c.CreateBatch = 20000
	}
	if c.LaunchGrace == 0 {
		c.LaunchGrace = 30 * time.Second
	}
	if c.EntitlementPeriod == 0 {
		c.EntitlementPeriod = time.Second
	}
	if c.Hosts == nil {
		c.Hosts = hostmgr.NewHostCache()
	}
	if c.EventRetention == 0 {
		c.EventRetention = DefaultEventRetention
	}
	if c.HostPools.Period == 0 {
		c.HostPools.Period = DefaultHostPoolPeriod
	}
	if c.HostPools.DrainDeadline == 0 {
		c.HostPools.DrainDeadline = DefaultHostPoolDrainDeadline
	}
}

// Engine is the job manager of one shard: the goal-state loop and the
// operations the API calls. It is the shell around its core (core.go):
// the lock, the store, the clock, the loop's goroutines and what callers
// wait on are the Engine's; the state a pass decides on is the core's.
type Engine struct {
	c core.State

	cfg Config

	mu mutex
	// waiters are API calls waiting for the write of a change they made
	// (see awaitWrite); endedUpdates are update records that left their
	// job's entry and are still to be written.
	waiters []chan error
	// afterStep, when set (by tests), runs at the end of every pass with
	// the engine locked, to observe it exactly as the pass left it.
	afterStep func()

	// intake is how new jobs come in (create.go).
	intake intake
	// poolsMu guards the pools variable for readers that do not hold mu.
	poolsMu rwMutex

	inboxMu    mutex
	staleHosts map[model.HostID]bool
	inbox      []hostmgr.TaskStatus
	removed    []model.HostID
	// hostsMoved: hosts came, went or changed state since the last pass.
	hostsMoved bool

	// fenced stops launches: the region is cut off from the federation (or
	// a drill fenced it) and its work may be running elsewhere.
	fenced atomic.Bool
	// dropped counts the task runtimes dropped from memory (see Released).
	dropped atomic.Uint64

	// updateMu makes updates and migrations of this engine's jobs take
	// turns; poolsTurn does the same for changes of pools, and of the
	// drained clusters.
	updateMu  turn
	poolsTurn turn
	// view is the jobs as stored, for readers (see jobsView).
	view jobsView
	// stats holds the counters Stats reports.
	stats statBook
	// hosts are the host records for readers; hostPools what the host
	// pool policy remembers between its passes.
	hosts     hostBook
	hostPools hostPoolBook
	// pending counts the tasks waiting to run per pool, for its limit.
	pending pendingCount

	// recovery rebuilds the state at start (recover.go); jobs carries out
	// the commands on a job's instances (api.go).
	recovery *recoveryShell
	jobs     *jobShell
	// The shells of periodic jobs (periodic.go), the host pool policy
	// (hostpools.go), migrations (migrate_api.go), rolling updates
	// (update.go), pools (pools.go), host records (hosts.go) and
	// clusters (clusters.go).
	periodics   *periodicShell
	hostPoolRun *hostPoolShell
	migrations  *migrationShell
	updates     *updateShell
	pools       *poolShell
	hostRun     *hostShell
	clusters    *clusterShell

	kick   chan struct{}
	events *broadcaster
	evlog  *eventLog
	ready0 chan struct{} // closed when recovery finished
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	cfg.defaults()
	e := &Engine{
		cfg:        cfg,
		c:          core.NewState(cfg.core(), cfg.Plugins, cfg.Logger.With("region", cfg.Region)),
		staleHosts: map[model.HostID]bool{},
		kick:       make(chan struct{}, 1),
		events:     newBroadcaster(),
		evlog:      newEventLog(),
		ready0:     make(chan struct{}),
	}
	e.intake.e, e.recovery, e.jobs = e, &recoveryShell{e: e}, &jobShell{e: e}
	e.periodics, e.hostPoolRun = &periodicShell{e: e}, &hostPoolShell{e: e}
	e.migrations, e.updates, e.pools = &migrationShell{e: e}, &updateShell{e: e}, &poolShell{e: e}
	e.hostRun, e.clusters = &hostShell{e: e}, &clusterShell{e: e}
	e.stats.init()
	e.nameLocks()
	// Only a store that writes a pass as one write takes new jobs into it:
	// written kind by kind (Cassandra), a pass's write may wait for
	// several requests' timeouts in turn, which a create need not.
	_, e.intake.passNewJobs = cfg.Store.(store.PassWriter)
	if lockCheck.Load() {
		e.cfg.Store = guardStore(e.cfg.Store)
	}
	return e
}

// Hosts is the engine's host cache.
func (e *Engine) Hosts() *hostmgr.HostCache { return e.cfg.Hosts }

// Region is the region the engine schedules for.
func (e *Engine) Region() string { return e.cfg.Region }

// Ready is closed once the engine recovered its state from the store.
func (e *Engine) Ready() <-chan struct{} { return e.ready0 }

func (e *Engine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Run recovers state from the store, starts the plugins and runs the
// goal-state loop until ctx is cancelled.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.hostRun.load(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	if err := e.recovery.run(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	if err := e.migrations.recover(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	e.hostPoolRun.loadMoves(ctx)
	var wg sync.WaitGroup
	for name, p := range e.c.Plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(ctx, &sink{e: e, cluster: name}); err != nil && ctx.Err() == nil {
				e.c.Log.Error("host manager plugin stopped", "cluster", name, "err", err)
			}
		}()
	}
	e.recovery.reconcile(ctx)
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.writeEvents(ctx)
	}()
	go func() {
		defer wg.Done()
		e.hostRun.sync(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.periodics.run(ctx)
	}()
	if e.cfg.HostPools.Period > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.hostPoolRun.run(ctx)
		}()
	}
	close(e.ready0)
	defer wg.Wait()
	e.intake.open()
	defer e.intake.refuse(fmt.Errorf("the region's scheduler stopped: %w", store.ErrUnavailable), true)
	var outage storeOutage
	for {
		if outage.down() {
			if ok, lasted := outage.probe(ctx, e.cfg.Store, e.cfg.Clock.Now); ok {
				e.c.Log.Info("the store answers again: scheduling resumes", "outage", lasted.Round(time.Millisecond))
			} else {
				// A change or a new job waiting for a write cannot be stored
				// now: its caller is told so at once rather than left waiting
				// for the store (a change stays, for the next pass).
				e.refuseWrites()
				select {
				case <-ctx.Done():
					return nil
				case <-e.kick:
					e.refuseWrites()
				case <-e.cfg.Clock.After(outage.wait()):
				}
				continue
			}
		}
		if err := e.step(ctx); outage.failed(err, e.cfg.Clock.Now()) {
			e.c.Log.Warn("the store does not answer: scheduling waits for it", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.kick:
		case <-e.cfg.Clock.After(e.cfg.Interval):
		}
	}
}

// refuseWrites answers the changes and new jobs waiting for a write while
// the store does not answer.
func (e *Engine) refuseWrites() {
	err := fmt.Errorf("the store does not answer: %w", store.ErrUnavailable)
	e.refuseWaiters(err)
	e.intake.refuse(err, false)
}

// sink receives a plugin's reports.
type sink struct {
	e       *Engine
	cluster string
}

func (s *sink) HostsUpdated(hosts []model.Host) {
	s.e.cfg.Hosts.Update(hosts)
	s.e.inboxMu.Lock()
	for _, h := range hosts {
		s.e.staleHosts[h.ID] = true
	}
	s.e.hostsMoved = true
	s.e.inboxMu.Unlock()
	s.e.wake()
}

func (s *sink) HostsRemoved(ids []model.HostID) {
	s.e.cfg.Hosts.Remove(ids)
	s.e.inboxMu.Lock()
	s.e.removed = append(s.e.removed, ids...)
	for _, id := range ids {
		s.e.staleHosts[id] = true
	}
	s.e.hostsMoved = true
	s.e.inboxMu.Unlock()
	s.e.wake()
}

func (s *sink) TaskStatuses(sts []hostmgr.TaskStatus) { s.e.pushStatuses(sts) }

func (e *Engine) pushStatuses(sts []hostmgr.TaskStatus) {
	e.inboxMu.Lock()
	e.inbox = append(e.inbox, sts...)
	e.inboxMu.Unlock()
	e.wake()
}

// lock takes the engine's lock and brings in jobs accepted since the last
// time, so every reader sees every acknowledged job.
func (e *Engine) lock() {
	e.hold()
	e.absorbIncoming()
}

// hold takes the engine's lock and hands the core the time and whether
// launches are fenced, for what it decides while the lock is held.
func (e *Engine) hold() {
	e.mu.Lock()
	e.stamp()
}

func (e *Engine) stamp() {
	e.c.Now = e.cfg.Clock.Now()
	e.c.LaunchFenced = e.fenced.Load()
}

// tryLock is lock when nobody holds e.mu, and false otherwise.
func (e *Engine) tryLock() bool {
	if !e.mu.TryLock() {
		return false
	}
	e.stamp()
	e.absorbIncoming()
	return true
}

// absorbIncoming moves the jobs accepted since into the engine's state;
// callers hold e.mu.
func (e *Engine) absorbIncoming() {
	for _, j := range e.intake.takeIncoming() {
		if _, ok := e.c.Jobs[j.ID]; ok {
			// Loaded from the store meanwhile (takeInExisting).
			e.pending.absorbed(j.Spec.Pool, int64(j.Spec.OwnTasks()))
			continue
		}
		e.c.Adopt(j)
		e.pending.absorbed(j.Spec.Pool, int64(j.Spec.OwnTasks()))
	}
}

// SetFenced stops (or resumes) launching work. Placed tasks wait; running
// ones are left alone.
func (e *Engine) SetFenced(fenced bool) {
	if e.fenced.Swap(fenced) != fenced {
		e.c.Log.Warn("fencing changed", "fenced", fenced)
		e.wake()
	}
}

// Fenced reports whether launches are stopped.
func (e *Engine) Fenced() bool { return e.fenced.Load() }

// Released counts the task runtimes the engine dropped from memory since it
// started: tasks that ended for good, and the rest of a job's tasks when
// the job finished. A process may give memory back to the system once many
// were dropped.
func (e *Engine) Released() uint64 { return e.dropped.Load() }

// QueuedEvents is how many events wait to be written to the store.
func (e *Engine) QueuedEvents() int { return e.evlog.queued() }
