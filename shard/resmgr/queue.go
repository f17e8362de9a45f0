package resmgr

import (
	"sort"

	"github.com/peloton-federated/peloton/shard/model"
)

// Item is one task waiting for admission.
type Item struct {
	Task        model.TaskID
	Run         uint32
	Priority    int32
	Preemptible bool
	Resources   model.Resources
}

// Queue is a multi-priority pending queue: highest priority first, FIFO
// within a priority. Entries may go stale (the task was killed or moved on);
// the caller says which are still wanted when it admits.
type Queue struct {
	levels map[int32]*fifo
	order  []int32 // priorities, descending
	n      int
}

type fifo struct {
	items []Item
	head  int
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{levels: map[int32]*fifo{}} }

// Len is the number of queued entries, stale ones included.
func (q *Queue) Len() int { return q.n }

// Push appends an item at its priority.
func (q *Queue) Push(it Item) {
	l, ok := q.levels[it.Priority]
	if !ok {
		l = &fifo{}
		q.levels[it.Priority] = l
		q.order = append(q.order, it.Priority)
		sort.Slice(q.order, func(i, j int) bool { return q.order[i] > q.order[j] })
	}
	l.items = append(l.items, it)
	q.n++
}

// Admission is what an admission pass decided.
type Admission struct {
	Admitted []Item
	// Allocation is the allocation after admitting.
	Allocation model.Resources
}

// Admit pops items in priority order and admits each whose resources fit
// within entitlement on top of allocation. live reports whether an entry is
// still wanted; stale entries are dropped. A wanted item that does not fit
// stops its priority level (FIFO within a level) but lower levels may still
// admit smaller work, so one large task does not block everything below it.
// At most limit items are admitted (0: no limit).
func (q *Queue) Admit(entitlement, allocation model.Resources, limit int, live func(Item) bool) Admission {
	out := Admission{Allocation: allocation}
	for _, p := range q.order {
		l := q.levels[p]
		for l.head < len(l.items) {
			if limit > 0 && len(out.Admitted) >= limit {
				q.compact()
				return out
			}
			it := l.items[l.head]
			if !live(it) {
				l.head++
				q.n--
				continue
			}
			next := out.Allocation.Add(it.Resources)
			if !next.Fits(entitlement) {
				break
			}
			out.Allocation = next
			out.Admitted = append(out.Admitted, it)
			l.head++
			q.n--
		}
	}
	q.compact()
	return out
}

// compact releases consumed prefixes and empty levels.
func (q *Queue) compact() {
	kept := q.order[:0]
	for _, p := range q.order {
		l := q.levels[p]
		if l.head == len(l.items) {
			delete(q.levels, p)
			continue
		}
		if l.head > 1024 && l.head*2 > len(l.items) {
			l.items = append([]Item(nil), l.items[l.head:]...)
			l.head = 0
		}
		kept = append(kept, p)
	}
	q.order = kept
}
