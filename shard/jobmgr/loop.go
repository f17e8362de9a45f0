package jobmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// step is one pass of the goal-state loop: apply what plugins reported,
// converge every job towards its goal, admit, place and launch, persist
// everything that changed, then carry out launches and kills.
func (e *Engine) step(ctx context.Context) {
	e.inboxMu.Lock()
	statuses, removed := e.inbox, e.removed
	e.inbox, e.removed = nil, nil
	e.inboxMu.Unlock()

	e.mu.Lock()
	now := e.cfg.Clock.Now()
	e.applyRemovedHosts(removed, now)
	e.applyStatuses(statuses, now)
	jobs := e.sortedJobs()
	for _, je := range jobs {
		e.converge(je, now)
	}
	e.admit(now)
	e.place(now)
	for _, je := range jobs {
		e.launchPlaced(je, now)
		e.deriveState(je, now)
	}
	if err := e.persist(ctx); err != nil {
		e.mu.Unlock()
		e.log.Error("persisting state failed; will retry", "err", err)
		return
	}
	evs, effects := e.pendingEvs, e.effects
	e.pendingEvs, e.effects = nil, nil
	e.mu.Unlock()

	e.events.publish(evs)
	e.carryOut(ctx, effects)
}

func (e *Engine) newTask(j *model.Job, instance uint32) *model.TaskRuntime {
	now := e.cfg.Clock.Now()
	return &model.TaskRuntime{
		ID:         model.TaskID{Job: j.ID, Instance: instance},
		Run:        1,
		State:      model.TaskInitialized,
		Goal:       model.TaskSucceeded,
		UpdateTime: now,
	}
}

// setState moves a task to a new state, keeping counts, dirty marks and
// events in step.
func (e *Engine) setState(je *jobEntry, t *model.TaskRuntime, s model.TaskState, now time.Time) {
	if t.State == s {
		return
	}
	je.counts[t.State]--
	je.counts[s]++
	t.State = s
	t.UpdateTime = now
	e.markDirty(je, t)
}

func (e *Engine) markDirty(je *jobEntry, t *model.TaskRuntime) {
	e.dirtyTasks = append(e.dirtyTasks, t)
	cp := *t
	e.pendingEvs = append(e.pendingEvs, Event{Time: t.UpdateTime, Job: je.job.ID, Task: &cp})
	je.dirty = true
}

func (e *Engine) enqueue(je *jobEntry, t *model.TaskRuntime) {
	e.queue.Push(resmgr.Item{
		Task:        t.ID,
		Run:         t.Run,
		Priority:    je.job.Spec.Priority,
		Preemptible: je.job.Spec.Preemptible,
		Resources:   je.job.Spec.Task.Resources,
	})
}

func (e *Engine) task(id model.TaskID) (*jobEntry, *model.TaskRuntime) {
	je := e.jobs[id.Job]
	if je == nil || int(id.Instance) >= len(je.tasks) {
		return nil, nil
	}
	return je, je.tasks[id.Instance]
}

// release frees what a run held on its host.
func (e *Engine) release(je *jobEntry, t *model.TaskRuntime) {
	if t.State.HoldsResources() {
		e.cfg.Hosts.Release(t.Host, je.job.Spec.Task.Resources)
	}
	delete(e.placedAt, t.ID)
}

func (e *Engine) applyRemovedHosts(removed []model.HostID, now time.Time) {
	if len(removed) == 0 {
		return
	}
	gone := map[model.HostID]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	for _, je := range e.jobs {
		for _, t := range je.tasks {
			if !t.State.HoldsResources() || !gone[t.Host] {
				continue
			}
			e.endRun(je, t, model.TaskLost, model.ReasonHostLost, "host "+string(t.Host)+" was removed", 0, now)
		}
	}
}

