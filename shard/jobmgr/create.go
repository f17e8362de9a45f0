package jobmgr

import (
	"context"
	"errors"
	"fmt"

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
		if err := e.pending.reserve(spec.Pool, int64(spec.Instances), e.cfg.Limits.PendingTasksPerPool); err != nil {
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
			},
		})
		at = append(at, i)
	}
	if len(batch) == 0 {
		return out
	}
	errs := e.cfg.Store.CreateJobs(ctx, batch)
	created := make([]*model.Job, 0, len(batch))
	published := make([]*model.Job, 0, len(batch))
	events := make([]Event, 0, len(batch))
	for k, j := range batch {
		i := at[k]
		if err := errs[k]; err != nil {
			e.pending.reserve(j.Spec.Pool, -int64(j.Spec.Instances), e.cfg.Limits.PendingTasksPerPool)
			if errors.Is(err, store.ErrExists) && jobs[i].ID != "" {
				out[i] = Created{ID: j.ID, Existing: true}
				continue
			}
			out[i].Err = fmt.Errorf("store job: %w", err)
			continue
		}
		cp := copyJob(j)
		out[i] = Created{Job: cp, ID: j.ID}
		created = append(created, j)
		published = append(published, copyJob(j))
		events = append(events, Event{Time: j.Status.CreateTime, Job: j.ID, JobStatus: &cp.Status})
	}
	if len(created) == 0 {
		return out
	}
	// Stored: readers see them from now on, and the loop takes them in.
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
	return out
}

// stored reports whether a job of this id is in the store.
func (e *Engine) stored(ctx context.Context, id model.JobID) bool {
	if id == "" {
		return false
	}
	_, err := e.cfg.Store.GetJob(ctx, id)
	return err == nil
}
