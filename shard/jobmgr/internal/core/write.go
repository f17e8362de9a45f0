package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// PassWrite is what one pass writes: copies of the records it changed,
// taken under the engine's lock and written without it. A task's, a job's
// and an update's copy is shallow: what they hold by reference (a task's
// ports and pin, a job's spec maps and lists) is replaced, never changed
// in place. A migration is copied deep. The live records
// go on changing while the store works; the copies are what is written,
// and what the pass's events show.
type PassWrite struct {
	// Tasks are the changed Tasks, live, and their copies (one array).
	Tasks  []*model.TaskRuntime
	Copies []*model.TaskRuntime
	// runEnds are events of runs a new run replaced in the pass.
	runEnds []Event
	// Jobs are the Jobs whose record or task counts changed: record says
	// the record is written, status is what their event shows.
	Jobs []jobWrite
	// Updates and migrations are the changed records, live and copied.
	Updates    []updateWrite
	Migrations []migrationWrite
	// Effects are carried out once the write succeeded.
	Effects []Effect
}

type jobWrite struct {
	Entry  *Job
	Record *model.Job // the copy to write; nil when only counts changed
	Status model.JobStatus
	Dirty  bool
}

type updateWrite struct {
	Entry *Job         // nil for a record no longer the job's running update
	ro    *rollout.Job // the job's rolling update the record was its
	live  *model.Update
	Copy  *model.Update
}

type migrationWrite struct {
	live *model.Migration
	Copy *model.Migration
}

// copyTasks returns the tasks marked changed, each once (a task may be
// marked several times in one pass), and copies of them.
func copyTasks(dirty []*model.TaskRuntime) (tasks, copies []*model.TaskRuntime) {
	if len(dirty) == 0 {
		return nil, nil
	}
	seen := make(map[*model.TaskRuntime]bool, len(dirty))
	tasks = make([]*model.TaskRuntime, 0, len(dirty))
	for _, t := range dirty {
		if !seen[t] {
			seen[t] = true
			tasks = append(tasks, t)
		}
	}
	slab := make([]model.TaskRuntime, len(tasks))
	copies = make([]*model.TaskRuntime, len(tasks))
	for i, t := range tasks {
		slab[i] = *t
		copies[i] = &slab[i]
	}
	return tasks, copies
}

// takeJob adds the job's record and counts, when they changed, and its
// update's record, when it did, to the write set and clears their marks.
func (w *PassWrite) takeJob(je *Job, ro *rollout.Job) {
	if je.Record {
		je.Job.Status.TaskStates = countsMap(&je.Counts)
	}
	if je.Dirty || je.Record {
		jw := jobWrite{Entry: je, Dirty: je.Dirty, Status: je.Job.Status}
		jw.Status.TaskStates = countsMap(&je.Counts)
		if je.Record {
			cp := *je.Job
			jw.Record = &cp
		}
		w.Jobs = append(w.Jobs, jw)
		je.Dirty, je.Record = false, false
	}
	if ro != nil && ro.Dirty && ro.Update != nil {
		cp := *ro.Update
		w.Updates = append(w.Updates, updateWrite{Entry: je, ro: ro, live: ro.Update, Copy: &cp})
		ro.Dirty = false
	}
}

// empty reports whether the pass changed nothing to write.
func (w *PassWrite) empty() bool {
	return len(w.Copies) == 0 && len(w.Jobs) == 0 && len(w.Updates) == 0 && len(w.Migrations) == 0
}

// PutBack marks what a failed write held as changed again, so the next
// pass writes it; effects and waiting callers are kept for that pass too
// (callers are answered with the error: see answer). Callers hold e.mu.
func (e *State) PutBack(w *PassWrite) {
	// The copies' revisions may have moved on in part of a write that
	// failed half way: the live records keep theirs, and a conflict on the
	// next write adopts the stored ones.
	e.dirtyTasks = append(w.Tasks, e.dirtyTasks...)
	e.runEnds = append(w.runEnds, e.runEnds...)
	e.Effects = append(w.Effects, e.Effects...)
	for _, jw := range w.Jobs {
		jw.Entry.Dirty = jw.Entry.Dirty || jw.Dirty
		jw.Entry.Record = jw.Entry.Record || jw.Record != nil
		e.Visit(jw.Entry)
	}
	for _, uw := range w.Updates {
		if uw.Entry != nil && (writes{e}).keepsRollout(uw) {
			uw.ro.Dirty = true
			e.Visit(uw.Entry)
		} else if uw.Entry == nil {
			e.endedUpdates = append(e.endedUpdates, uw.live)
		}
	}
	for _, mw := range w.Migrations {
		if e.Migrations.Running[mw.live.ID] == mw.live {
			e.Migrations.Dirty[mw.live.ID] = true
		}
	}
}