// applyStatuses advances tasks by what plugins reported. Statuses of other
// runs than the current one, and of runs already ended, are ignored.
func (e *Engine) applyStatuses(sts []hostmgr.TaskStatus, now time.Time) {
	for _, st := range sts {
		id, run, ok := st.Run.Parse()
		if !ok {
			continue
		}
		je, t := e.task(id)
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
				e.setState(je, t, model.TaskRunning, now)
			}
		case model.TaskSucceeded, model.TaskFailed, model.TaskKilled, model.TaskLost:
			e.endRun(je, t, st.State, st.Reason, st.Message, st.ExitCode, now)
		}
	}
}

// endRun records the end of a task's current run and decides what follows:
// a retry after backoff, a relaunch, or the end of the task.
func (e *Engine) endRun(je *jobEntry, t *model.TaskRuntime, s model.TaskState, reason, msg string, code int32, now time.Time) {
	e.release(je, t)
	t.Reason, t.Message, t.ExitCode = reason, msg, code
	t.CompletionTime = now
	delete(je.killSent, t.RunID())
	spec := &je.job.Spec
	if t.Goal == model.TaskKilled {
		if s != model.TaskSucceeded && s != model.TaskFailed {
			s = model.TaskKilled
		}
		e.setState(je, t, s, now)
		return
	}
	switch s {
	case model.TaskSucceeded:
		e.setState(je, t, s, now)
		return
	case model.TaskFailed, model.TaskKilled:
		t.Failures++
		if t.Failures >= spec.MaxAttempts {
			e.setState(je, t, model.TaskFailed, now)
			return
		}
		backoff := e.cfg.RetryBackoff << (t.Failures - 1)
		if backoff > e.cfg.MaxRetryBackoff || backoff <= 0 {
			backoff = e.cfg.MaxRetryBackoff
		}
		t.RetryAfter = now.Add(backoff)
		t.Message = fmt.Sprintf("run %d %s (%s); retry %d of %d after %s", t.Run, s, msg, t.Failures, spec.MaxAttempts-1, backoff)
		t.Reason = model.ReasonRetrying
	case model.TaskLost:
		// Lost runs do not count against max attempts: every task runs to a
		// terminal state at least once.
		t.RetryAfter = time.Time{}
		t.Message = fmt.Sprintf("run %d lost (%s); relaunching", t.Run, msg)
	}
	e.newRun(je, t, now)
}

// newRun starts a fresh run of a task from INITIALIZED.
func (e *Engine) newRun(je *jobEntry, t *model.TaskRuntime, now time.Time) {
	t.Run++
	t.Host, t.Cluster = "", ""
	t.StartTime, t.CompletionTime = time.Time{}, time.Time{}
	e.setState(je, t, model.TaskInitialized, now)
	je.waiting = append(je.waiting, t.ID.Instance)
}

// converge moves one job towards its goal: create missing tasks, stop what
// must stop, queue what may run within maxRunning.
func (e *Engine) converge(je *jobEntry, now time.Time) {
	j := je.job
	if j.Status.State.IsTerminal() {
		return
	}
	if j.Status.Killed {
		e.killJob(je, now)
		return
	}
	// Create task records in batches so huge jobs do not stall the loop.
	if created := j.Status.TasksCreated; created < j.Spec.Instances {
		n := min(j.Spec.Instances-created, uint32(e.cfg.CreateBatch))
		for i := created; i < created+n; i++ {
			t := e.newTask(j, i)
			je.tasks = append(je.tasks, t)
			je.counts[model.TaskInitialized]++
			e.markDirty(je, t)
			je.waiting = append(je.waiting, i)
		}
		j.Status.TasksCreated += n
		je.dirty = true
	}
	// Queue waiting tasks whose backoff passed, within maxRunning.
	limit := j.Spec.MaxRunning
	kept := je.waiting[:0]
	for _, inst := range je.waiting {
		t := je.tasks[inst]
		if t.State != model.TaskInitialized {
			continue
		}
		if (limit > 0 && je.counts.active() >= limit) || t.RetryAfter.After(now) {
			kept = append(kept, inst)
			continue
		}
		e.setState(je, t, model.TaskPending, now)
		e.enqueue(je, t)
	}
	je.waiting = kept
}

