package jobmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// step is one pass of the goal-state loop, in three parts. Under the
// engine's lock it applies what plugins reported, converges every job
// towards its goal, admits, places and decides launches, and takes what
// the pass changed as a write set of copies (passWrite). It then writes
// that set with no lock held, so API calls and reads go on while the store
// works. Under the lock again it takes the revisions the store gave, or,
// when the write failed, marks what it held as changed again for the next
// pass. Only after a successful write are events published, callers
// waiting for the write answered, and launches and kills carried out. It
// returns the error of a write that failed.
func (e *Engine) step(ctx context.Context) error {
	e.inboxMu.Lock()
	statuses, removed := e.inbox, e.removed
	e.inbox, e.removed = nil, nil
	e.inboxMu.Unlock()

	started := time.Now() // measured for metrics only
	e.lock()
	now := e.cfg.Clock.Now()
	e.changeBudget = e.cfg.CreateBatch
	e.applyRemovedHosts(removed, now)
	e.applyStatuses(statuses, now)
	var pass passView
	e.runPassStart(&pass, now)
	for _, je := range sortJobs(e.work) {
		e.runConverge(&pass, je, now)
	}
	e.runDisrupt(now)
	e.admit(now)
	e.place(now)
	jobs := sortJobs(e.work)
	for _, je := range jobs {
		e.launchPlaced(je, now)
		e.deriveState(je, now)
	}
	w := e.takeWrites(jobs)
	w.creates = e.takeCreates(true)
	e.writing = true
	e.mu.Unlock()
	stepped := time.Now()
	e.stats.passed("step", stepped.Sub(started))

	err := e.write(ctx, w)
	e.setPassWriting(false)

	wrote := time.Now()
	e.stats.passed("write", wrote.Sub(stepped))
	e.lock()
	e.writing = false
	if err != nil {
		e.putBack(w)
		e.stats.passed("apply", time.Since(wrote))
		e.mu.Unlock()
		w.answer(err)
		e.log.Error("persisting state failed; will retry", "err", err)
		return err
	}
	evs := e.written(w)
	// Keep visiting jobs that still have something to wait for.
	for id, je := range e.work {
		j := je.job
		if je.lateVisit || je.dirty || je.record || e.rolloutDirty(je) {
			je.lateVisit = false
			continue // taken in or changed while the pass wrote: the next pass sees to it
		}
		if j.Status.State.IsTerminal() || (len(je.waiting) == 0 && j.Status.TasksCreated == j.Spec.OwnTasks() &&
			!j.Status.Killed && je.counts[model.TaskPlaced] == 0 && e.rollouts[j.ID] == nil) {
			delete(e.work, id)
			je.inWork = false
		}
	}
	e.recountPending(now)
	if e.changeBudget <= 0 {
		e.wake() // tasks are left to create or stop: the next pass comes at once
	}
	if e.afterStep != nil {
		e.afterStep()
	}
	e.stats.passed("apply", time.Since(wrote))
	e.mu.Unlock()

	e.view.merge()
	w.answer(nil)
	e.emit(evs)
	e.carryOut(ctx, w.effects)
	return nil
}

func (e *Engine) newTask(j *model.Job, instance uint32) *model.TaskRuntime {
	t := new(model.TaskRuntime)
	e.initTask(t, j, instance)
	return t
}

