package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// PassInput is what a pass decides on besides the core's own state: the
// time, whether launches are fenced, and what plugins reported since the
// last pass.
type PassInput struct {
	Now          time.Time
	Fenced       bool
	Statuses     []hostmgr.TaskStatus
	RemovedHosts []model.HostID
	StaleHosts   map[model.HostID]bool
	HostsMoved   bool
}

// Decide is the step of a pass: it takes in what plugins reported,
// brings every job of the work set towards its goal (the capabilities at
// their points), admits, places and decides launches and kills, and
// returns what changed as the pass's write set. It reads no store and no
// clock; the Engine writes the set, then hands the outcome to settle (or
// putBack), then carries out the effects.
func (e *State) Decide(in PassInput) *PassWrite {
	now := in.Now
	e.Now, e.LaunchFenced = now, in.Fenced
	e.ChangeBudget = e.Settings.CreateBatch
	e.takeHostChanges(in.StaleHosts, in.HostsMoved)
	e.applyRemovedHosts(in.RemovedHosts, now)
	e.applyStatuses(in.Statuses, now)
	var pass passView
	e.runPassStart(&pass, now)
	for _, je := range sortJobs(e.Work) {
		e.runConverge(&pass, je, now)
	}
	e.runDisrupt(now)
	e.Queue.admit(e, now)
	e.Index.place(e, now)
	jobs := sortJobs(e.Work)
	for _, je := range jobs {
		runs{e}.launchPlaced(je, now)
		e.deriveState(je, now)
	}
	return writes{e}.takeWrites(jobs)
}

// KeepWork keeps in the work set the jobs that still have something to
// wait for, once a pass's write is settled.
func (e *State) KeepWork() {
	for id, je := range e.Work {
		j := je.Job
		if je.lateVisit || je.Dirty || je.Record || e.Rollouts.rolloutDirty(je) {
			je.lateVisit = false
			continue // taken in or changed while the pass wrote: the next pass sees to it
		}
		if j.Status.State.IsTerminal() || (len(je.waiting) == 0 && j.Status.TasksCreated == j.Spec.OwnTasks() &&
			!j.Status.Killed && je.Counts[model.TaskPlaced] == 0 && e.Rollouts[j.ID] == nil) {
			delete(e.Work, id)
			je.InWork = false
		}
	}
}

// takeHostChanges takes in the hosts plugins reported since the last pass.
func (e *State) takeHostChanges(stale map[model.HostID]bool, moved bool) {
	for id := range stale {
		e.Index.stale[id] = true
	}
	e.Daemons.HostsChanged = e.Daemons.HostsChanged || moved
}

// TakeReads takes the tasks the core asked to have read.
func (e *State) TakeReads() []model.TaskID {
	if len(e.ToRead) == 0 {
		return nil
	}
	ids := make([]model.TaskID, 0, len(e.ToRead))
	for id := range e.ToRead {
		ids = append(ids, id)
	}
	clear(e.ToRead)
	return ids
}

func (e *State) newTask(j *model.Job, instance uint32) *model.TaskRuntime {
	t := new(model.TaskRuntime)
	e.initTask(t, j, instance)
	return t
}

// initTask makes t a new task of j.
func (e *State) initTask(t *model.TaskRuntime, j *model.Job, instance uint32) {
	*t = model.TaskRuntime{
		ID:            model.TaskID{Job: j.ID, Instance: instance},
		Run:           1,
		ConfigVersion: max(j.ConfigVersion, 1),
		State:         model.TaskInitialized,
		Goal:          model.TaskSucceeded,
		UpdateTime:    e.Now,
	}
}

func (e *State) markDirty(je *Job, t *model.TaskRuntime) {
	e.dirtyTasks = append(e.dirtyTasks, t)
	je.Dirty = true
	e.Visit(je)
}

// Visit puts a job in the next pass's work set.
func (e *State) Visit(je *Job) {
	if e.Writing {
		je.lateVisit = true
	}
	if !je.InWork {
		je.InWork = true
		e.Work[je.Job.ID] = je
	}
}

func (e *State) Task(id model.TaskID) (*Job, *model.TaskRuntime) {
	je := e.Jobs[id.Job]
	if je == nil || int(id.Instance) >= len(je.Tasks) {
		return nil, nil
	}
	return je, je.Tasks[id.Instance]
}

func (e *State) applyRemovedHosts(removed []model.HostID, now time.Time) {
	if len(removed) == 0 {
		return
	}
	gone := map[model.HostID]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	for _, je := range e.Jobs {
		for _, t := range je.Tasks {
			if !t.State.HoldsResources() || !gone[t.Host] {
				continue
			}
			runs{e}.endRun(je, t, model.TaskLost, model.ReasonHostLost, "host "+string(t.Host)+" was removed", 0, now)
		}
	}
}