// killJob drives every task of a stopped job to KILLED.
func (e *Engine) killJob(je *jobEntry, now time.Time) {
	grace := je.job.Spec.Task.KillGrace
	for _, t := range je.tasks {
		if t.State.IsTerminal() {
			continue
		}
		if t.Goal != model.TaskKilled {
			t.Goal = model.TaskKilled
			e.markDirty(je, t)
		}
		e.killTask(je, t, grace, now)
	}
	// Tasks never created are simply not created.
	if je.job.Status.TasksCreated < je.job.Spec.Instances {
		je.job.Spec.Instances = je.job.Status.TasksCreated
		je.dirty = true
	}
}

// killTask ends a task that has not launched at once, and asks the plugin
// to kill one that has.
func (e *Engine) killTask(je *jobEntry, t *model.TaskRuntime, grace time.Duration, now time.Time) {
	switch t.State {
	case model.TaskLaunching, model.TaskRunning:
		if !je.killSent[t.RunID()] {
			je.killSent[t.RunID()] = true
			e.effects = append(e.effects, effect{kill: &hostmgr.RunRef{Run: t.RunID(), Host: t.Host}, grace: grace})
		}
	default:
		e.release(je, t)
		t.Reason, t.Message = model.ReasonKilled, "stopped before it was launched"
		t.CompletionTime = now
		e.setState(je, t, model.TaskKilled, now)
	}
}

// admit hands queued tasks to placement within the cluster's capacity.
func (e *Engine) admit(now time.Time) {
	capacity, _ := e.cfg.Hosts.Capacity()
	allocation := e.admittedAllocation()
	adm := e.queue.Admit(capacity, allocation, 0, func(it resmgr.Item) bool {
		_, t := e.task(it.Task)
		return t != nil && t.Run == it.Run && t.State == model.TaskPending
	})
	for _, it := range adm.Admitted {
		je, t := e.task(it.Task)
		e.setState(je, t, model.TaskReady, now)
		e.ready = append(e.ready, it.Task)
	}
}

// admittedAllocation sums the resources of tasks admitted and not ended.
func (e *Engine) admittedAllocation() model.Resources {
	var r model.Resources
	for _, je := range e.jobs {
		n := je.counts.sum(model.TaskReady, model.TaskPlacing, model.TaskPlaced, model.TaskLaunching, model.TaskRunning)
		if n > 0 {
			r = r.Add(je.job.Spec.Task.Resources.Scale(float64(n)))
		}
	}
	return r
}

// launchPlaced sends a job's placed tasks to their plugins. A task whose
// host is not known after LaunchGrace goes back to the queue.
func (e *Engine) launchPlaced(je *jobEntry, now time.Time) {
	if je.counts[model.TaskPlaced] == 0 {
		return
	}
	spec := &je.job.Spec
	for _, t := range je.tasks {
		if t.State != model.TaskPlaced {
			continue
		}
		if _, ok := e.plugins[t.Cluster]; !ok || !e.cfg.Hosts.Has(t.Host) {
			if now.Sub(e.placedAt[t.ID]) > e.cfg.LaunchGrace {
				e.release(je, t)
				t.Host, t.Cluster = "", ""
				e.setState(je, t, model.TaskPending, now)
				e.enqueue(je, t)
			}
			continue
		}
		delete(e.placedAt, t.ID)
		e.setState(je, t, model.TaskLaunching, now)
		e.effects = append(e.effects, effect{launch: &hostmgr.Launch{
			Run:  t.RunID(),
			Host: t.Host,
			Task: &spec.Task,
			Labels: map[string]string{
				"peloton.job":      string(t.ID.Job),
				"peloton.instance": fmt.Sprint(t.ID.Instance),
				"peloton.run":      fmt.Sprint(t.Run),
			},
		}})
	}
}

