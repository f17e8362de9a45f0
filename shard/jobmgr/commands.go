package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// A Command is a change asked of the engine, as a value: the API, the
// federation and the tests build one and hand it to Do, the one way in for
// a change. R is what the command answers. Reads do not go through Do: see
// Reads.
//
// Each command is carried out on the caller's goroutine: it takes the
// engine's lock to change the state, and a change the store must hold
// waits for the write of the loop's next pass (awaitWrite), so that it is
// answered only once it is stored.
type Command[R any] interface {
	run(ctx context.Context, e *Engine) (R, error)
}

// Do carries out a command and returns its answer.
func Do[R any](ctx context.Context, e *Engine, c Command[R]) (R, error) {
	return c.run(ctx, e)
}

// CreateJob stores a validated job and answers it; its tasks are created
// by the loop afterwards.
type CreateJob struct{ Spec model.JobSpec }

// CreateJobs stores validated jobs, each whole or not at all, in one store
// call; answer i says what became of Jobs[i]. It answers no error of its
// own: each job's is in its Created.
type CreateJobs struct{ Jobs []NewJob }

// StopJob asks for every task of a job to be killed; stopping a finished
// job changes nothing. It answers the job.
type StopJob struct{ ID model.JobID }

// DeleteJob removes a finished job and its tasks.
type DeleteJob struct{ ID model.JobID }

// SuspendJob stops a periodic job's ticks from launching runs; ResumeJob
// lets them launch again from the next tick. Each answers the job.
type SuspendJob struct{ ID model.JobID }

type ResumeJob struct{ ID model.JobID }

// RunJob launches a run of a periodic job now and answers the run.
type RunJob struct{ ID model.JobID }

// StopTasks kills some (every one, when Instances is empty) tasks of a
// job. Stopping running instances of a long-running job asks its SLA
// first and is refused with ErrSLA when it says no, unless Force.
type StopTasks struct {
	Job       model.JobID
	Instances []uint32
	Force     bool
}

// UpdateJob stores Spec as the job's next config version and rolls its
// instances onto it (see UpdateOptions). A running update of the job is
// aborted; instances it moved keep their config.
type UpdateJob struct {
	Job     model.JobID
	Spec    model.JobSpec
	Options UpdateOptions
}

// PauseUpdate stops a running update from starting new batches; batches
// in flight finish.
type PauseUpdate struct{ ID model.UpdateID }

// ResumeUpdate lets a paused update go on.
type ResumeUpdate struct{ ID model.UpdateID }

// RollbackUpdate moves the instances of a running update back to its
// FromVersion, with the same batch size and SLA.
type RollbackUpdate struct{ ID model.UpdateID }

// AbortUpdate stops a rolling update: instances moved keep the new config,
// the others theirs until they next restart.
type AbortUpdate struct{ ID model.UpdateID }

// RestartTasks kills the current runs of running instances of a job and
// starts new ones, a gang whole, under the job's SLA unless Force.
type RestartTasks struct {
	Job       model.JobID
	Instances []uint32
	Force     bool
}

// PromoteUpdate ends the canary phase of a running update: the rest of
// the instances move, with the batch size and the SLA. By names who
// promoted it (kept on the update and in its message).
type PromoteUpdate struct {
	ID model.UpdateID
	By string
}

// CreatePool adds a pool under an existing parent that has no unfinished
// jobs of its own; every violation of the tree's rules is reported.
type CreatePool struct{ Pool model.Pool }

// UpdatePool replaces a pool's reservation, limit, share and host pools.
type UpdatePool struct{ Pool model.Pool }

// DeletePool removes a pool with no children and no unfinished jobs.
type DeletePool struct{ Path string }

// SetClusterDrained stops (Drained) or resumes new placements on every
// host of a cluster; what runs there goes on until moved. It is stored.
type SetClusterDrained struct {
	Cluster string
	Drained bool
}

// DrainHost takes a host out of service: it takes no new work and its
// capacity no longer counts; what runs there goes on. It is stored.
type DrainHost struct {
	Host     model.HostID
	Reason   string
	Deadline time.Duration
}

// UndrainHost puts a draining, drained or down host back into service.
type UndrainHost struct{ Host model.HostID }

// MarkHostDown takes a drained host down for maintenance. A host that
// still runs something of the shard is refused, unless Force, which kills
// what runs there.
type MarkHostDown struct {
	Host  model.HostID
	Force bool
}

// SetHostPool puts a host in a host pool at once; a move of the host pool
// policy under way for the host is called off.
type SetHostPool struct {
	Host model.HostID
	Pool string
}

// StartMigration checks the request, stores the migration, points the
// cluster policies of its jobs at the target and lets the loop move their
// instances. Nothing changes when it is refused.
type StartMigration struct{ core.MigrationRequest }

