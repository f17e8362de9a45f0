package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/store"
)

// passWrite is what one pass writes: copies of the records it changed,
// taken under the engine's lock and written without it. A task's, a job's
// and an update's copy is shallow: what they hold by reference (a task's
// ports and pin, a job's spec maps and lists) is replaced, never changed
// in place. A migration is copied deep. The live records
// go on changing while the store works; the copies are what is written,
// and what the pass's events show.
type passWrite struct {
	// tasks are the changed tasks, live, and their copies (one array).
	tasks  []*model.TaskRuntime
	copies []*model.TaskRuntime
	// runEnds are events of runs a new run replaced in the pass.
	runEnds []Event
	// jobs are the jobs whose record or task counts changed: record says
	// the record is written, status is what their event shows.
	jobs []jobWrite
	// updates and migrations are the changed records, live and copied.
	updates    []updateWrite
	migrations []migrationWrite
	// effects are carried out once the write succeeded.
	effects []effect
	// waiters are API calls answered once the write is done.
	waiters []chan error
	// creates are new jobs written with the pass and settled after it.
	creates []*createRequest
}

type jobWrite struct {
	je     *jobEntry
	record *model.Job // the copy to write; nil when only counts changed
	status model.JobStatus
	dirty  bool
}

type updateWrite struct {
	je   *jobEntry    // nil for a record no longer the job's running update
	ro   *rollout.Job // the job's rolling update the record was its
	live *model.Update
	copy *model.Update
}

// keepsRollout reports whether the job still has the rolling update the
// written record was of, with that record as its update. Callers hold
// e.mu.
func (e *Engine) keepsRollout(uw updateWrite) bool {
	return e.rollouts[uw.je.job.ID] == uw.ro && uw.ro.Update == uw.live
}

type migrationWrite struct {
	live *model.Migration
	copy *model.Migration
}

// takeWrites takes what the pass changed as a write set and clears the
// marks; putBack sets them again if the write fails. Callers hold e.mu.
func (e *Engine) takeWrites(jobs []*jobEntry) *passWrite {
	w := &passWrite{effects: e.effects, waiters: e.waiters, runEnds: e.runEnds}
	e.effects, e.waiters, e.runEnds = nil, nil, nil
	if n := len(e.dirtyTasks); n > 0 {
		// A task may be marked several times in one pass: write it once.
		seen := make(map[*model.TaskRuntime]bool, n)
		w.tasks = make([]*model.TaskRuntime, 0, n)
		for _, t := range e.dirtyTasks {
			if !seen[t] {
				seen[t] = true
				w.tasks = append(w.tasks, t)
			}
		}
		slab := make([]model.TaskRuntime, len(w.tasks))
		w.copies = make([]*model.TaskRuntime, len(w.tasks))
		for i, t := range w.tasks {
			slab[i] = *t
			w.copies[i] = &slab[i]
		}
		e.dirtyTasks = nil
	}
	for _, je := range jobs {
		if je.record {
			je.job.Status.TaskStates = countsMap(&je.counts)
		}
		if je.dirty || je.record {
			jw := jobWrite{je: je, dirty: je.dirty, status: je.job.Status}
			jw.status.TaskStates = countsMap(&je.counts)
			if je.record {
				cp := *je.job
				jw.record = &cp
			}
			w.jobs = append(w.jobs, jw)
			je.dirty, je.record = false, false
		}
		if ro := e.rollouts[je.job.ID]; ro != nil && ro.Dirty && ro.Update != nil {
			cp := *ro.Update
			w.updates = append(w.updates, updateWrite{je: je, ro: ro, live: ro.Update, copy: &cp})
			ro.Dirty = false
		}
	}
	for _, u := range e.endedUpdates {
		cp := *u
		w.updates = append(w.updates, updateWrite{live: u, copy: &cp})
	}
	e.endedUpdates = nil
	for id := range e.migrations.dirty {
		if m := e.migrations.running[id]; m != nil {
			// A deep copy: the live record's lists of jobs and instances
			// change in place while the copy is written.
			w.migrations = append(w.migrations, migrationWrite{live: m, copy: m.Clone()})
		}
		delete(e.migrations.dirty, id)
	}
	return w
}

// empty reports whether the pass changed nothing to write.
func (w *passWrite) empty() bool {
	return len(w.copies) == 0 && len(w.jobs) == 0 && len(w.updates) == 0 && len(w.migrations) == 0
}