// initTask makes t a new task of j.
func (e *Engine) initTask(t *model.TaskRuntime, j *model.Job, instance uint32) {
	*t = model.TaskRuntime{
		ID:            model.TaskID{Job: j.ID, Instance: instance},
		Run:           1,
		ConfigVersion: max(j.ConfigVersion, 1),
		State:         model.TaskInitialized,
		Goal:          model.TaskSucceeded,
		UpdateTime:    e.cfg.Clock.Now(),
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
	je.dirty = true
	e.visit(je)
}

// visit puts a job in the next pass's work set.
func (e *Engine) visit(je *jobEntry) {
	if e.writing {
		je.lateVisit = true
	}
	if !je.inWork {
		je.inWork = true
		e.work[je.job.ID] = je
	}
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
		e.cfg.Hosts.Release(t.Host, je.taskResources(t), je.job.Spec.Revocable)
		e.cfg.Hosts.ReleasePorts(t.Host, t.Ports())
		e.released[t.Host] = true
		if je.limited(t) {
			e.hostCounts.add(t.Host, t.ID.Job, -1)
		}
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
				je.config(t.ConfigVersion).initHealth(t)
				e.setState(je, t, model.TaskRunning, now)
				e.sched.Started(gangOf(je, t.ID.Instance))
			}
			e.applyHealth(je, t, st, now)
		case model.TaskSucceeded, model.TaskFailed, model.TaskKilled, model.TaskLost:
			e.endRun(je, t, st.State, st.Reason, st.Message, st.ExitCode, now)
		}
	}
}

// endRun records the end of a task's current run and carries out what
// goalstate decides follows: a retry after backoff, a relaunch, a gang
// restart, or the end of the task.
func (e *Engine) endRun(je *jobEntry, t *model.TaskRuntime, s model.TaskState, reason, msg string, code int32, now time.Time) {
	e.release(je, t)
	delete(je.killSent, t.RunID())
	spec := &je.job.Spec
	g := gangOf(je, t.ID.Instance)
	in := goalstate.RunEnd{
		Instance:   t.ID.Instance,
		Run:        t.Run,
		Reason:     t.Reason,
		Failures:   t.Failures,
		RetryAfter: t.RetryAfter,
		Stopping:   t.Goal == model.TaskKilled,
		Ended:      s,
		EndReason:  reason,
		Message:    msg,
		Type:       spec.Type,
		Policy:     e.retryPolicy(spec),
		Gang:       gangSize(spec) > 1,
		Now:        now,
	}
	r := e.restarting[g]
	if r != nil {
		in.Restart = &goalstate.GangRestart{Reason: r.reason, Message: r.message}
	}
	d := goalstate.DecideRunEnd(in)
	t.Reason, t.Message, t.ExitCode = d.Reason, d.Message, code
	t.Failures, t.RetryAfter = d.Failures, d.RetryAfter
	t.CompletionTime = now
	switch d.Action {
	case goalstate.RunEndGangMember:
		e.setState(je, t, d.State, now)
		r.remaining--
		e.finishRestart(je, g, now)
	case goalstate.RunEndFinish, goalstate.RunEndGiveUp:
		e.setState(je, t, d.State, now)
		e.sched.Finished(g, t.ID)
		if d.StopGang {
			e.failGang(je, g, t, now)
		}
	case goalstate.RunEndRelaunch:
		e.sched.Finished(g, t.ID)
		e.recordRunEnd(t, s, now)
		e.newRun(je, t, now)
	case goalstate.RunEndRestartGang:
		e.setState(je, t, d.State, now)
		e.restartGang(je, g, d.GangReason, d.GangMessage, now)
	}
}

// retryPolicy is how a job's failed runs are retried.
func (e *Engine) retryPolicy(spec *model.JobSpec) goalstate.RetryPolicy {
	return goalstate.RetryPolicy{
		MaxAttempts: spec.MaxAttempts,
		Backoff:     e.backoff(),
		GangRestart: spec.GangRestart,
	}
}

// backoff is the engine's one rule for the wait before a task runs again.
func (e *Engine) backoff() goalstate.Backoff {
	return goalstate.Backoff{Base: e.cfg.RetryBackoff, Max: e.cfg.MaxRetryBackoff}
}

