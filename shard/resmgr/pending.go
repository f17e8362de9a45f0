package resmgr

import "slices"

// pendingLevel is the FIFO of one priority of one kind in one pool. Removed
// entries leave a nil slot that the head skips and compaction drops.
type pendingLevel struct {
	priority int32
	items    []*entry
	head     int // items before head are all nil
	live     int // non-nil items
}

// pendingQueue is one pool's pending gangs of one kind: levels by priority,
// highest first.
type pendingQueue struct {
	levels []*pendingLevel
}

// push appends e at its priority.
func (q *pendingQueue) push(e *entry) {
	p := e.priority
	i, found := slices.BinarySearchFunc(q.levels, p, func(l *pendingLevel, p int32) int {
		switch {
		case l.priority > p:
			return -1
		case l.priority < p:
			return 1
		}
		return 0
	})
	if !found {
		q.levels = slices.Insert(q.levels, i, &pendingLevel{priority: p})
	}
	l := q.levels[i]
	e.level, e.slot = l, int32(len(l.items))
	l.items = append(l.items, e)
	l.live++
}

// take removes e from its level. It never moves other entries, so it is
// safe within each; tidy compacts later.
func (q *pendingQueue) take(e *entry) {
	l := e.level
	if l == nil || int(e.slot) >= len(l.items) || l.items[e.slot] != e {
		return
	}
	l.items[e.slot] = nil
	l.live--
	e.level = nil
	for l.head < len(l.items) && l.items[l.head] == nil {
		l.head++
	}
	if l.live == 0 {
		q.dropLevel(l)
	}
}

// tidy compacts levels where removed slots outnumber queued gangs.
func (q *pendingQueue) tidy() {
	for _, l := range q.levels {
		if dead := len(l.items) - l.live; dead > 64 && dead > l.live {
			l.compact()
		}
	}
}

// dropLevel forgets an empty level.
func (q *pendingQueue) dropLevel(l *pendingLevel) {
	if i := slices.Index(q.levels, l); i >= 0 {
		q.levels = slices.Delete(q.levels, i, i+1)
	}
}

// compact drops nil slots and renumbers the entries.
func (l *pendingLevel) compact() {
	kept := l.items[:0]
	for _, e := range l.items[l.head:] {
		if e != nil {
			e.slot = int32(len(kept))
			kept = append(kept, e)
		}
	}
	clear(l.items[len(kept):])
	l.items, l.head = kept, 0
}

// len is the number of gangs queued.
func (q *pendingQueue) len() int {
	n := 0
	for _, l := range q.levels {
		n += l.live
	}
	return n
}

// each calls f for every queued gang in admission order until f returns
// false. f may take the gang it is given out of the queue, and nothing else.
func (q *pendingQueue) each(f func(*entry) bool) {
	for li := 0; li < len(q.levels); {
		l := q.levels[li]
		for i := l.head; i < len(l.items); i++ {
			e := l.items[i]
			if e == nil {
				continue
			}
			if !f(e) {
				return
			}
		}
		if li < len(q.levels) && q.levels[li] == l {
			li++ // the level is still there: move on
		}
	}
}