// write stores a pass's write set. No lock is held: the engine's state
// may change meanwhile, and only the copies are read.
func (e *Engine) write(ctx context.Context, w *passWrite) error {
	p := store.Pass{Tasks: w.copies}
	for _, r := range w.creates {
		p.NewJobs = append(p.NewJobs, r.jobs...)
	}
	p.NewJobErrs = make([]error, len(p.NewJobs))
	defer w.settleCreates(e, p.NewJobErrs)
	for _, jw := range w.jobs {
		if jw.record != nil {
			p.Jobs = append(p.Jobs, jw.record)
		}
	}
	for _, uw := range w.updates {
		p.Updates = append(p.Updates, uw.copy)
	}
	for _, mw := range w.migrations {
		p.Migrations = append(p.Migrations, mw.copy)
	}
	if p.Empty() {
		return nil
	}
	started := time.Now() // measured for metrics only
	err := store.WritePass(ctx, e.cfg.Store, p)
	if errors.Is(err, store.ErrConflict) {
		// This engine is the only writer of its records: a conflict means
		// an earlier write whose answer was lost (a timeout) did land, or
		// part of a pass written kind by kind did. Take the stored
		// revisions and write again.
		e.adoptRevisions(ctx, &p)
		// New jobs refused with the pass are written again with it; those
		// with an outcome of their own (a store written kind by kind) keep
		// it.
		again := p
		again.NewJobs, again.NewJobErrs = nil, nil
		var at []int
		for i, err := range p.NewJobErrs {
			if errors.Is(err, store.ErrConflict) {
				again.NewJobs = append(again.NewJobs, p.NewJobs[i])
				at = append(at, i)
			}
		}
		again.NewJobErrs = make([]error, len(again.NewJobs))
		err = store.WritePass(ctx, e.cfg.Store, again)
		for k, i := range at {
			p.NewJobErrs[i] = again.NewJobErrs[k]
		}
	}
	e.stats.stored("write_pass", time.Since(started), err)
	return err
}

// settleCreates answers the pass's create requests with their jobs'
// outcomes (errs, in the order the pass wrote the jobs).
func (w *passWrite) settleCreates(e *Engine, errs []error) {
	for _, r := range w.creates {
		n := len(r.jobs)
		r.settle(e, errs[:n:n])
		errs = errs[n:]
	}
}

// putBack marks what a failed write held as changed again, so the next
// pass writes it; effects and waiting callers are kept for that pass too
// (callers are answered with the error: see answer). Callers hold e.mu.
func (e *Engine) putBack(w *passWrite) {
	// The copies' revisions may have moved on in part of a write that
	// failed half way: the live records keep theirs, and a conflict on the
	// next write adopts the stored ones.
	e.dirtyTasks = append(w.tasks, e.dirtyTasks...)
	e.runEnds = append(w.runEnds, e.runEnds...)
	e.effects = append(w.effects, e.effects...)
	for _, jw := range w.jobs {
		jw.je.dirty = jw.je.dirty || jw.dirty
		jw.je.record = jw.je.record || jw.record != nil
		e.visit(jw.je)
	}
	for _, uw := range w.updates {
		if uw.je != nil && e.keepsRollout(uw) {
			uw.ro.Dirty = true
			e.visit(uw.je)
		} else if uw.je == nil {
			e.endedUpdates = append(e.endedUpdates, uw.live)
		}
	}
	for _, mw := range w.migrations {
		if e.migrations.running[mw.live.ID] == mw.live {
			e.migrations.dirty[mw.live.ID] = true
		}
	}
}

