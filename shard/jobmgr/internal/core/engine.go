package core

import (
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// Sentinel errors of the job manager; the API edge maps them to codes.
var (
	ErrNotFound    = errors.New("not found")
	ErrNotTerminal = errors.New("job has not finished")
	ErrInvalid     = errors.New("invalid argument")
	ErrNoLogs      = errors.New("logs not available")
)

// Settings is what of Config the core decides with: everything but the
// store and the clock.
type Settings struct {
	Region            string
	Hosts             *hostmgr.HostCache
	Interval          time.Duration
	RetryBackoff      time.Duration
	MaxRetryBackoff   time.Duration
	CreateBatch       int
	LaunchGrace       time.Duration
	EntitlementPeriod time.Duration
	KeepEndedTasks    bool
	EventRetention    time.Duration
	HostPools         HostPoolConfig
	Reservation       ReservationConfig
	Limits            Limits
	APIAddr           string
}

// Job is a job with its tasks, as the engine keeps it in memory.
type Job struct {
	Job     *model.Job
	Tasks   []*model.TaskRuntime // by instance; len == job.Status.TasksCreated
	Counts  TaskCounts
	waiting []uint32 // instances in INITIALIZED, oldest first
	everRan bool
	// Dirty: tasks changed (publish the job's counts); record: the job
	// record itself changed and must be written.
	Dirty  bool
	Record bool
	// InWork mirrors membership of the engine's work set; lateVisit says
	// the job was visited while a pass wrote, so that pass keeps it there.
	InWork    bool
	lateVisit bool
	// Cold counts tasks that ended for good and left memory (see isCold).
	Cold int
	// Evicted: the job finished and its tasks were dropped from memory;
	// they are read from the store when asked for.
	Evicted bool
	// KillSent records runs a kill was sent for.
	KillSent map[model.RunID]bool
	// Configs holds the config versions the job's runs use, by version.
	Configs map[uint64]*ConfigView
	// prefer says where an instance's next run should go: its own host (an
	// in-place update), its job's preferred clusters, or the cluster a
	// migration moves it to (see placementPref).
	prefer map[uint32]placementPref
	// sameTasks caches, per pair of config versions without overrides,
	// whether their tasks are the same.
	sameTasks map[[2]uint64]bool
	// Removed holds the last run and stored revision of instances an
	// update Removed: made again, they go on from there, so a run id is
	// never used twice.
	Removed map[uint32]removedTask
}

// State is the state a pass decides on, and the decisions that change it:
// jobs and their tasks, the work set, pools, the queue, the host index
// and the capabilities' per-job state. It holds no lock, no store and no
// clock: the Engine takes its lock around it, hands it the time (now) and
// the pass's inputs, and writes and carries out what it leaves behind
// (the write set, effects, events). Its methods cannot reach the store
// or the clock, because it has neither.
type State struct {
	Settings Settings
	// Now is the time of the step or command being carried out, handed in
	// by the Engine whenever it takes its lock.
	Now time.Time
	// LaunchFenced: launches are stopped (Engine.SetFenced), as of the
	// last time the Engine took its lock.
	LaunchFenced bool
	// DroppedTasks counts task runtimes dropped from memory; the Engine
	// publishes it for Released.
	DroppedTasks uint64
	// ToRead are the tasks the core needs read from the store (ended
	// instances that left memory); readBack holds them once read.
	ToRead   map[model.TaskID]bool
	ReadBack map[model.TaskID]*model.TaskRuntime
	// Daemons and drains are the books of daemon jobs and host drains.
	Daemons daemonBook
	drains  drainBook
	Log     *slog.Logger
	Plugins map[string]hostmgr.Plugin
	Jobs    map[model.JobID]*Job
	// LongRunning holds the jobs of jobs whose type is not batch (a job's
	// type never changes): the ones an SLA paces (preemptionRoom), without
	// a walk over every job of the region each pass.
	LongRunning map[model.JobID]*Job
	// Work holds the jobs the next pass must visit: those with changes,
	// waiting tasks, or unfinished creation or stops. Others are left alone.
	Work map[model.JobID]*Job
	// Revocable is the book of revocable work (place.go).
	Revocable revocableBook
	// Queue is the book of gangs waiting, admitted and restarting (gang.go).
	Queue      queueBook
	dirtyTasks []*model.TaskRuntime
	// runEnds are the ends of runs that ended and were followed by a new
	// run of the same task within one pass: the pass's one event per task
	// carries only the new run, so each ended run gets its own event.
	runEnds []Event
	Effects []Effect
	// Writing is set while a pass writes with the lock released.
	Writing      bool
	endedUpdates []*model.Update
	placedAt     map[model.TaskID]time.Time
	passes       uint64
	// ChangeBudget is how many tasks the pass may still create or stop.
	ChangeBudget int
	// Index is the book of what hosts have free, kept across passes
	// (place.go).
	Index indexBook
	// Reserve holds hosts for tasks that fit no host (reserve.go).
	Reserve hostReservations
	Pools   poolBook

	// HostRecs are the host records (drains, host pools) as last kept
	// (Engine.keepHostRecords).
	HostRecs map[model.HostID]*model.HostRecord

	// figures are what the core observed since the Engine last took them
	// into its statBook.
	figures Figures
	// Clusters holds the drained Clusters; migrations the running ones.
	Clusters   clusterBook
	Migrations migrationBook
	// Rollouts holds the rolling update of each job that has one running,
	// or one ended whose record is not written yet (shard/rollout).
	Rollouts rolloutBook
}

// Effect is a side Effect to carry out once state is persisted.
type Effect struct {
	Launch *hostmgr.Launch
	Kill   *hostmgr.RunRef
	Grace  time.Duration
}

// NewState returns an empty core for a config that took its defaults.
func NewState(cfg Settings, plugins []hostmgr.Plugin, log *slog.Logger) State {
	c := State{
		Settings:    cfg,
		Log:         log,
		Plugins:     map[string]hostmgr.Plugin{},
		Jobs:        map[model.JobID]*Job{},
		Rollouts:    map[model.JobID]*rollout.Job{},
		LongRunning: map[model.JobID]*Job{},
		Work:        map[model.JobID]*Job{},
		Revocable:   revocableBook{Jobs: map[model.JobID]bool{}},
		Queue:       queueBook{Restarting: map[resmgr.GangID]*gangRestart{}},
		placedAt:    map[model.TaskID]time.Time{},
		Index:       indexBook{released: map[model.HostID]bool{}, stale: map[model.HostID]bool{}, counts: limitCounts{}},
		ToRead:      map[model.TaskID]bool{},
		ReadBack:    map[model.TaskID]*model.TaskRuntime{},
		HostRecs:    map[model.HostID]*model.HostRecord{},
		Migrations: migrationBook{Running: map[model.MigrationID]*model.Migration{}, Dirty: map[model.MigrationID]bool{},
			Jobs: map[model.JobID]*migration.Job{}},
	}
	c.Reserve.Cfg = cfg.Reservation.WithDefaults()
	passes := int((cfg.EntitlementPeriod + cfg.Interval - 1) / cfg.Interval)
	c.Queue.Sched = resmgr.New(nil, resmgr.Config{PreemptAfterPasses: max(passes, 1)})
	for _, p := range plugins {
		c.Plugins[p.Cluster()] = p
	}
	return c
}

// InstallTask takes in a recovered job's task i: its count, its place in
// the queue or on its host; callers hold e.mu.
func (e *State) InstallTask(je *Job, i int) {
	j := je.Job
	t := je.Tasks[i]
	if t == nil { // created count ran ahead of a lost write: recreate
		t = e.newTask(j, uint32(i))
		je.Tasks[i] = t
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
	je.Counts[t.State]++
	switch {
	case t.State == model.TaskInitialized:
		je.waiting = append(je.waiting, t.ID.Instance)
	case t.State.HoldsResources():
		e.Settings.Hosts.Allocate(t.Host, je.TaskResources(t), j.Spec.Revocable)
		e.Settings.Hosts.HoldPorts(t.Host, t.Ports())
		if t.State == model.TaskPlaced {
			e.placedAt[t.ID] = e.Now
		}
	}
	if t.State.IsTerminal() && GangSize(&j.Spec) == 1 && !e.Settings.KeepEndedTasks {
		je.Tasks[i] = coldMarks[t.State]
		je.Cold++
	}
}

// sortedJobs returns job entries in creation order, for deterministic passes.
func (e *State) sortedJobs() []*Job { return sortJobs(e.Jobs) }

// sortJobs orders job entries by creation, for deterministic passes.
func sortJobs(m map[model.JobID]*Job) []*Job {
	out := make([]*Job, 0, len(m))
	for _, je := range m {
		out = append(out, je)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Job, out[j].Job
		if !a.Status.CreateTime.Equal(b.Status.CreateTime) {
			return a.Status.CreateTime.Before(b.Status.CreateTime)
		}
		return a.ID < b.ID
	})
	return out
}

// Adopt takes a new job, stored, into the core: the next pass creates its
// tasks.
func (e *State) Adopt(j *model.Job) {
	je := &Job{Job: j, KillSent: map[model.RunID]bool{}}
	e.AddJob(je)
	e.Visit(je)
	if j.Spec.Revocable {
		e.Revocable.Jobs[j.ID] = true
	}
	e.Queue.Sched.SetJobLimit(j.ID, j.Spec.MaxRunning)
}

// AddJob puts a job in the engine's state; callers hold e.mu.
func (e *State) AddJob(je *Job) {
	e.Jobs[je.Job.ID] = je
	if je.Job.Spec.LongRunning() {
		e.LongRunning[je.Job.ID] = je
	}
}

// RemoveJob takes a job out of the engine's state; callers hold e.mu.
func (e *State) RemoveJob(id model.JobID) {
	delete(e.Jobs, id)
	delete(e.Rollouts, id)
	delete(e.LongRunning, id)
}
