package store

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/peloton-federated/peloton/shard/model"
)

// Pass is what one pass of the job manager writes: the jobs accepted since
// the last pass, and the task runtimes and the job, update and migration
// records it changed. Each changed record is compared and set on its
// revision as WriteTasks, UpdateJob, WriteUpdate and SwapRecord do.
type Pass struct {
	// NewJobs are created as CreateJobs creates them, each on its own:
	// NewJobErrs (as long as NewJobs) receives each one's outcome, nil
	// when it was stored (its Revision and ConfigVersion set), ErrExists
	// when its id was taken (nothing written for it), or why it was not
	// stored. A new job's outcome does not fail the rest of the pass.
	NewJobs    []*model.Job
	NewJobErrs []error
	Tasks      []*model.TaskRuntime
	Jobs       []*model.Job
	Updates    []*model.Update
	// Records are records of RecordStore's kinds (cluster migrations).
	Records []PassRecord
}

// Empty reports whether the pass has nothing to write.
func (p *Pass) Empty() bool {
	return len(p.NewJobs) == 0 && len(p.Tasks) == 0 && len(p.Jobs) == 0 && len(p.Updates) == 0 && len(p.Records) == 0
}

// Check refuses a pass whose new jobs have no room for their outcomes.
func (p *Pass) Check() error {
	if len(p.NewJobErrs) != len(p.NewJobs) {
		return fmt.Errorf("write pass: %w: %d new jobs and %d outcomes", ErrInvalid, len(p.NewJobs), len(p.NewJobErrs))
	}
	return nil
}

// Failed gives err to every new job of a pass whose write failed as a
// whole and that has no outcome of its own yet.
func (p *Pass) Failed(err error) {
	for i := range p.NewJobErrs {
		if p.NewJobErrs[i] == nil {
			p.NewJobErrs[i] = err
		}
	}
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
	for _, r := range p.Records {
		*r.Revision()++
	}
}

// Prepare checks each record of a pass with check and prepares it for a
// backend's write with prepare (encoded, or cloned, at its next revision),
// before anything is written; the first record refused ends it with
// "write pass: " and why.
func Prepare[T, R any](recs []T, check func(T) error, prepare func(T) R) ([]R, error) {
	out := make([]R, len(recs))
	for i, r := range recs {
		if err := check(r); err != nil {
			return nil, fmt.Errorf("write pass: %w", err)
		}
		out[i] = prepare(r)
	}
	return out, nil
}

// PassWriter is an optional capability: WritePass writes a Pass as one
// atomic write. ErrConflict on any changed record (or any other error):
// nothing is written, no revision changes, and each new job without an
// outcome of its own gets the error; on success every changed record's
// Revision is incremented. A store without it is written record kind by
// record kind.
type PassWriter interface {
	WritePass(ctx context.Context, p Pass) error
}

// WritePass writes p to s: as one atomic write when s is a PassWriter,
// otherwise kind by kind (new jobs, tasks, job records, updates, then
// Records), stopping at the first error of a changed record. Then what
// was written before the error stays written and its records' Revision
// fields moved, so a caller that writes the pass again takes the stored
// revisions first (and leaves out the new jobs that have an outcome).
func WritePass(ctx context.Context, s Store, p Pass) error {
	if err := p.Check(); err != nil {
		return err
	}
	if w, ok := s.(PassWriter); ok {
		return w.WritePass(ctx, p)
	}
	if len(p.NewJobs) > 0 {
		copy(p.NewJobErrs, s.CreateJobs(ctx, p.NewJobs))
	}
	if len(p.Tasks) > 0 {
		if err := s.WriteTasks(ctx, p.Tasks); err != nil {
			return err
		}
	}
	if len(p.Jobs) > 0 {
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
	for _, r := range p.Records {
		rec, err := r.Prepare()
		if err != nil {
			return err
		}
		if err := s.SwapRecord(ctx, rec.Table, rec.Key, rec.Rev, rec.Data); err != nil {
			return fmt.Errorf("write %s %s: %w", rec.Table.Name, rec.Key, err)
		}
		*r.Revision()++
	}
	return nil
}

// jobWriteParallelism is how many job records WritePass writes at a time
// to a store that cannot write them in one batch.
const jobWriteParallelism = 16