// written applies a successful write to the live state: the revisions the
// store gave, tasks that ended for good leaving memory, finished jobs
// leaving memory and records that ended leaving their books. It returns
// the pass's events. Callers hold e.mu.
func (e *Engine) written(w *passWrite) []Event {
	evs := make([]Event, 0, len(w.runEnds)+len(w.copies)+len(w.jobs))
	// One event per changed task and pass, with its state as written,
	// after the ends of the runs that a new run replaced in the pass.
	evs = append(evs, w.runEnds...)
	for i, t := range w.tasks {
		cp := w.copies[i]
		t.Revision = cp.Revision
		evs = append(evs, Event{Time: cp.UpdateTime, Job: cp.ID.Job, Task: cp})
	}
	e.coolDown(w.tasks)
	for _, jw := range w.jobs {
		if jw.record != nil {
			jw.je.job.Revision = jw.record.Revision
		}
		if last := e.view.get(jw.je.job.ID); last != nil {
			e.view.set(jw.published(last))
		}
		st := jw.status
		evs = append(evs, Event{Time: e.cfg.Clock.Now(), Job: jw.je.job.ID, JobStatus: &st})
		// Finished jobs leave memory: the store has their tasks.
		if je := jw.je; je.job.Status.State.IsTerminal() && !je.evicted && !je.dirty {
			e.dropped.Add(uint64(len(je.tasks) - je.cold))
			je.tasks, je.waiting, je.evicted, je.cold = nil, nil, true, 0
		}
	}
	for _, uw := range w.updates {
		uw.live.Revision = uw.copy.Revision
		e.view.setUpdate(uw.copy)
		if uw.je != nil && e.keepsRollout(uw) && uw.live.State.IsTerminal() && !uw.ro.Dirty {
			delete(e.rollouts, uw.je.job.ID)
		}
	}
	for _, mw := range w.migrations {
		mw.live.Revision = mw.copy.Revision
		if id := mw.live.ID; mw.live.State.IsTerminal() && e.migrations.running[id] == mw.live && !e.migrations.dirty[id] {
			delete(e.migrations.running, id)
		}
	}
	return evs
}

// answer tells the callers waiting for a write how it went.
func (w *passWrite) answer(err error) { answerWaiters(w.waiters, err) }

// answerWaiters tells callers waiting for a write how it went.
func answerWaiters(waiters []chan error, err error) {
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrNotStored, err)
	}
	for _, c := range waiters {
		c <- err
	}
}

// refuseWaiters answers the callers waiting for a write with err.
func (e *Engine) refuseWaiters(err error) {
	e.mu.Lock()
	waiters := e.waiters
	e.waiters = nil
	e.mu.Unlock()
	answerWaiters(waiters, err)
}

// ErrNotStored: a change was made in the region's memory but the write
// that would store it failed. The region writes it again with its next
// pass, so the change may yet take effect; the caller cannot know.
var ErrNotStored = errors.New("the change is not stored yet (the region retries it)")

// awaitWrite is how an API call that changed the engine's state waits for
// the write that stores it: called with e.mu held, right after the change,
// it returns a wait function to call once the lock is released. The change
// is in the next pass's write set, since that set is taken under e.mu.
func (e *Engine) awaitWrite() func(ctx context.Context) error {
	c := make(chan error, 1)
	e.waiters = append(e.waiters, c)
	e.wake()
	return func(ctx context.Context) error {
		select {
		case err := <-c:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotStored, ctx.Err())
		}
	}
}

// storeJobLocked marks a job's record for the next pass's write, releases
// e.mu (which the caller holds) and waits for that write.
func (e *Engine) storeJobLocked(ctx context.Context, je *jobEntry) error {
	je.record = true
	e.visit(je)
	wait := e.awaitWrite()
	e.mu.Unlock()
	return wait(ctx)
}

// adoptRevisions takes the stored revision of every record of a pass
// whose write met a conflict; a task not stored at all starts again from
// revision 0.
func (e *Engine) adoptRevisions(ctx context.Context, p *store.Pass) {
	for _, t := range p.Tasks {
		stored, err := e.cfg.Store.GetTask(ctx, t.ID)
		switch {
		case err == nil:
			t.Revision = stored.Revision
		case errors.Is(err, store.ErrNotFound):
			t.Revision = 0
		}
	}
	for _, j := range p.Jobs {
		if stored, err := e.cfg.Store.GetJob(ctx, j.ID); err == nil {
			j.Revision = stored.Revision
		}
	}
	for _, u := range p.Updates {
		if stored, err := e.cfg.Store.GetUpdate(ctx, u.ID); err == nil {
			u.Revision = stored.Revision
		}
	}
	for _, m := range p.Migrations {
		if stored, err := e.cfg.Store.GetMigration(ctx, m.ID); err == nil {
			m.Revision = stored.Revision
		}
	}
	e.log.Warn("revisions taken from the store after a write whose outcome was unknown",
		"tasks", len(p.Tasks), "jobs", len(p.Jobs), "updates", len(p.Updates), "migrations", len(p.Migrations))
}
