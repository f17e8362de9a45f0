package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/store"
)

// Sentinel errors of the job manager; the API edge maps them to codes.
var (
	ErrNotFound    = errors.New("not found")
	ErrNotTerminal = errors.New("job has not finished")
	ErrInvalid     = errors.New("invalid argument")
	ErrNoLogs      = errors.New("logs not available")
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
	HostPools HostPoolConfig
	// Reservation tunes host reservations for tasks that fit no host.
	Reservation ReservationConfig
	// Limits bound what the region accepts.
	Limits Limits
	// APIAddr is the gateway address handed to tasks as PELOTON_API_ADDR.
	APIAddr string
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
	c.Limits.defaults()
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

// jobEntry is a job with its tasks, as the engine keeps it in memory.
type jobEntry struct {
	job     *model.Job
	tasks   []*model.TaskRuntime // by instance; len == job.Status.TasksCreated
	counts  taskCounts
	waiting []uint32 // instances in INITIALIZED, oldest first
	everRan bool
	// dirty: tasks changed (publish the job's counts); record: the job
	// record itself changed and must be written.
	dirty  bool
	record bool
	// inWork mirrors membership of the engine's work set; lateVisit says
	// the job was visited while a pass wrote, so that pass keeps it there.
	inWork    bool
	lateVisit bool
	// cold counts tasks that ended for good and left memory (see isCold).
	cold int
	// evicted: the job finished and its tasks were dropped from memory;
	// they are read from the store when asked for.
	evicted bool
	// killSent records runs a kill was sent for.
	killSent map[model.RunID]bool
	// configs holds the config versions the job's runs use, by version.
	configs map[uint64]*configView
	// prefer says where an instance's next run should go: its own host (an
	// in-place update), its job's preferred clusters, or the cluster a
	// migration moves it to (see placementPref).
	prefer map[uint32]placementPref
	// migration is the job's part in a running migration, nil otherwise.
	migration *migration.Job
	// sameTasks caches, per pair of config versions without overrides,
	// whether their tasks are the same.
	sameTasks map[[2]uint64]bool
	// removed holds the last run and stored revision of instances an
	// update removed: made again, they go on from there, so a run id is
	// never used twice.
	removed map[uint32]removedTask
}

// Engine is the job manager of one shard: the goal-state loop and the
// operations the API calls.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	plugins map[string]hostmgr.Plugin

	mu   mutex
	jobs map[model.JobID]*jobEntry
	// longRunning holds the jobs of jobs whose type is not batch (a job's
	// type never changes): the ones an SLA paces (preemptionRoom), without
	// a walk over every job of the region each pass.
	longRunning map[model.JobID]*jobEntry
	// work holds the jobs the next pass must visit: those with changes,
	// waiting tasks, or unfinished creation or stops. Others are left alone.
	work map[model.JobID]*jobEntry
	// revocable holds unfinished jobs of revocable work.
	revocable  map[model.JobID]bool
	sched      *resmgr.Scheduler
	restarting map[resmgr.GangID]*gangRestart
	ready      []model.TaskID
	dirtyTasks []*model.TaskRuntime
	// runEnds are the ends of runs that ended and were followed by a new
	// run of the same task within one pass: the pass's one event per task
	// carries only the new run, so each ended run gets its own event.
	runEnds []Event
	effects []effect
	// writing is set while a pass writes with the lock released.
	writing bool
	// waiters are API calls waiting for the write of a change they made
	// (see awaitWrite); endedUpdates are update records that left their
	// job's entry and are still to be written.
	waiters      []chan error
	endedUpdates []*model.Update
	placedAt     map[model.TaskID]time.Time
	passes       uint64
	// changeBudget is how many tasks the pass may still create or stop.
	changeBudget int
	// lastDrain is when the drain step last ran.
	lastDrain time.Time
	// afterStep, when set (by tests), runs at the end of every pass with
	// the engine locked, to observe it exactly as the pass left it.
	afterStep func()
	// index is what hosts have free, kept across passes; released lists
	// hosts whose runs ended since, staleHosts those plugins reported.
	index      *placement.HostIndex
	indexBuilt time.Time
	released   map[model.HostID]bool
	// reserve holds hosts for tasks that fit no host (reserve.go);
	// hostCounts counts runs of jobs with placement limits per host
	// (limitcounts.go).
	reserve    hostReservations
	hostCounts limitCounts
	pools      map[string]*model.Pool
	// poolParents: the pools that have children (see setPoolsLocked).
	poolParents map[string]bool
	shares      map[string]PoolShare
	tree        *entitlement.Tree

	// incoming holds jobs accepted and stored but not yet in jobs;
	// creates the new jobs waiting for the next pass to store them, while
	// passCreates (the loop runs) says new jobs go through a pass.
	incomingMu  mutex
	incoming    []*model.Job
	creates     []*createRequest
	passCreates bool
	passWriting bool
	// passNewJobs: the store writes a pass as one write (store.PassWriter),
	// so new jobs may go into it.
	passNewJobs bool
	// pending counts the tasks waiting to run per pool, for its limit.
	pending pendingCount
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

	hosts     hostBook
	hostPools hostPoolBook
	// view is the jobs as stored, for readers (see jobsView).
	view jobsView

	// stats holds the counters Stats reports.
	stats statBook
	// clusters holds the drained clusters; migrations the running ones.
	clusters   clusterBook
	migrations migrationBook
	// rollouts holds the rolling update of each job that has one running,
	// or one ended whose record is not written yet (shard/rollout).
	rollouts map[model.JobID]*rollout.Job

	kick   chan struct{}
	events *broadcaster
	evlog  *eventLog
	ready0 chan struct{} // closed when recovery finished
}

