package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/store/kinds"

	"github.com/peloton-federated/peloton/shard/store"
	"golang.org/x/sync/errgroup"
)

// passOut is a pass's write set as the Engine writes it: with the API
// calls waiting for it and the new jobs written with it.
type passOut struct {
	*core.PassWrite
	// waiters are API calls answered once the write is done.
	waiters []chan error
	// creates are new jobs written with the pass and settled after it.
	creates []*createRequest
}

// write stores a pass's write set. No lock is held: the engine's state
// may change meanwhile, and only the copies are read.
func (e *Engine) write(ctx context.Context, w *passOut) error {
	p := store.Pass{Tasks: w.Copies}
	for _, r := range w.creates {
		p.NewJobs = append(p.NewJobs, r.jobs...)
	}
	p.NewJobErrs = make([]error, len(p.NewJobs))
	defer w.settleCreates(e, p.NewJobErrs)
	for _, jw := range w.Jobs {
		if jw.Record != nil {
			p.Jobs = append(p.Jobs, jw.Record)
		}
	}
	for _, uw := range w.Updates {
		p.Updates = append(p.Updates, uw.Copy)
	}
	for _, mw := range w.Migrations {
		p.Records = append(p.Records, kinds.Migrations.Record(mw.Copy))
	}
	if p.Empty() {
		return nil
	}
	started := time.Now() // measured for metrics only
	err := store.WritePass(ctx, e.cfg.Store, p)
	// This engine is the only writer of its records: a conflict means an
	// earlier write whose answer was lost (a timeout) did land, or part of
	// a pass written kind by kind did. The stored revisions are taken and
	// the pass written again. On Cassandra a timed-out conditional write
	// may still land after the revisions were read (the next conditional
	// write on its partition finishes it first), so a conflict may come
	// back once more: the pass is tried a few times before it fails as a
	// whole and waits for the next pass.
	for round := 0; errors.Is(err, store.ErrConflict) && round < conflictRounds; round++ {
		if err = e.adoptRevisions(ctx, &p); err != nil {
			break
		}
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
func (w *passOut) settleCreates(e *Engine, errs []error) {
	for _, r := range w.creates {
		n := len(r.jobs)
		r.settle(&e.intake, errs[:n:n])
		errs = errs[n:]
	}
}

// written applies a successful write to the live state: the revisions the
// store gave, tasks that ended for good leaving memory, finished jobs
// leaving memory and records that ended leaving their books. It returns
// the pass's events. Callers hold e.mu.
func (e *Engine) written(w *passOut) []core.Event {
	evs := e.c.Settle(w.PassWrite, e.cfg.Clock.Now())
	for _, jw := range w.Jobs {
		if last := e.view.get(jw.Entry.Job.ID); last != nil {
			e.view.set(jw.Published(last))
		}
	}
	for _, uw := range w.Updates {
		e.view.setUpdate(uw.Copy)
	}
	return evs
}

// answer tells the callers waiting for a write how it went.
func (w *passOut) answer(err error) { answerWaiters(w.waiters, err) }

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
	e.hold()
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
func (e *Engine) storeJobLocked(ctx context.Context, je *core.Job) error {
	je.Record = true
	e.c.Visit(je)
	wait := e.awaitWrite()
	e.mu.Unlock()
	return wait(ctx)
}

// conflictRounds is how many times a pass that met a conflict takes the
// stored revisions and is written again before it fails.
const conflictRounds = 3

// adoptParallelism is how many stored revisions adoptRevisions reads at
// once: a pass that failed may hold thousands of records.
const adoptParallelism = 32

// adoptRevisions takes the stored revision of every record of a pass
// whose write met a conflict; a task not stored at all starts again from
// revision 0. The records are read side by side; the first read that
// fails stops the others and is returned.
func (e *Engine) adoptRevisions(ctx context.Context, p *store.Pass) error {
	st := e.cfg.Store
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(adoptParallelism)
	for _, t := range p.Tasks {
		g.Go(func() error {
			stored, err := st.GetTask(gctx, t.ID)
			switch {
			case err == nil:
				t.Revision = stored.Revision
			case errors.Is(err, store.ErrNotFound):
				t.Revision = 0
			default:
				return err
			}
			return nil
		})
	}
	for _, j := range p.Jobs {
		g.Go(func() error {
			stored, err := st.GetJob(gctx, j.ID)
			if err == nil {
				j.Revision = stored.Revision
			}
			return ignoreNotFound(err)
		})
	}
	for _, u := range p.Updates {
		g.Go(func() error {
			stored, err := st.GetUpdate(gctx, u.ID)
			if err == nil {
				u.Revision = stored.Revision
			}
			return ignoreNotFound(err)
		})
	}
	for _, r := range p.Records {
		g.Go(func() error {
			rev, ok, err := store.StoredRevision(gctx, st, r)
			if ok {
				*r.Revision() = rev
			}
			return err
		})
	}
	err := g.Wait()
	e.c.Log.Warn("revisions taken from the store after a write whose outcome was unknown",
		"tasks", len(p.Tasks), "jobs", len(p.Jobs), "updates", len(p.Updates), "records", len(p.Records), "err", err)
	if err != nil {
		return fmt.Errorf("reading stored revisions: %w", err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