// failGang stops the rest of a gang after a member failed for good.
func (e *Engine) failGang(je *jobEntry, g resmgr.GangID, failed *model.TaskRuntime, now time.Time) {
	for _, m := range je.members(g) {
		if m == failed || m.State.IsTerminal() {
			continue
		}
		m.Goal = model.TaskKilled
		m.Reason = ReasonGangFailed
		m.Message = fmt.Sprintf("instance %d of the gang failed", failed.ID.Instance)
		e.markDirty(je, m)
		e.killTask(je, m, je.killGrace(m), now)
	}
}

// recordRunEnd keeps the end of t's current run, in state, as an event of
// its own: a new run of t follows in the same pass, and the pass's one
// event for t will show only that.
func (e *Engine) recordRunEnd(t *model.TaskRuntime, state model.TaskState, now time.Time) {
	if !state.IsTerminal() {
		return
	}
	cp := *t
	cp.State, cp.UpdateTime = state, now
	e.runEnds = append(e.runEnds, Event{Time: now, Job: t.ID.Job, Task: &cp})
}

// newRun starts a fresh run of a task from INITIALIZED.
func (e *Engine) newRun(je *jobEntry, t *model.TaskRuntime, now time.Time) {
	if u := e.runningUpdate(je); u != nil && u.InPlace && t.Host != "" {
		// During an in-place update every new run of an instance (a
		// restart after a failed probe too) tries its host first.
		if _, ok := je.prefer[t.ID.Instance]; !ok {
			if je.prefer == nil {
				je.prefer = map[uint32]placementPref{}
			}
			je.prefer[t.ID.Instance] = placementPref{host: t.Host}
		}
	}
	if t.Run > 0 && t.State.IsTerminal() && !t.UpdateTime.Before(now) {
		// The run ended in this pass: the pass's event for the task will
		// show the new run, so the end gets an event of its own.
		e.recordRunEnd(t, t.State, now)
	}
	t.Run++
	t.ConfigVersion = max(je.job.ConfigVersion, 1)
	t.Host, t.Cluster = "", ""
	t.Health, t.Ready = model.HealthNone, model.HealthNone
	t.SetPorts(nil)
	t.StartTime, t.CompletionTime = time.Time{}, time.Time{}
	e.setState(je, t, model.TaskInitialized, now)
	je.waiting = append(je.waiting, t.ID.Instance)
}

// converge moves one job towards its goal: create missing tasks, stop what
// must stop, queue what may run within maxRunning.
func (e *Engine) converge(je *jobEntry, now time.Time) {
	j := je.job
	if j.Status.State.IsTerminal() || j.Spec.Periodic() {
		return // a periodic job runs no tasks: its runs are jobs of their own (periodic.go)
	}
	if j.Status.Killed {
		e.killJob(je, now)
		return
	}
	// Create task records in batches so huge jobs do not stall the loop,
	// and so that what one pass writes and keeps in flight (the records,
	// their events, the store's transaction) stays bounded however many
	// jobs arrive at once: the oldest jobs' tasks are made first.
	if created := j.Status.TasksCreated; created < j.Spec.Instances && e.changeBudget > 0 {
		n := min(j.Spec.Instances-created, uint32(e.changeBudget))
		e.changeBudget -= int(n)
		// One array holds the batch's runtimes: one allocation, and a few
		// large spans for the runtime to keep track of rather than a page
		// per 34 tasks (the bookkeeping the Go runtime never gives back).
		// The array lives until the last of its tasks leaves memory.
		slab := make([]model.TaskRuntime, n)
		for i := created; i < created+n; i++ {
			t := &slab[i-created]
			e.initTask(t, j, i)
			je.reuseRemoved(t)
			je.tasks = append(je.tasks, t)
			je.counts[model.TaskInitialized]++
			e.markDirty(je, t)
			je.waiting = append(je.waiting, i)
		}
		j.Status.TasksCreated += n
		je.dirty, je.record = true, true
	}
	e.queueWaiting(je, now)
}

