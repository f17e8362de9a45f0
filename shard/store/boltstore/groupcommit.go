package boltstore

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// groupCommit commits the writes of concurrent callers together: a write
// that arrives while a commit is under way waits for it, then every write
// that waited goes into the next transaction, one fsync for all. Unlike
// bbolt's own Batch, which closes a batch after a fixed delay, a batch
// here grows with the time a commit takes, so the slower the disk, the
// more each commit carries (and an idle store commits a lone write at
// once, without waiting for company).
type groupCommit struct {
	db *bolt.DB

	mu      sync.Mutex
	pending []*groupWrite
	// committing is true while a caller commits for the group.
	committing bool
}

// groupWrite is one caller's write: fn, then err once it was committed.
// A waiting caller may be asked to commit the next group (lead).
type groupWrite struct {
	fn   func(*bolt.Tx) error
	err  error
	done chan struct{}
	lead chan struct{}
}

func newGroupCommit(db *bolt.DB) *groupCommit { return &groupCommit{db: db} }

// maxGroup bounds the writes of one transaction.
const maxGroup = 1024

// run commits fn with the writes of other callers and returns its error.
// fn may be run more than once (alone, after a write of the group failed),
// so it must start afresh each time, as bbolt's Batch asks too.
//
// The caller that finds no commit under way commits the group waiting
// then (its own write among them); while it does, others queue. When it
// is done it hands the next group to the first caller queued, so that no
// caller commits for others more than once.
func (g *groupCommit) run(fn func(*bolt.Tx) error) error {
	w := &groupWrite{fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, w)
	leading := !g.committing
	g.committing = true
	g.mu.Unlock()
	if !leading {
		select {
		case <-w.done:
			return w.err
		case <-w.lead:
		}
	}
	g.mu.Lock()
	group := g.pending
	if len(group) > maxGroup {
		group = group[:maxGroup]
	}
	g.pending = g.pending[len(group):]
	g.mu.Unlock()
	g.commit(group)
	g.mu.Lock()
	if len(g.pending) > 0 {
		close(g.pending[0].lead)
	} else {
		g.committing = false
	}
	g.mu.Unlock()
	<-w.done
	return w.err
}

// commit runs a group's writes in one transaction. When one of them
// fails, the transaction is rolled back and each write runs alone, so
// that one failing write changes nothing for the others.
func (g *groupCommit) commit(group []*groupWrite) {
	failed := -1
	err := g.db.Update(func(tx *bolt.Tx) error {
		for i, w := range group {
			if err := w.fn(tx); err != nil {
				failed = i
				return err
			}
		}
		return nil
	})
	if err != nil && (failed >= 0 || len(group) > 1) {
		// A write failed, or the commit did: each write alone finds out
		// whether it is to blame.
		for _, w := range group {
			w.err = g.db.Update(w.fn)
			close(w.done)
		}
		return
	}
	for _, w := range group {
		w.err = err
		close(w.done)
	}
}