// applyStatuses advances tasks by what plugins reported. Statuses of other
// runs than the current one, and of runs already ended, are ignored.
func (e *State) applyStatuses(sts []hostmgr.TaskStatus, now time.Time) {
	for _, st := range sts {
		id, run, ok := st.Run.Parse()
		if !ok {
			continue
		}
		je, t := e.Task(id)
		if t == nil || t.Run != run || t.State.IsTerminal() || !t.State.HoldsResources() {
			continue
		}
		switch st.State {
		case model.TaskRunning:
			if t.State != model.TaskRunning {
				t.StartTime = st.Time
				if t.StartTime.IsZero() {
					t.StartTime = now
				}
				je.everRan = true
				je.config(t.ConfigVersion).initHealth(t)
				runs{e}.setState(je, t, model.TaskRunning, now)
				e.Queue.Sched.Started(GangOf(je, t.ID.Instance))
			}
			e.applyHealth(je, t, st, now)
		case model.TaskSucceeded, model.TaskFailed, model.TaskKilled, model.TaskLost:
			runs{e}.endRun(je, t, st.State, st.Reason, st.Message, st.ExitCode, now)
		}
	}
}

// converge moves one job towards its goal: create missing tasks, stop what
// must stop, queue what may run within maxRunning.
func (e *State) converge(je *Job, now time.Time) {
	j := je.Job
	if j.Status.State.IsTerminal() || j.Spec.Periodic() {
		return // a periodic job runs no tasks: its runs are jobs of their own (periodic.go)
	}
	if j.Status.Killed {
		runs{e}.killJob(je, now)
		return
	}
	// Create task records in batches so huge jobs do not stall the loop,
	// and so that what one pass writes and keeps in flight (the records,
	// their events, the store's transaction) stays bounded however many
	// jobs arrive at once: the oldest jobs' tasks are made first.
	if created := j.Status.TasksCreated; created < j.Spec.Instances && e.ChangeBudget > 0 {
		n := min(j.Spec.Instances-created, uint32(e.ChangeBudget))
		e.ChangeBudget -= int(n)
		// One array holds the batch's runtimes: one allocation, and a few
		// large spans for the runtime to keep track of rather than a page
		// per 34 tasks (the bookkeeping the Go runtime never gives back).
		// The array lives until the last of its tasks leaves memory.
		slab := make([]model.TaskRuntime, n)
		for i := created; i < created+n; i++ {
			t := &slab[i-created]
			e.initTask(t, j, i)
			je.reuseRemoved(t)
			je.Tasks = append(je.Tasks, t)
			je.Counts[model.TaskInitialized]++
			e.markDirty(je, t)
			je.waiting = append(je.waiting, i)
		}
		j.Status.TasksCreated += n
		je.Dirty, je.Record = true, true
	}
	e.Queue.queueWaiting(e, je, now)
}

// deriveState recomputes a job's state from its tasks.
func (e *State) deriveState(je *Job, now time.Time) {
	j := je.Job
	if j.Status.State.IsTerminal() {
		return
	}
	state, msg := DeriveJobState(&j.Spec, j.Status.Killed, j.Status.TasksCreated, je.everRan, &je.Counts)
	if u := e.Rollouts.runningUpdate(je); msg == "" && u != nil && u.Message != "" {
		msg = "update " + string(u.ID) + ": " + u.Message // such as waiting for SLA
	}
	if state == j.Status.State && msg == j.Status.Message {
		return
	}
	if state != j.Status.State {
		e.Log.Info("job state", "job", j.ID, "from", j.Status.State, "to", state)
	}
	if state == model.JobRunning && j.Status.StartTime.IsZero() {
		j.Status.StartTime = now
	}
	if state.IsTerminal() {
		j.Status.CompletionTime = now
		delete(e.Revocable.Jobs, j.ID)
	}
	j.Status.State, j.Status.Message = state, msg
	je.Dirty, je.Record = true, true
}

func countsMap(c *TaskCounts) map[model.TaskState]uint32 {
	m := map[model.TaskState]uint32{}
	for s, n := range c {
		if n > 0 {
			m[model.TaskState(s)] = n
		}
	}
	return m
}

// ClusterOf extracts the cluster from a host id "<cluster>/<name>".
func ClusterOf(h model.HostID) string {
	for i := 0; i < len(h); i++ {
		if h[i] == '/' {
			return string(h[:i])
		}
	}
	return string(h)
}
