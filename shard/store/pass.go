package store

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/peloton-federated/peloton/shard/model"
)

// Pass is what one pass of the job manager writes: the task runtimes and
// the job, update and migration records it changed. Each record is
// compared and set on its revision as WriteTasks, UpdateJob, WriteUpdate
// and WriteMigration do.
type Pass struct {
	Tasks      []*model.TaskRuntime
	Jobs       []*model.Job
	Updates    []*model.Update
	Migrations []*model.Migration
}

// Empty reports whether the pass has nothing to write.
func (p *Pass) Empty() bool {
	return len(p.Tasks) == 0 && len(p.Jobs) == 0 && len(p.Updates) == 0 && len(p.Migrations) == 0
}

// Stored increments every record's Revision, as a store does once the
// pass is written.
func (p *Pass) Stored() {
	for _, t := range p.Tasks {
		t.Revision++
	}
	for _, j := range p.Jobs {
		j.Revision++
	}
	for _, u := range p.Updates {
		u.Revision++
	}
	for _, m := range p.Migrations {
		m.Revision++
	}
}

// PassWriter is an optional capability: WritePass writes a Pass as one
// atomic write. ErrConflict on any record (or any other error): nothing is
// written and no revision changes; on success every record's Revision is
// incremented. A store without it is written record kind by record kind.
type PassWriter interface {
	WritePass(ctx context.Context, p Pass) error
}

// WritePass writes p to s: as one atomic write when s is a PassWriter,
// otherwise kind by kind (tasks, job records, updates, migrations),
// stopping at the first error. Then what was written before the error
// stays written and its records' Revision fields moved, so a caller that
// writes the pass again takes the stored revisions first.
func WritePass(ctx context.Context, s Store, p Pass) error {
	if w, ok := s.(PassWriter); ok {
		return w.WritePass(ctx, p)
	}
	if len(p.Tasks) > 0 {
		if err := s.WriteTasks(ctx, p.Tasks); err != nil {
			return err
		}
	}
	if b, ok := s.(JobBatchUpdater); ok && len(p.Jobs) > 0 {
		if err := b.UpdateJobs(ctx, p.Jobs); err != nil {
			return err
		}
	} else if len(p.Jobs) > 0 {
		// Each record is its own compare-and-set: written side by side.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(jobWriteParallelism)
		for _, j := range p.Jobs {
			g.Go(func() error { return s.UpdateJob(gctx, j) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	for _, u := range p.Updates {
		if err := s.WriteUpdate(ctx, u); err != nil {
			return err
		}
	}
	for _, m := range p.Migrations {
		if err := s.WriteMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// jobWriteParallelism is how many job records WritePass writes at a time
// to a store that cannot write them in one batch.
const jobWriteParallelism = 16
