package jobmgr

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/peloton-federated/peloton/shard/model"
)

// jobsView is every job as the store has it: what GetJob and ListJobs
// read, without the engine's lock, so that they never wait for a pass.
// A job appears once it is stored (CreateJobs publishes it), and each
// change shows once the pass that wrote it is done (written publishes the
// write set's copies), never while it is only decided. The jobs are
// immutable snapshots; readers get copies.
type jobsView struct {
	byID sync.Map // model.JobID → *jobSlot
	// updates are the running updates as written: UpdateID → *model.Update.
	updates sync.Map
	// mu guards order and added; it is held only to swap them.
	mu mutex
	// order is the jobs in listing order (creation time, then id); it is
	// replaced, never changed in place, so a reader keeps the one it took.
	order []*jobSlot
	// added are jobs created since order was last merged, in no order.
	added []*jobSlot
}

// setUpdate publishes an update as written: a running one is kept, an
// ended one dropped (the store has it).
func (v *jobsView) setUpdate(u *model.Update) {
	if u.State.IsTerminal() {
		v.updates.Delete(u.ID)
		return
	}
	cp := *u
	v.updates.Store(u.ID, &cp)
}

// update returns a copy of a running update as written, nil if none.
func (v *jobsView) update(id model.UpdateID) *model.Update {
	u, ok := v.updates.Load(id)
	if !ok {
		return nil
	}
	cp := *u.(*model.Update)
	return &cp
}

// jobSlot holds a job's latest published snapshot.
type jobSlot struct{ job atomic.Pointer[model.Job] }

// before is the listing order: creation time, then id.
func before(a, b *model.Job) bool {
	if c := a.Status.CreateTime.Compare(b.Status.CreateTime); c != 0 {
		return c < 0
	}
	return a.ID < b.ID
}

func compareSlots(a, b *jobSlot) int {
	ja, jb := a.job.Load(), b.job.Load()
	switch {
	case before(ja, jb):
		return -1
	case before(jb, ja):
		return 1
	}
	return 0
}

// add publishes new jobs; they are listed at once, merged into order later.
func (v *jobsView) add(jobs ...*model.Job) {
	slots := make([]*jobSlot, len(jobs))
	for i, j := range jobs {
		s := &jobSlot{}
		s.job.Store(j)
		v.byID.Store(j.ID, s)
		slots[i] = s
	}
	v.mu.Lock()
	v.added = append(v.added, slots...)
	v.mu.Unlock()
}

// set publishes a job's new snapshot.
func (v *jobsView) set(j *model.Job) {
	if s, ok := v.byID.Load(j.ID); ok {
		s.(*jobSlot).job.Store(j)
	}
}

// get returns a job's snapshot, nil if there is none.
func (v *jobsView) get(id model.JobID) *model.Job {
	s, ok := v.byID.Load(id)
	if !ok {
		return nil
	}
	return s.(*jobSlot).job.Load()
}

// remove takes a deleted job out.
func (v *jobsView) remove(id model.JobID) {
	s, ok := v.byID.LoadAndDelete(id)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// A new array: readers keep the one they took.
	v.order = slices.DeleteFunc(slices.Clone(v.order), func(x *jobSlot) bool { return x == s })
	v.added = slices.DeleteFunc(v.added, func(x *jobSlot) bool { return x == s })
}

// merge puts the jobs added since into order: one new slice, the added
// ones sorted and merged in (they are mostly the newest).
func (v *jobsView) merge() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.added) == 0 {
		return
	}
	added := v.added
	v.added = nil
	slices.SortFunc(added, compareSlots)
	if n := len(v.order); n == 0 || compareSlots(v.order[n-1], added[0]) < 0 {
		// The usual case: the new jobs are the newest. Appending writes
		// only past the end of every order a reader holds.
		v.order = append(v.order, added...)
		return
	}
	out := make([]*jobSlot, 0, len(v.order)+len(added))
	i, k := 0, 0
	for i < len(v.order) && k < len(added) {
		if compareSlots(added[k], v.order[i]) < 0 {
			out = append(out, added[k])
			k++
		} else {
			out = append(out, v.order[i])
			i++
		}
	}
	out = append(out, v.order[i:]...)
	v.order = append(out, added[k:]...)
}

// list calls f with each job in listing order until it returns false.
func (v *jobsView) list(f func(*model.Job) bool) {
	v.mu.Lock()
	order := v.order
	added := slices.Clone(v.added)
	v.mu.Unlock()
	slices.SortFunc(added, compareSlots)
	i, k := 0, 0
	for i < len(order) || k < len(added) {
		var s *jobSlot
		if k < len(added) && (i == len(order) || compareSlots(added[k], order[i]) < 0) {
			s, k = added[k], k+1
		} else {
			s, i = order[i], i+1
		}
		if !f(s.job.Load()) {
			return
		}
	}
}

// published is the snapshot a write set's job shows once written: the
// record as written when it was, else the job's last snapshot, with the
// counts and status the pass wrote.
func (jw *jobWrite) published(last *model.Job) *model.Job {
	var j model.Job
	switch {
	case jw.record != nil:
		j = *jw.record
	case last != nil:
		j = *last
	default:
		j = *jw.je.job
	}
	j.Status = jw.status
	return &j
}
