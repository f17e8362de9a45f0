package jobmgr

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// mu guards order, tail and added; it is held only to swap them.
	mu mutex
	// order and tail are the jobs in listing order (creation time, then
	// id), tail the newest merged; both are replaced, never changed in
	// place, so a reader keeps the ones it took. tail is folded into
	// order once it is large, so a pass copies only the small tail.
	order, tail []*jobSlot
	// added are jobs created since the last merge, in no order.
	added []*jobSlot
	// periodic indexes the periodic jobs and their runs (periodic.go).
	periodic periodicIndex
}

// jobSlot holds a job's latest published snapshot and its place in the
// listing order, which never changes.
type jobSlot struct {
	at  time.Time
	id  model.JobID
	job atomic.Pointer[model.Job]
}

// Before is the listing order: creation time, then id.
func Before(a, b *model.Job) bool {
	if c := a.Status.CreateTime.Compare(b.Status.CreateTime); c != 0 {
		return c < 0
	}
	return a.ID < b.ID
}

func compareSlots(a, b *jobSlot) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return strings.Compare(string(a.id), string(b.id))
}

// mergeSlots merges two sorted lists into a new one.
func mergeSlots(a, b []*jobSlot) []*jobSlot {
	out := make([]*jobSlot, 0, len(a)+len(b))
	i, k := 0, 0
	for i < len(a) && k < len(b) {
		if compareSlots(b[k], a[i]) < 0 {
			out = append(out, b[k])
			k++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[k:]...)
}

// add publishes new jobs; they are listed at once, merged in later.
func (v *jobsView) add(jobs ...*model.Job) {
	slots := make([]*jobSlot, len(jobs))
	for i, j := range jobs {
		slots[i] = newSlot(j)
		v.byID.Store(j.ID, slots[i])
		v.periodic.note(j)
	}
	v.toMerge(slots...)
}

// newSlot is a job's place in the view.
func newSlot(j *model.Job) *jobSlot {
	s := &jobSlot{at: j.Status.CreateTime, id: j.ID}
	s.job.Store(j)
	return s
}

// toMerge queues slots to be merged into the sorted list.
func (v *jobsView) toMerge(slots ...*jobSlot) {
	v.mu.Lock()
	v.added = append(v.added, slots...)
	v.mu.Unlock()
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

// addIfAbsent publishes a job unless one of its id is published already,
// and reports whether it did.
func (v *jobsView) addIfAbsent(j *model.Job) bool {
	s := newSlot(j)
	if _, loaded := v.byID.LoadOrStore(j.ID, s); loaded {
		return false
	}
	v.periodic.note(j)
	v.toMerge(s)
	return true
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
	v.periodic.forget(s.(*jobSlot).job.Load())
	v.mu.Lock()
	defer v.mu.Unlock()
	drop := func(x *jobSlot) bool { return x == s }
	// New arrays: readers keep the ones they took.
	v.order = slices.DeleteFunc(slices.Clone(v.order), drop)
	v.tail = slices.DeleteFunc(slices.Clone(v.tail), drop)
	v.added = slices.DeleteFunc(v.added, drop)
}

// minTail is the size up to which the tail is merged on its own.
const minTail = 4096

// merge puts the jobs added since into the listing order: sorted and
// merged into the tail, and the tail into order once it is more than
// minTail and an eighth of order, so that a pass's cost is the tail's
// size, and folding the tail in is paid for by the jobs it holds.
func (v *jobsView) merge() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.added) == 0 {
		return
	}
	added := v.added
	v.added = nil
	slices.SortFunc(added, compareSlots)
	v.tail = mergeSlots(v.tail, added)
	if len(v.tail) > max(minTail, len(v.order)/8) {
		v.order, v.tail = mergeSlots(v.order, v.tail), nil
	}
}

// list calls f with each job in listing order until it returns false.
func (v *jobsView) list(f func(*model.Job) bool) { v.walk(nil, false, f) }

// walk calls f with each job in listing order (newest: the reverse) after
// the job of key from (nil: from the first), until f returns false. Each
// sorted list is entered at its place by binary search, so a page costs
// what it shows, not the jobs before it.
func (v *jobsView) walk(from *JobKey, newest bool, f func(*model.Job) bool) {
	v.mu.Lock()
	order, tail := v.order, v.tail
	added := slices.Clone(v.added)
	v.mu.Unlock()
	slices.SortFunc(added, compareSlots)
	lists := [3][]*jobSlot{order, tail, added}
	if from != nil {
		key := &jobSlot{at: from.Created, id: from.ID}
		for i, l := range lists {
			at, found := slices.BinarySearchFunc(l, key, compareSlots)
			if newest {
				lists[i] = l[:at]
			} else {
				if found {
					at++
				}
				lists[i] = l[at:]
			}
		}
	}
	for {
		var next *jobSlot
		pick := -1
		for i, l := range lists {
			if len(l) == 0 {
				continue
			}
			c := l[0]
			if newest {
				c = l[len(l)-1]
			}
			if next == nil || (!newest && compareSlots(c, next) < 0) || (newest && compareSlots(c, next) > 0) {
				next, pick = c, i
			}
		}
		if next == nil {
			return
		}
		if newest {
			lists[pick] = lists[pick][:len(lists[pick])-1]
		} else {
			lists[pick] = lists[pick][1:]
		}
		if !f(next.job.Load()) {
			return
		}
	}
}

// size is how many jobs the view lists.
func (v *jobsView) size() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.order) + len(v.tail) + len(v.added)
}
