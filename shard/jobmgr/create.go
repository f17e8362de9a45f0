package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// NewJob is a job to create: its validated spec and, when the caller
// derives it (a request id makes the call safe to retry), its id.
type NewJob struct {
	// ID is the job's id; empty gives it a new random one. A job of this
	// id stored already is taken to be this one, created by an earlier
	// attempt of the same request.
	ID   model.JobID
	Spec model.JobSpec
	// RunOf makes the job a run of a periodic job (periodic.go).
	RunOf *model.RunOf
}

// Created is what became of one NewJob: the job, or why it was refused.
type Created struct {
	// Job is a copy of the job as created, nil when it was refused or
	// Existing.
	Job *model.Job
	// ID is the job's id when it was created or Existing.
	ID model.JobID
	// Existing: a job of the asked-for id was stored already; nothing was
	// created.
	Existing bool
	Err      error
}

// createJob stores a validated job and returns it; its tasks are created by
// the loop afterwards.
func (e *Engine) createJob(ctx context.Context, spec model.JobSpec) (*model.Job, error) {
	c := e.createJobs(ctx, []NewJob{{Spec: spec}})[0]
	return c.Job, c.Err
}

// createJobs stores validated jobs, each on its own, in one store call:
// every job is stored whole or not at all, and out[i] says what became of
// jobs[i]. The jobs join the loop's state at its next pass (or the next
// API call that takes the lock): accepting jobs never waits for a pass.
func (e *Engine) createJobs(ctx context.Context, jobs []NewJob) []Created {
	out := make([]Created, len(jobs))
	now := e.cfg.Clock.Now()
	e.recountIfIdle()
	batch := make([]*model.Job, 0, len(jobs))
	at := make([]int, 0, len(jobs))
	for i := range jobs {
		spec := &jobs[i].Spec
		if spec.Instances > e.cfg.Limits.InstancesPerJob {
			out[i].Err = fmt.Errorf("instances: %d is more than this region's limit of %d per job: %w", spec.Instances, e.cfg.Limits.InstancesPerJob, ErrInvalid)
			continue
		}
		if err := e.pending.reserve(spec.Pool, int64(spec.OwnTasks()), e.cfg.Limits.PendingTasksPerPool); err != nil {
			// A retried request finds its jobs stored even when their
			// pool filled up since.
			if e.stored(ctx, jobs[i].ID) {
				out[i] = Created{ID: jobs[i].ID, Existing: true}
			} else {
				out[i].Err = err
			}
			continue
		}
		id := jobs[i].ID
		if id == "" {
			id = NewJobID()
		}
		batch = append(batch, &model.Job{
			ID:            id,
			Spec:          *spec,
			ConfigVersion: 1,
			Status: model.JobStatus{
				State:      model.JobInitialized,
				CreateTime: now,
				Region:     e.cfg.Region,
				RunOf:      jobs[i].RunOf,
			},
		})
		at = append(at, i)
	}
	if len(batch) > 0 {
		errs, copies := e.storeNewJobs(ctx, batch)
		for k, j := range batch {
			i := at[k]
			switch err := errs[k]; {
			case err == nil:
				out[i] = Created{Job: copies[k], ID: j.ID}
			case errors.Is(err, store.ErrExists) && jobs[i].ID != "":
				out[i] = Created{ID: j.ID, Existing: true}
			default:
				out[i].Err = fmt.Errorf("store job: %w", err)
			}
		}
	}
	e.takeInExisting(ctx, out)
	return out
}

// takeInExisting makes sure that the stored jobs a retried request found
// are in the state. An earlier attempt's write can land where this engine
// never looked: the region's previous leader, paused between its fence
// check and its write or killed with the write in flight, stores the job
// after this one loaded the region's jobs. The retry is answered Existing,
// so the job must run here: it is read from the store and joins the state
// as a created job does. A job that cannot be read is answered with the
// error, and the caller tries again.
func (e *Engine) takeInExisting(ctx context.Context, out []Created) {
	for i := range out {
		if !out[i].Existing || e.view.get(out[i].ID) != nil {
			continue
		}
		id := out[i].ID
		j, err := e.cfg.Store.GetJob(ctx, id)
		if err != nil {
			out[i] = Created{Err: fmt.Errorf("job %s is stored but could not be read: %w", id, err)}
			continue
		}
		if !e.view.addIfAbsent(copyJob(j)) {
			continue // another attempt took it in meanwhile
		}
		e.pending.reserve(j.Spec.Pool, int64(j.Spec.OwnTasks()), math.MaxInt64)
		e.incomingMu.Lock()
		e.incoming = append(e.incoming, j)
		e.incomingMu.Unlock()
		e.log.Warn("job stored by an earlier attempt is taken in: it was written after this member loaded the region's jobs",
			"job", id, "name", j.Spec.Name, "instances", j.Spec.Instances)
		cp := copyJob(j)
		e.emit([]Event{{Time: j.Status.CreateTime, Job: id, JobStatus: &cp.Status}})
		e.wake()
	}
}

