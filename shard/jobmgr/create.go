package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
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

// intake is how new jobs come in: it stores them (in the loop's next
// pass when the store writes a pass as one write and no pass is writing,
// in a store call of their own otherwise), publishes them and hands them
// to the core at its next pass. mu guards the rest: incoming holds jobs
// stored but not yet in the core; creates the new jobs waiting for the
// next pass to store them, while passCreates (the loop runs) says new jobs
// go through a pass and passWriting that a pass writes; passNewJobs that
// the store writes a pass as one write (store.PassWriter).
type intake struct {
	e           *Engine
	mu          mutex
	incoming    []*model.Job
	creates     []*createRequest
	passCreates bool
	passWriting bool
	passNewJobs bool
}

// createJob stores a validated job and returns it; its tasks are created by
// the loop afterwards.
func (s *intake) createJob(ctx context.Context, spec model.JobSpec) (*model.Job, error) {
	c := s.create(ctx, []NewJob{{Spec: spec}})[0]
	return c.Job, c.Err
}

// create stores validated jobs, each on its own, in one store call:
// every job is stored whole or not at all, and out[i] says what became of
// jobs[i]. The jobs join the loop's state at its next pass (or the next
// API call that takes the lock): accepting jobs never waits for a pass.
func (s *intake) create(ctx context.Context, jobs []NewJob) []Created {
	out := make([]Created, len(jobs))
	now := s.e.cfg.Clock.Now()
	s.e.recountIfIdle()
	batch := make([]*model.Job, 0, len(jobs))
	at := make([]int, 0, len(jobs))
	for i := range jobs {
		spec := &jobs[i].Spec
		if spec.Instances > s.e.cfg.Limits.InstancesPerJob {
			out[i].Err = fmt.Errorf("instances: %d is more than this region's limit of %d per job: %w", spec.Instances, s.e.cfg.Limits.InstancesPerJob, core.ErrInvalid)
			continue
		}
		if err := s.e.pending.reserve(spec.Pool, int64(spec.OwnTasks()), s.e.cfg.Limits.PendingTasksPerPool); err != nil {
			// A retried request finds its jobs stored even when their
			// pool filled up since.
			if s.stored(ctx, jobs[i].ID) {
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
				Region:     s.e.cfg.Region,
				RunOf:      jobs[i].RunOf,
			},
		})
		at = append(at, i)
	}
	if len(batch) > 0 {
		errs, copies := s.store(ctx, batch)
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
	s.takeInExisting(ctx, out)
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
func (s *intake) takeInExisting(ctx context.Context, out []Created) {
	for i := range out {
		if !out[i].Existing || s.e.view.get(out[i].ID) != nil {
			continue
		}
		id := out[i].ID
		j, err := s.e.cfg.Store.GetJob(ctx, id)
		if err != nil {
			out[i] = Created{Err: fmt.Errorf("job %s is stored but could not be read: %w", id, err)}
			continue
		}
		if !s.e.view.addIfAbsent(core.CopyJob(j)) {
			continue // another attempt took it in meanwhile
		}
		s.e.pending.reserve(j.Spec.Pool, int64(j.Spec.OwnTasks()), math.MaxInt64)
		s.mu.Lock()
		s.incoming = append(s.incoming, j)
		s.mu.Unlock()
		s.e.c.Log.Warn("job stored by an earlier attempt is taken in: it was written after this member loaded the region's jobs",
			"job", id, "name", j.Spec.Name, "instances", j.Spec.Instances)
		cp := core.CopyJob(j)
		s.e.emit([]core.Event{{Time: j.Status.CreateTime, Job: id, JobStatus: &cp.Status}})
		s.e.wake()
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

// store stores new jobs and settles them (settleNewJobs). While the
// loop runs and does not write, on a store that writes a pass as one
// write, they go into its next pass's write with the pass's own records,
// and whoever asked waits for it; otherwise (recovering, stopped, a pass
// writing, a store written kind by kind) they are a store call of their
// own.
// It returns each job's outcome and, for a stored job, a copy of it as
// created. A caller whose ctx ends first is answered ErrNotStored: the
// pass still settles its jobs, so a job it stores joins the state.
func (s *intake) store(ctx context.Context, jobs []*model.Job) ([]error, []*model.Job) {
	r := &createRequest{jobs: jobs, done: make(chan struct{})}
	s.mu.Lock()
	queued := s.passNewJobs && s.passCreates && !s.passWriting
	if queued {
		s.creates = append(s.creates, r)
	}
	s.mu.Unlock()
	if !queued {
		errs := s.e.cfg.Store.CreateJobs(ctx, jobs)
		return errs, s.settle(jobs, errs)
	}
	s.e.wake()
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
func (r *createRequest) settle(in *intake, errs []error) {
	r.errs = errs
	r.copies = in.settle(r.jobs, errs)
	close(r.done)
}

// settle takes the outcome of storing new jobs: a stored job joins
// the state (readers see it at once, the loop takes it in at its next
// pass) and its creation is published; one that was not gives its pool's
// room back. It returns copies of the stored jobs as created.
func (s *intake) settle(jobs []*model.Job, errs []error) []*model.Job {
	copies := make([]*model.Job, len(jobs))
	created := make([]*model.Job, 0, len(jobs))
	published := make([]*model.Job, 0, len(jobs))
	events := make([]core.Event, 0, len(jobs))
	for k, j := range jobs {
		if errs[k] != nil {
			s.e.pending.reserve(j.Spec.Pool, -int64(j.Spec.OwnTasks()), s.e.cfg.Limits.PendingTasksPerPool)
			continue
		}
		cp := core.CopyJob(j)
		copies[k] = cp
		created = append(created, j)
		published = append(published, core.CopyJob(j))
		events = append(events, core.Event{Time: j.Status.CreateTime, Job: j.ID, JobStatus: &cp.Status})
	}
	if len(created) == 0 {
		return copies
	}
	s.e.view.add(published...)
	s.mu.Lock()
	s.incoming = append(s.incoming, created...)
	s.mu.Unlock()
	if len(created) == 1 {
		j := created[0]
		s.e.c.Log.Info("job created", "job", j.ID, "name", j.Spec.Name, "instances", j.Spec.Instances)
	} else {
		s.e.c.Log.Info("jobs created", "jobs", len(created), "first", created[0].ID, "last", created[len(created)-1].ID)
	}
	s.e.emit(events)
	s.e.wake()
	return copies
}

// open has new jobs go through the loop's passes: the loop runs.
func (s *intake) open() {
	s.mu.Lock()
	s.passCreates = true
	s.mu.Unlock()
}

// takeIncoming takes the jobs stored but not yet in the core.
func (s *intake) takeIncoming() []*model.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.incoming
	s.incoming = nil
	return in
}

// take takes the create requests waiting for a pass, which then
// writes: new jobs accepted while it writes are stored on their own, in a
// store call that shares the pass's commit or the next one (group commit),
// rather than wait for the pass after it.
func (s *intake) take(writing bool) []*createRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.creates
	s.creates = nil
	s.passWriting = writing
	return rs
}

// setWriting records whether a pass writes.
func (s *intake) setWriting(writing bool) {
	s.mu.Lock()
	s.passWriting = writing
	s.mu.Unlock()
}

// refuse answers the create requests waiting for a pass with err;
// stop also makes later ones a store call of their own (the loop ended).
func (s *intake) refuse(err error, stop bool) {
	s.mu.Lock()
	rs := s.creates
	s.creates = nil
	if stop {
		s.passCreates = false
	}
	s.mu.Unlock()
	for _, r := range rs {
		errs := make([]error, len(r.jobs))
		for i := range errs {
			errs[i] = err
		}
		r.settle(s, errs)
	}
}

// stored reports whether a job of this id is in the store.
func (s *intake) stored(ctx context.Context, id model.JobID) bool {
	if id == "" {
		return false
	}
	_, err := s.e.cfg.Store.GetJob(ctx, id)
	return err == nil
}
