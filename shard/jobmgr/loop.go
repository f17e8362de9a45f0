package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
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
	stale, moved := e.staleHosts, e.hostsMoved
	e.inbox, e.removed = nil, nil
	e.staleHosts, e.hostsMoved = map[model.HostID]bool{}, false
	e.inboxMu.Unlock()

	started := time.Now() // measured for metrics only
	e.lock()
	now := e.c.Now
	w := &passOut{PassWrite: e.c.Decide(core.PassInput{Now: now, Fenced: e.c.LaunchFenced, Statuses: statuses, RemovedHosts: removed, StaleHosts: stale, HostsMoved: moved})}
	w.waiters, e.waiters = e.waiters, nil
	fig := e.c.TakeFigures()
	w.creates = e.intake.take(true)
	e.c.Writing = true
	e.mu.Unlock()
	stepped := time.Now()
	e.stats.passed("step", stepped.Sub(started))
	var placing time.Duration // the pass's decision, when it placed
	if fig.Placed > 0 || len(fig.Unplaced) > 0 {
		placing = max(stepped.Sub(started), time.Nanosecond)
	}
	e.stats.record(fig, placing)

	err := e.write(ctx, w)
	e.intake.setWriting(false)

	wrote := time.Now()
	e.stats.passed("write", wrote.Sub(stepped))
	e.lock()
	e.c.Writing = false
	if err != nil {
		e.c.PutBack(w.PassWrite)
		e.stats.passed("apply", time.Since(wrote))
		e.mu.Unlock()
		w.answer(err)
		e.c.Log.Error("persisting state failed; will retry", "err", err)
		return err
	}
	evs := e.written(w)
	e.c.KeepWork()
	e.recountPending(now)
	e.dropped.Store(e.c.DroppedTasks)
	reads := e.c.TakeReads()
	if e.c.ChangeBudget <= 0 {
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
	e.carryOut(ctx, w.Effects)
	e.readBackTasks(ctx, reads)
	return nil
}

// readBackTasks reads the tasks the core asked for from the store, with no
// lock held, and hands them to it: the jobs they belong to are visited
// again. A read that fails is asked for again by the next pass that needs
// it.
func (e *Engine) readBackTasks(ctx context.Context, ids []model.TaskID) {
	if len(ids) == 0 {
		return
	}
	read := make([]*model.TaskRuntime, 0, len(ids))
	for _, id := range ids {
		t, err := e.cfg.Store.GetTask(ctx, id)
		if err != nil {
			e.c.Log.Warn("reading a removed instance failed; will retry", "job", id.Job, "instance", id.Instance, "err", err)
			continue
		}
		read = append(read, t)
	}
	e.lock()
	for _, t := range read {
		e.c.ReadBack[t.ID] = t
		if je := e.c.Jobs[t.ID.Job]; je != nil {
			e.c.Visit(je)
		}
	}
	e.mu.Unlock()
	if len(read) > 0 {
		e.wake()
	}
}

// carryOut performs launches (batched per plugin) and kills. Failures come
// back as statuses so the loop handles them like any other.
func (e *Engine) carryOut(ctx context.Context, effects []core.Effect) {
	launches := map[string][]hostmgr.Launch{}
	for _, ef := range effects {
		switch {
		case ef.Launch != nil:
			cluster := core.ClusterOf(ef.Launch.Host)
			launches[cluster] = append(launches[cluster], *ef.Launch)
		case ef.Kill != nil:
			p := e.c.Plugins[core.ClusterOf(ef.Kill.Host)]
			if p == nil {
				continue
			}
			if err := p.Kill(ctx, ef.Kill.Run, ef.Kill.Host, ef.Grace); err != nil {
				e.c.Log.Warn("kill failed", "run", ef.Kill.Run, "err", err)
			}
		}
	}
	for cluster, ls := range launches {
		p := e.c.Plugins[cluster]
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