// createRequest is a batch of new jobs waiting for the loop's next pass,
// which writes them with the rest of its records and settles them.
type createRequest struct {
	jobs   []*model.Job
	errs   []error
	copies []*model.Job
	done   chan struct{}
}

// storeNewJobs stores new jobs and settles them (settleNewJobs). While the
// loop runs and does not write, on a store that writes a pass as one
// write, they go into its next pass's write with the pass's own records,
// and whoever asked waits for it; otherwise (recovering, stopped, a pass
// writing, a store written kind by kind) they are a store call of their
// own.
// It returns each job's outcome and, for a stored job, a copy of it as
// created. A caller whose ctx ends first is answered ErrNotStored: the
// pass still settles its jobs, so a job it stores joins the state.
func (e *Engine) storeNewJobs(ctx context.Context, jobs []*model.Job) ([]error, []*model.Job) {
	r := &createRequest{jobs: jobs, done: make(chan struct{})}
	e.incomingMu.Lock()
	queued := e.passNewJobs && e.passCreates && !e.passWriting
	if queued {
		e.creates = append(e.creates, r)
	}
	e.incomingMu.Unlock()
	if !queued {
		errs := e.cfg.Store.CreateJobs(ctx, jobs)
		return errs, e.settleNewJobs(jobs, errs)
	}
	e.wake()
	select {
	case <-r.done:
		return r.errs, r.copies
	case <-ctx.Done():
		errs := make([]error, len(jobs))
		for i := range errs {
			errs[i] = fmt.Errorf("%w: %w", ErrNotStored, ctx.Err())
		}
		return errs, nil
	}
}

// settle answers a create request with its jobs' outcomes.
func (r *createRequest) settle(e *Engine, errs []error) {
	r.errs = errs
	r.copies = e.settleNewJobs(r.jobs, errs)
	close(r.done)
}

// settleNewJobs takes the outcome of storing new jobs: a stored job joins
// the state (readers see it at once, the loop takes it in at its next
// pass) and its creation is published; one that was not gives its pool's
// room back. It returns copies of the stored jobs as created.
func (e *Engine) settleNewJobs(jobs []*model.Job, errs []error) []*model.Job {
	copies := make([]*model.Job, len(jobs))
	created := make([]*model.Job, 0, len(jobs))
	published := make([]*model.Job, 0, len(jobs))
	events := make([]Event, 0, len(jobs))
	for k, j := range jobs {
		if errs[k] != nil {
			e.pending.reserve(j.Spec.Pool, -int64(j.Spec.OwnTasks()), e.cfg.Limits.PendingTasksPerPool)
			continue
		}
		cp := copyJob(j)
		copies[k] = cp
		created = append(created, j)
		published = append(published, copyJob(j))
		events = append(events, Event{Time: j.Status.CreateTime, Job: j.ID, JobStatus: &cp.Status})
	}
	if len(created) == 0 {
		return copies
	}
	e.view.add(published...)
	e.incomingMu.Lock()
	e.incoming = append(e.incoming, created...)
	e.incomingMu.Unlock()
	if len(created) == 1 {
		j := created[0]
		e.log.Info("job created", "job", j.ID, "name", j.Spec.Name, "instances", j.Spec.Instances)
	} else {
		e.log.Info("jobs created", "jobs", len(created), "first", created[0].ID, "last", created[len(created)-1].ID)
	}
	e.emit(events)
	e.wake()
	return copies
}

// takeCreates takes the create requests waiting for a pass, which then
// writes: new jobs accepted while it writes are stored on their own, in a
// store call that shares the pass's commit or the next one (group commit),
// rather than wait for the pass after it.
func (e *Engine) takeCreates(writing bool) []*createRequest {
	e.incomingMu.Lock()
	defer e.incomingMu.Unlock()
	rs := e.creates
	e.creates = nil
	e.passWriting = writing
	return rs
}

// setPassWriting records whether a pass writes.
func (e *Engine) setPassWriting(writing bool) {
	e.incomingMu.Lock()
	e.passWriting = writing
	e.incomingMu.Unlock()
}

// refuseCreates answers the create requests waiting for a pass with err;
// stop also makes later ones a store call of their own (the loop ended).
func (e *Engine) refuseCreates(err error, stop bool) {
	e.incomingMu.Lock()
	rs := e.creates
	e.creates = nil
	if stop {
		e.passCreates = false
	}
	e.incomingMu.Unlock()
	for _, r := range rs {
		errs := make([]error, len(r.jobs))
		for i := range errs {
			errs[i] = err
		}
		r.settle(e, errs)
	}
}

// stored reports whether a job of this id is in the store.
func (e *Engine) stored(ctx context.Context, id model.JobID) bool {
	if id == "" {
		return false
	}
	_, err := e.cfg.Store.GetJob(ctx, id)
	return err == nil
}