// PauseMigration stops a migration from moving more instances; those in
// flight finish.
type PauseMigration struct{ ID model.MigrationID }

// ResumeMigration lets a paused migration go on (also one that stopped
// because it could not progress).
type ResumeMigration struct{ ID model.MigrationID }

// AbortMigration stops a migration where it is: moved instances stay on
// the target, the others where they run, and the cluster policies become
// what they were.
type AbortMigration struct{ ID model.MigrationID }

// RollbackMigration moves the instances a migration moved back to the
// clusters they came from, the same way (batch, surge, SLA).
type RollbackMigration struct{ ID model.MigrationID }

func (c CreateJob) run(ctx context.Context, e *Engine) (*model.Job, error) {
	return e.intake.createJob(ctx, c.Spec)
}

func (c CreateJobs) run(ctx context.Context, e *Engine) ([]Created, error) {
	return e.intake.create(ctx, c.Jobs), nil
}

func (c StopJob) run(ctx context.Context, e *Engine) (*model.Job, error) {
	return e.jobs.stop(ctx, c.ID)
}

func (c DeleteJob) run(ctx context.Context, e *Engine) (struct{}, error) {
	return struct{}{}, e.jobs.delete(ctx, c.ID)
}

func (c SuspendJob) run(ctx context.Context, e *Engine) (*model.Job, error) {
	return e.periodics.setSuspended(ctx, c.ID, true)
}

func (c ResumeJob) run(ctx context.Context, e *Engine) (*model.Job, error) {
	return e.periodics.setSuspended(ctx, c.ID, false)
}

func (c RunJob) run(ctx context.Context, e *Engine) (*model.Job, error) {
	return e.periodics.runNow(ctx, c.ID)
}

func (c StopTasks) run(ctx context.Context, e *Engine) ([]*model.TaskRuntime, error) {
	return e.jobs.stopTasks(ctx, c.Job, c.Instances, c.Force)
}

func (c UpdateJob) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.update(ctx, c.Job, c.Spec, c.Options)
}

func (c PauseUpdate) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.pause(ctx, c.ID)
}

func (c ResumeUpdate) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.resume(ctx, c.ID)
}

func (c RollbackUpdate) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.rollback(ctx, c.ID)
}

func (c AbortUpdate) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.abort(ctx, c.ID)
}

func (c RestartTasks) run(ctx context.Context, e *Engine) ([]*model.TaskRuntime, error) {
	return e.jobs.restartTasks(ctx, c.Job, c.Instances, c.Force)
}

func (c PromoteUpdate) run(ctx context.Context, e *Engine) (*model.Update, error) {
	return e.updates.promote(ctx, c.ID, c.By)
}

func (c CreatePool) run(ctx context.Context, e *Engine) (*model.Pool, error) {
	return e.pools.create(ctx, c.Pool)
}

func (c UpdatePool) run(ctx context.Context, e *Engine) (*model.Pool, error) {
	return e.pools.update(ctx, c.Pool)
}

func (c DeletePool) run(ctx context.Context, e *Engine) (struct{}, error) {
	return struct{}{}, e.pools.delete(ctx, c.Path)
}

func (c SetClusterDrained) run(ctx context.Context, e *Engine) (*core.ClusterView, error) {
	return e.clusters.setDrained(ctx, c.Cluster, c.Drained)
}

func (c DrainHost) run(ctx context.Context, e *Engine) (*model.HostRecord, error) {
	return e.hostRun.drain(ctx, c.Host, c.Reason, c.Deadline)
}

func (c UndrainHost) run(ctx context.Context, e *Engine) (*model.HostRecord, error) {
	return e.hostRun.undrain(ctx, c.Host)
}

func (c MarkHostDown) run(ctx context.Context, e *Engine) (*model.HostRecord, error) {
	return e.hostRun.markDown(ctx, c.Host, c.Force)
}

func (c SetHostPool) run(ctx context.Context, e *Engine) (*model.HostRecord, error) {
	return e.hostPoolRun.setHostPool(ctx, c.Host, c.Pool)
}

func (c StartMigration) run(ctx context.Context, e *Engine) (*model.Migration, error) {
	return e.migrations.start(ctx, c.MigrationRequest)
}

func (c PauseMigration) run(ctx context.Context, e *Engine) (*model.Migration, error) {
	return e.migrations.pause(ctx, c.ID)
}

func (c ResumeMigration) run(ctx context.Context, e *Engine) (*model.Migration, error) {
	return e.migrations.resume(ctx, c.ID)
}

func (c AbortMigration) run(ctx context.Context, e *Engine) (*model.Migration, error) {
	return e.migrations.abort(ctx, c.ID)
}

func (c RollbackMigration) run(ctx context.Context, e *Engine) (*model.Migration, error) {
	return e.migrations.rollback(ctx, c.ID)
}