// deriveState recomputes a job's state from its tasks.
func (e *Engine) deriveState(je *jobEntry, now time.Time) {
	j := je.job
	if j.Status.State.IsTerminal() {
		return
	}
	state, msg := deriveJobState(&j.Spec, j.Status.Killed, j.Status.TasksCreated, je.everRan, &je.counts)
	if state == j.Status.State && msg == j.Status.Message && !je.dirty {
		return
	}
	if state != j.Status.State {
		e.log.Info("job state", "job", j.ID, "from", j.Status.State, "to", state)
	}
	if state == model.JobRunning && j.Status.StartTime.IsZero() {
		j.Status.StartTime = now
	}
	if state.IsTerminal() {
		j.Status.CompletionTime = now
	}
	j.Status.State, j.Status.Message = state, msg
	je.dirty = true
}

// persist writes every changed task and job in batches.
func (e *Engine) persist(ctx context.Context) error {
	if len(e.dirtyTasks) > 0 {
		// A task may be marked several times in one pass: write it once.
		seen := make(map[*model.TaskRuntime]bool, len(e.dirtyTasks))
		batch := e.dirtyTasks[:0]
		for _, t := range e.dirtyTasks {
			if !seen[t] {
				seen[t] = true
				batch = append(batch, t)
			}
		}
		if err := e.cfg.Store.WriteTasks(ctx, batch); err != nil {
			e.dirtyTasks = batch
			return err
		}
		e.dirtyTasks = nil
	}
	for _, je := range e.jobs {
		if !je.dirty {
			continue
		}
		je.job.Status.TaskStates = countsMap(&je.counts)
		if err := e.cfg.Store.UpdateJob(ctx, je.job); err != nil {
			return err
		}
		je.dirty = false
		st := je.job.Status
		e.pendingEvs = append(e.pendingEvs, Event{Time: e.cfg.Clock.Now(), Job: je.job.ID, JobStatus: &st})
	}
	return nil
}

func countsMap(c *taskCounts) map[model.TaskState]uint32 {
	m := map[model.TaskState]uint32{}
	for s, n := range c {
		if n > 0 {
			m[model.TaskState(s)] = n
		}
	}
	return m
}

// carryOut performs launches (batched per plugin) and kills. Failures come
// back as statuses so the loop handles them like any other.
func (e *Engine) carryOut(ctx context.Context, effects []effect) {
	launches := map[string][]hostmgr.Launch{}
	for _, ef := range effects {
		switch {
		case ef.launch != nil:
			cluster := clusterOf(ef.launch.Host)
			launches[cluster] = append(launches[cluster], *ef.launch)
		case ef.kill != nil:
			p := e.plugins[clusterOf(ef.kill.Host)]
			if p == nil {
				continue
			}
			if err := p.Kill(ctx, ef.kill.Run, ef.kill.Host, ef.grace); err != nil {
				e.log.Warn("kill failed", "run", ef.kill.Run, "err", err)
			}
		}
	}
	for cluster, ls := range launches {
		p := e.plugins[cluster]
		if err := p.Launch(ctx, ls); err != nil {
			now := e.cfg.Clock.Now()
			sts := make([]hostmgr.TaskStatus, len(ls))
			for i, l := range ls {
				sts[i] = hostmgr.TaskStatus{Run: l.Run, Host: l.Host, State: model.TaskFailed,
					Reason: model.ReasonLaunchError, Message: err.Error(), ExitCode: -1, Time: now}
			}
			e.pushStatuses(sts)
		}
	}
}

// clusterOf extracts the cluster from a host id "<cluster>/<name>".
func clusterOf(h model.HostID) string {
	for i := 0; i < len(h); i++ {
		if h[i] == '/' {
			return string(h[:i])
		}
	}
	return string(h)
}