// killJob drives every task of a stopped job to KILLED. A pass stops at
// most its change budget of tasks (the others follow in the next passes),
// so that stopping a huge job does not write, copy and keep in flight all
// of its tasks at once.
func (e *Engine) killJob(je *jobEntry, now time.Time) {
	// Tasks never created are simply not created.
	if je.job.Status.TasksCreated < je.job.Spec.Instances {
		je.job.Spec.Instances = je.job.Status.TasksCreated
		je.dirty, je.record = true, true
	}
	for _, t := range je.tasks {
		if t.State.IsTerminal() {
			continue
		}
		if t.Goal != model.TaskKilled {
			if e.changeBudget <= 0 {
				return
			}
			e.changeBudget--
			t.Goal = model.TaskKilled
			e.markDirty(je, t)
		}
		e.killTask(je, t, je.killGrace(t), now)
	}
}

// killTask ends a task that has not launched at once, and asks the plugin
// to kill one that has.
func (e *Engine) killTask(je *jobEntry, t *model.TaskRuntime, grace time.Duration, now time.Time) {
	switch t.State {
	case model.TaskLaunching, model.TaskRunning:
		e.sendKill(je, t, grace)
	default:
		g := gangOf(je, t.ID.Instance)
		if t.State == model.TaskPending {
			// A queued gang leaves the queue whole; its other members are
			// being killed by the same stop.
			e.sched.Remove(g)
		} else {
			e.sched.Finished(g, t.ID)
		}
		e.release(je, t)
		t.Reason, t.Message = model.ReasonKilled, "stopped before it was launched"
		t.CompletionTime = now
		e.setState(je, t, model.TaskKilled, now)
	}
}

// launchPlaced sends a job's placed tasks to their plugins. A task whose
// host is not known after LaunchGrace goes back to the queue.
func (e *Engine) launchPlaced(je *jobEntry, now time.Time) {
	if je.counts[model.TaskPlaced] == 0 || e.fenced.Load() {
		return
	}
	for _, t := range je.tasks {
		if t.State != model.TaskPlaced {
			continue
		}
		if _, ok := e.plugins[t.Cluster]; !ok || !e.cfg.Hosts.Has(t.Host) {
			if now.Sub(e.placedAt[t.ID]) > e.cfg.LaunchGrace {
				e.restartGang(je, gangOf(je, t.ID.Instance), model.ReasonHostLost, "host "+string(t.Host)+" was not reported in time", now)
			}
			continue
		}
		delete(e.placedAt, t.ID)
		e.setState(je, t, model.TaskLaunching, now)
		cfg := je.config(t.ConfigVersion)
		task := &cfg.spec.Task
		if len(cfg.spec.Overrides) > 0 {
			ts := cfg.task(t.ID.Instance)
			task = &ts
		}
		env := launchEnv(t, e.hostname(t.Host), e.cfg.APIAddr)
		e.effects = append(e.effects, effect{launch: &hostmgr.Launch{
			Run:  t.RunID(),
			Host: t.Host,
			Task: task,
			Labels: map[string]string{
				"peloton.job":      string(t.ID.Job),
				"peloton.instance": fmt.Sprint(t.ID.Instance),
				"peloton.run":      fmt.Sprint(t.Run),
			},
			Env:       env,
			Ports:     t.Ports(),
			Volumes:   volumeMounts(t.ID, task),
			Gang:      e.gangMembers(je, t, env),
			Revocable: je.job.Spec.Revocable,
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
	if u := e.runningUpdate(je); msg == "" && u != nil && u.Message != "" {
		msg = "update " + string(u.ID) + ": " + u.Message // such as waiting for SLA
	}
	if state == j.Status.State && msg == j.Status.Message {
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
		delete(e.revocable, j.ID)
	}
	j.Status.State, j.Status.Message = state, msg
	je.dirty, je.record = true, true
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
		err := p.Launch(ctx, ls)
		e.stats.launched(cluster, len(ls), err != nil)
		if err != nil {
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
