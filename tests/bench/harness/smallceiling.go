package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// The small-jobs ceiling: the store's own rate for the records a
// single-task job's life makes the server write, written from this
// process through the store package with no server in between, by as many
// writers as the run has clients. Each writer takes the next job and
// writes, in order, what the server writes for it when the job is alone
// in its passes (recorded from a jobmgr.Engine on the sim host manager):
//
//	CreateJobs([job])                  the create (the job INITIALIZED)
//	AppendAudit([record])              the gateway's audit record of the call
//	WritePass{task LAUNCHING, job PENDING}
//	WritePass{task RUNNING, job RUNNING}
//	WritePass{task SUCCEEDED, job SUCCEEDED}
//
// and hands the job's 7 events (the job's 4 states, the task's 3) to one
// event writer that appends what is queued in calls of up to 5,000, as the
// engine's event writer does. store.WritePass is the call the engine
// makes: one transaction on the embedded store, kind by kind (WriteTasks,
// then UpdateJob) on Cassandra. The ceiling ends when every job's last
// pass and every event is stored.
//
// The server may write less than this: a pass under load carries many
// jobs (one bbolt transaction for all of them) and may place and launch a
// task in the pass that created it. It never writes records this leaves
// out, so the ceiling is the rate of the same records, one job's writes
// in a row per writer.

// ceilingEventBatch is how many events one AppendEvents call carries at
// most, as jobmgr's event writer.
const ceilingEventBatch = 5000

// ceilingRetention is the ttl the records are written with (the server's
// defaults: events 7 days, audit 30 days).
const (
	ceilingEventRetention = jobmgr.DefaultEventRetention
	ceilingAuditRetention = 30 * 24 * time.Hour
)

// ceilingStore is what the ceiling writes through.
type ceilingStore interface {
	store.Store
	store.AuditStore
}

// smallJobsCeiling writes the lives of jobs single-task jobs from clients
// writers through st and returns how long that took.
func smallJobsCeiling(ctx context.Context, st ceilingStore, jobs, clients int) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		seq      atomic.Uint64
		errOnce  sync.Once
		firstErr error
		workers  sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	seq.Store(uint64(time.Now().UnixMicro()))
	events := make(chan model.Event, ceilingEventBatch)
	writerDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(writerDone)
		if err := writeCeilingEvents(ctx, st, events); err != nil {
			fail(fmt.Errorf("append events: %w", err))
		}
	}()
	for range clients {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= jobs || ctx.Err() != nil {
					return
				}
				if err := writeJobLife(ctx, st, j, &seq, events); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	workers.Wait()
	close(events)
	<-writerDone
	d := time.Since(start)
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return d, firstErr
}

// writeJobLife writes job j's records in the order the server does and
// queues its events.
func writeJobLife(ctx context.Context, st ceilingStore, j int, seq *atomic.Uint64, events chan<- model.Event) error {
	now := time.Now()
	job := &model.Job{
		ID:            jobmgr.NewJobID(),
		Spec:          smallJobSpec(j),
		ConfigVersion: 1,
		Status:        model.JobStatus{State: model.JobInitialized, CreateTime: now, Region: "bench"},
	}
	if err := st.CreateJobs(ctx, []*model.Job{job})[0]; err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	rec := model.AuditRecord{
		Time: time.Now(), Name: "-", Method: "unauthenticated", RPC: "POST /v1/jobs",
		Resource: "-", Code: "OK", Region: "bench",
	}
	if err := st.AppendAudit(ctx, []model.AuditRecord{rec}, ceilingAuditRetention); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	emit := func(ev model.Event) error {
		ev.Seq, ev.Time, ev.Job = seq.Add(1), time.Now(), job.ID
		select {
		case events <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	js := job.Status
	if err := emit(model.Event{JobStatus: &js}); err != nil {
		return err
	}
	task := &model.TaskRuntime{
		ID: model.TaskID{Job: job.ID}, Run: 1, Goal: model.TaskSucceeded,
		Host: model.HostID(Cluster + "/host-" + fmt.Sprint(j%500)), Cluster: Cluster, ConfigVersion: 1,
	}
	job.Status.TasksCreated = 1
	steps := []struct {
		task model.TaskState
		job  model.JobState
	}{
		{model.TaskLaunching, model.JobPending},
		{model.TaskRunning, model.JobRunning},
		{model.TaskSucceeded, model.JobSucceeded},
	}
	for _, s := range steps {
		at := time.Now()
		task.State, task.UpdateTime = s.task, at
		switch s.task {
		case model.TaskRunning:
			task.StartTime = at
			job.Status.StartTime = at
		case model.TaskSucceeded:
			task.CompletionTime, task.Reason, task.Message = at, model.ReasonExitZero, "exit code 0"
			job.Status.CompletionTime = at
		}
		job.Status.State = s.job
		job.Status.TaskStates = map[model.TaskState]uint32{s.task: 1}
		if err := store.WritePass(ctx, st, store.Pass{Tasks: []*model.TaskRuntime{task}, Jobs: []*model.Job{job}}); err != nil {
			return fmt.Errorf("write pass (task %s, job %s): %w", s.task, s.job, err)
		}
		t, js := *task, job.Status
		if err := emit(model.Event{Task: &t}); err != nil {
			return err
		}
		if err := emit(model.Event{JobStatus: &js}); err != nil {
			return err
		}
	}
	return nil
}

// writeCeilingEvents appends the events it is sent, each call what is
// queued up to ceilingEventBatch, until events is closed.
func writeCeilingEvents(ctx context.Context, st store.EventStore, events <-chan model.Event) error {
	batch := make([]model.Event, 0, ceilingEventBatch)
	for ev := range events {
		batch = append(batch[:0], ev)
	more:
		for len(batch) < ceilingEventBatch {
			select {
			case ev, ok := <-events:
				if !ok {
					break more
				}
				batch = append(batch, ev)
			default:
				break more
			}
		}
		if err := st.AppendEvents(ctx, batch, ceilingEventRetention); err != nil {
			return err
		}
	}
	return nil
}

// smallJobSpec is the spec the small-jobs runs create over HTTP, as the
// server holds it.
func smallJobSpec(j int) model.JobSpec {
	return model.JobSpec{
		Name: fmt.Sprintf("small-%d", j), Type: model.JobBatch, Pool: "/", Instances: 1,
		Task: model.TaskSpec{Command: "true", Resources: model.Resources{MilliCPU: 10, MemMB: 8, DiskMB: 1}},
	}
}