// effect is a side effect to carry out once state is persisted.
type effect struct {
	launch *hostmgr.Launch
	kill   *hostmgr.RunRef
	grace  time.Duration
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	cfg.defaults()
	e := &Engine{
		cfg:         cfg,
		log:         cfg.Logger.With("region", cfg.Region),
		plugins:     map[string]hostmgr.Plugin{},
		jobs:        map[model.JobID]*jobEntry{},
		rollouts:    map[model.JobID]*rollout.Job{},
		longRunning: map[model.JobID]*jobEntry{},
		work:        map[model.JobID]*jobEntry{},
		revocable:   map[model.JobID]bool{},
		restarting:  map[resmgr.GangID]*gangRestart{},
		placedAt:    map[model.TaskID]time.Time{},
		released:    map[model.HostID]bool{},
		hostCounts:  limitCounts{},
		staleHosts:  map[model.HostID]bool{},
		migrations:  migrationBook{running: map[model.MigrationID]*model.Migration{}, dirty: map[model.MigrationID]bool{}},
		kick:        make(chan struct{}, 1),
		events:      newBroadcaster(),
		evlog:       newEventLog(),
		ready0:      make(chan struct{}),
	}
	e.reserve.cfg = cfg.Reservation.withDefaults()
	e.stats.init()
	e.nameLocks()
	// Only a store that writes a pass as one write takes new jobs into it:
	// written kind by kind (Cassandra), a pass's write may wait for
	// several requests' timeouts in turn, which a create need not.
	_, e.passNewJobs = cfg.Store.(store.PassWriter)
	if lockCheck.Load() {
		e.cfg.Store = guardStore(e.cfg.Store)
	}
	passes := int((cfg.EntitlementPeriod + cfg.Interval - 1) / cfg.Interval)
	e.sched = resmgr.New(nil, resmgr.Config{PreemptAfterPasses: max(passes, 1)})
	for _, p := range cfg.Plugins {
		e.plugins[p.Cluster()] = p
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
	if err := e.loadHosts(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	if err := e.recover(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	if err := e.recoverMigrations(ctx); err != nil {
		return fmt.Errorf("recover state: %w", err)
	}
	e.loadHostPoolMoves(ctx)
	var wg sync.WaitGroup
	for name, p := range e.plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(ctx, &sink{e: e, cluster: name}); err != nil && ctx.Err() == nil {
				e.log.Error("host manager plugin stopped", "cluster", name, "err", err)
			}
		}()
	}
	e.reconcile(ctx)
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.writeEvents(ctx)
	}()
	go func() {
		defer wg.Done()
		e.syncHosts(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.runPeriodic(ctx)
	}()
	if e.cfg.HostPools.Period > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.runHostPools(ctx)
		}()
	}
	close(e.ready0)
	defer wg.Wait()
	e.incomingMu.Lock()
	e.passCreates = true
	e.incomingMu.Unlock()
	defer e.refuseCreates(fmt.Errorf("the region's scheduler stopped: %w", store.ErrUnavailable), true)
	var outage storeOutage
	for {
		if outage.down() {
			if ok, lasted := outage.probe(ctx, e.cfg.Store, e.cfg.Clock.Now); ok {
				e.log.Info("the store answers again: scheduling resumes", "outage", lasted.Round(time.Millisecond))
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
			e.log.Warn("the store does not answer: scheduling waits for it", "err", err)
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
	e.refuseCreates(err, false)
}

// recover loads jobs and tasks from the store and rebuilds the in-memory
// state: queues, counts and host allocations. The store is read first,
// with no lock held; the state is then built under the lock.
func (e *Engine) recover(ctx context.Context) error {
	pools, err := e.readPools(ctx)
	if err != nil {
		return err
	}
	jobs, err := e.cfg.Store.ListJobs(ctx)
	if err != nil {
		return err
	}
	loaded := make([]loadedJob, 0, len(jobs))
	for _, j := range jobs {
		l, err := e.loadJob(ctx, j)
		if err != nil {
			return err
		}
		loaded = append(loaded, l)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.installPools(pools); err != nil {
		return err
	}
	ntasks := 0
	for _, l := range loaded {
		ntasks += e.installJob(l)
	}
	snaps := make([]*model.Job, 0, len(e.jobs))
	for _, je := range e.jobs {
		snaps = append(snaps, e.snapshotJob(je))
	}
	e.view.add(snaps...)
	e.view.merge()
	e.log.Info("recovered state", "jobs", len(jobs), "tasks", ntasks)
	return nil
}

// loadedJob is a job as recover read it: its entry with its tasks, and its
// running update.
type loadedJob struct {
	je     *jobEntry
	update *model.Update
}

// loadJob reads what a recovered job needs from the store: for a job that
// has not finished, its tasks, the configs its runs use and its running
// update. No lock is held.
func (e *Engine) loadJob(ctx context.Context, j *model.Job) (loadedJob, error) {
	je := &jobEntry{job: j, killSent: map[model.RunID]bool{}}
	if j.Status.State.IsTerminal() {
		return loadedJob{je: je}, nil
	}
	tasks, err := e.cfg.Store.ListTasks(ctx, j.ID)
	if err != nil {
		return loadedJob{}, err
	}
	j.ConfigVersion = max(j.ConfigVersion, 1)
	je.tasks = make([]*model.TaskRuntime, j.Status.TasksCreated)
	for _, t := range tasks {
		if int(t.ID.Instance) < len(je.tasks) {
			je.tasks[t.ID.Instance] = t
		} else {
			je.rememberRemoved(t) // an update removed it
		}
	}
	// Runs hold what their own config asked for.
	if err := e.loadRunConfigs(ctx, je); err != nil {
		return loadedJob{}, err
	}
	u, err := e.readUpdate(ctx, j)
	if err != nil {
		return loadedJob{}, err
	}
	// A rollback needs the config it goes back to: read now, so that no
	// pass reads the store under the lock for it.
	if u != nil && u.FromVersion != j.ConfigVersion && je.configs[u.FromVersion] == nil {
		spec, err := e.cfg.Store.GetJobConfig(ctx, j.ID, u.FromVersion)
		if err != nil {
			return loadedJob{}, fmt.Errorf("config %d of job %s: %w", u.FromVersion, j.ID, err)
		}
		if je.configs == nil {
			je.configs = map[uint64]*configView{}
		}
		je.configs[u.FromVersion] = newConfigView(spec)
	}
	return loadedJob{je: je, update: u}, nil
}

// installJob puts a recovered job in the engine's state and returns how
// many of its tasks it took in; callers hold e.mu. A finished job keeps
// only its counts: the store has its tasks.
func (e *Engine) installJob(l loadedJob) int {
	je, j := l.je, l.je.job
	if j.Status.State.IsTerminal() {
		je.evicted = true
		for st, n := range j.Status.TaskStates {
			if int(st) < len(je.counts) {
				je.counts[st] = n
			}
		}
		e.addJob(je)
		return 0
	}
	if j.Spec.Type == model.JobDaemon {
		j.Spec.Instances = j.Status.TasksCreated // made per host
		e.hostsMoved = true
	}
	for i := range je.tasks {
		e.installTask(je, i)
	}
	if l.update != nil {
		je.current() // the target's own count, before extra canaries raise the job's
		e.rollouts[j.ID] = rollout.Recover(l.update, je.tasks, gangSize(&j.Spec))
		e.syncExtraCanaries(je, e.rollouts[j.ID])
		e.view.setUpdate(l.update)
	}
	e.addJob(je)
	e.visit(je)
	if j.Spec.Revocable {
		e.revocable[j.ID] = true
	}
	e.sched.SetJobLimit(j.ID, j.Spec.MaxRunning)
	e.recoverGangs(je)
	return len(je.tasks)
}

// installTask takes in a recovered job's task i: its count, its place in
// the queue or on its host; callers hold e.mu.
func (e *Engine) installTask(je *jobEntry, i int) {
	j := je.job
	t := je.tasks[i]
	if t == nil { // created count ran ahead of a lost write: recreate
		t = e.newTask(j, uint32(i))
		je.tasks[i] = t
		e.dirtyTasks = append(e.dirtyTasks, t)
	}
	if t.StartTime.After(time.Time{}) {
		je.everRan = true
	}
	switch t.State {
	case model.TaskPlacing, model.TaskReady:
		// Admission and placement are redone from the queue.
		t.State = model.TaskPending
		e.dirtyTasks = append(e.dirtyTasks, t)
	}
	je.counts[t.State]++
	switch {
	case t.State == model.TaskInitialized:
		je.waiting = append(je.waiting, t.ID.Instance)
	case t.State.HoldsResources():
		e.cfg.Hosts.Allocate(t.Host, je.taskResources(t), j.Spec.Revocable)
		e.cfg.Hosts.HoldPorts(t.Host, t.Ports())
		if t.State == model.TaskPlaced {
			e.placedAt[t.ID] = e.cfg.Clock.Now()
		}
	}
	if t.State.IsTerminal() && gangSize(&j.Spec) == 1 && !e.cfg.KeepEndedTasks {
		je.tasks[i] = coldMarks[t.State]
		je.cold++
	}
}

// reconcile asks each plugin for the state of the runs the store says are
// launched, so nothing running is forgotten after a restart.
func (e *Engine) reconcile(ctx context.Context) {
	e.mu.Lock()
	byCluster := map[string][]hostmgr.RunRef{}
	for _, je := range e.jobs {
		for _, t := range je.tasks {
			if t.State == model.TaskLaunching || t.State == model.TaskRunning {
				byCluster[t.Cluster] = append(byCluster[t.Cluster], hostmgr.RunRef{Run: t.RunID(), Host: t.Host})
			}
		}
	}
	e.mu.Unlock()
	for cluster, refs := range byCluster {
		p, ok := e.plugins[cluster]
		if !ok {
			// The cluster is gone from the configuration: its runs are lost.
			var sts []hostmgr.TaskStatus
			for _, r := range refs {
				sts = append(sts, hostmgr.TaskStatus{Run: r.Run, Host: r.Host, State: model.TaskLost,
					Reason: model.ReasonHostLost, Message: "cluster " + cluster + " is not configured", Time: e.cfg.Clock.Now()})
			}
			e.pushStatuses(sts)
			continue
		}
		if err := p.Reconcile(ctx, refs); err != nil {
			e.log.Error("reconcile failed", "cluster", cluster, "err", err)
		}
	}
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

// sortedJobs returns job entries in creation order, for deterministic passes.
func (e *Engine) sortedJobs() []*jobEntry { return sortJobs(e.jobs) }

// sortJobs orders job entries by creation, for deterministic passes.
func sortJobs(m map[model.JobID]*jobEntry) []*jobEntry {
	out := make([]*jobEntry, 0, len(m))
	for _, je := range m {
		out = append(out, je)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].job, out[j].job
		if !a.Status.CreateTime.Equal(b.Status.CreateTime) {
			return a.Status.CreateTime.Before(b.Status.CreateTime)
		}
		return a.ID < b.ID
	})
	return out
}

// lock takes the engine's lock and brings in jobs accepted since the last
// time, so every reader sees every acknowledged job.
func (e *Engine) lock() {
	e.mu.Lock()
	e.absorbIncoming()
}

// tryLock is lock when nobody holds e.mu, and false otherwise.
func (e *Engine) tryLock() bool {
	if !e.mu.TryLock() {
		return false
	}
	e.absorbIncoming()
	return true
}

// absorbIncoming moves the jobs accepted since into the engine's state;
// callers hold e.mu.
func (e *Engine) absorbIncoming() {
	e.incomingMu.Lock()
	in := e.incoming
	e.incoming = nil
	e.incomingMu.Unlock()
	for _, j := range in {
		if _, ok := e.jobs[j.ID]; ok {
			// Loaded from the store meanwhile (takeInExisting).
			e.pending.absorbed(j.Spec.Pool, int64(j.Spec.OwnTasks()))
			continue
		}
		je := &jobEntry{job: j, killSent: map[model.RunID]bool{}}
		e.addJob(je)
		e.visit(je)
		if j.Spec.Revocable {
			e.revocable[j.ID] = true
		}
		e.sched.SetJobLimit(j.ID, j.Spec.MaxRunning)
		e.pending.absorbed(j.Spec.Pool, int64(j.Spec.OwnTasks()))
	}
}

// addJob puts a job in the engine's state; callers hold e.mu.
func (e *Engine) addJob(je *jobEntry) {
	e.jobs[je.job.ID] = je
	if je.job.Spec.LongRunning() {
		e.longRunning[je.job.ID] = je
	}
}

// removeJob takes a job out of the engine's state; callers hold e.mu.
func (e *Engine) removeJob(id model.JobID) {
	delete(e.jobs, id)
	delete(e.rollouts, id)
	delete(e.longRunning, id)
}

// SetFenced stops (or resumes) launching work. Placed tasks wait; running
// ones are left alone.
func (e *Engine) SetFenced(fenced bool) {
	if e.fenced.Swap(fenced) != fenced {
		e.log.Warn("fencing changed", "fenced", fenced)
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