// Settle takes in the outcome of a write set that was stored: the
// records take the store's revisions, tasks and jobs that ended for good
// leave memory, ended updates and migrations leave the core. It returns
// the pass's events; at is the time of the jobs' events.
func (e *State) Settle(w *PassWrite, at time.Time) []Event {
	evs := make([]Event, 0, len(w.runEnds)+len(w.Copies)+len(w.Jobs))
	// One event per changed task and pass, with its state as written,
	// after the ends of the runs that a new run replaced in the pass.
	evs = append(evs, w.runEnds...)
	for i, t := range w.Tasks {
		cp := w.Copies[i]
		t.Revision = cp.Revision
		evs = append(evs, Event{Time: cp.UpdateTime, Job: cp.ID.Job, Task: cp})
	}
	writes{e}.coolDown(w.Tasks)
	for _, jw := range w.Jobs {
		evs = append(evs, writes{e}.settleJob(jw, at))
	}
	writes{e}.settleRecords(w)
	return evs
}

// writes gathers what a pass changed into the one write that stores it,
// and settles the state once that write is stored or failed.
type writes struct{ e *State }

// coolDown drops stored tasks that have ended for good from memory.
func (ws writes) coolDown(written []*model.TaskRuntime) {
	if ws.e.Settings.KeepEndedTasks {
		return
	}
	for _, t := range written {
		if !t.State.IsTerminal() || IsCold(t) {
			continue
		}
		je := ws.e.Jobs[t.ID.Job]
		// Instances beyond the job's count (being removed, or a
		// migration's surge instances) stay: they are run again or
		// forgotten soon.
		if je == nil || je.Evicted || GangSize(&je.Job.Spec) > 1 || int(t.ID.Instance) >= len(je.Tasks) || je.Tasks[t.ID.Instance] != t ||
			t.ID.Instance >= je.Job.Spec.Instances {
			continue
		}
		je.Tasks[t.ID.Instance] = coldMarks[t.State]
		je.Cold++
		ws.e.DroppedTasks++
	}
}

// settleRecords takes the stored revisions of updates and migrations; the
// ended ones not changed since leave the core.
func (ws writes) settleRecords(w *PassWrite) {
	for _, uw := range w.Updates {
		uw.live.Revision = uw.Copy.Revision
		if uw.Entry != nil && ws.keepsRollout(uw) && uw.live.State.IsTerminal() && !uw.ro.Dirty {
			delete(ws.e.Rollouts, uw.Entry.Job.ID)
		}
	}
	for _, mw := range w.Migrations {
		mw.live.Revision = mw.Copy.Revision
		if id := mw.live.ID; mw.live.State.IsTerminal() && ws.e.Migrations.Running[id] == mw.live && !ws.e.Migrations.Dirty[id] {
			delete(ws.e.Migrations.Running, id)
		}
	}
}

// settleJob takes a job's stored revision and returns its event; a
// finished job leaves memory (the store has its tasks).
func (ws writes) settleJob(jw jobWrite, at time.Time) Event {
	if jw.Record != nil {
		jw.Entry.Job.Revision = jw.Record.Revision
	}
	st := jw.Status
	if je := jw.Entry; je.Job.Status.State.IsTerminal() && !je.Evicted && !je.Dirty {
		ws.e.DroppedTasks += uint64(len(je.Tasks) - je.Cold)
		je.Tasks, je.waiting, je.Evicted, je.Cold = nil, nil, true, 0
	}
	return Event{Time: at, Job: jw.Entry.Job.ID, JobStatus: &st}
}

// takeWrites takes what the pass changed as a write set and clears the
// marks; PutBack sets them again if the write fails.
func (ws writes) takeWrites(jobs []*Job) *PassWrite {
	w := &PassWrite{Effects: ws.e.Effects, runEnds: ws.e.runEnds}
	ws.e.Effects, ws.e.runEnds = nil, nil
	w.Tasks, w.Copies = copyTasks(ws.e.dirtyTasks)
	ws.e.dirtyTasks = nil
	for _, je := range jobs {
		w.takeJob(je, ws.e.Rollouts[je.Job.ID])
	}
	for _, u := range ws.e.endedUpdates {
		cp := *u
		w.Updates = append(w.Updates, updateWrite{live: u, Copy: &cp})
	}
	ws.e.endedUpdates = nil
	for id := range ws.e.Migrations.Dirty {
		if m := ws.e.Migrations.Running[id]; m != nil {
			// A deep copy: the live record's lists of jobs and instances
			// change in place while the copy is written.
			w.Migrations = append(w.Migrations, migrationWrite{live: m, Copy: m.Clone()})
		}
		delete(ws.e.Migrations.Dirty, id)
	}
	return w
}

// keepsRollout reports whether the job still has the rolling update the
// written record was of, with that record as its update. Callers hold
// e.mu.
func (ws writes) keepsRollout(uw updateWrite) bool {
	return ws.e.Rollouts[uw.Entry.Job.ID] == uw.ro && uw.ro.Update == uw.live
}
