package federation

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Replicas follow their jobs' progress: the succeeded instances and the
// config version, so that a relocation reruns only what had not
// succeeded. The work is proportional to what changed: the failover shell
// follows the local shard's event stream and pushes only the jobs that
// had events since their last push. The whole list of jobs is read only
// when the stream was interrupted (events may have been missed) or the
// replica region changed; with no region to push to, nothing is read.

// progress is what the replicas were last sent, and which jobs changed
// since.
type progress struct {
	mu     sync.Mutex
	dirty  map[string]bool // job ids with events not yet pushed
	resync bool            // every job must be looked at again
	pushed map[string]pushMark
	to     string // the replica region the marks were pushed to
}

// pushMark is what a replica was last sent: the job's succeeded count and
// config version.
type pushMark struct {
	done   int
	config uint64
}

func newProgress() progress {
	return progress{dirty: map[string]bool{}, resync: true, pushed: map[string]pushMark{}}
}

func (p *progress) changed(job string) {
	p.mu.Lock()
	p.dirty[job] = true
	p.mu.Unlock()
}

func (p *progress) lost() {
	p.mu.Lock()
	p.resync = true
	p.mu.Unlock()
}

// take returns the jobs to look at, and whether that is all of them.
func (p *progress) take() (jobs []string, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	all, p.resync = p.resync, false
	for id := range p.dirty {
		jobs = append(jobs, id)
	}
	clear(p.dirty)
	sort.Strings(jobs)
	return jobs, all
}

// retry puts jobs whose push failed back.
func (p *progress) retry(jobs []string) {
	p.mu.Lock()
	for _, id := range jobs {
		p.dirty[id] = true
	}
	p.mu.Unlock()
}

// followChanges marks the jobs the local shard reports events of, until
// ctx ends. A broken stream may have lost events: the next sync then
// looks at every job.
func (f *Failover) followChanges(ctx context.Context) {
	for ctx.Err() == nil {
		err := f.watch(ctx)
		f.progress.lost()
		if ctx.Err() != nil {
			return
		}
		f.log.Debug("event stream of the local shard ended; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(f.interval):
		}
	}
}

func (f *Failover) watch(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := pb.NewEventServiceClient(f.router.local()).Watch(ctx, &pb.WatchRequest{})
	if err != nil {
		return err
	}
	for {
		ev, err := events.Recv()
		if err != nil {
			return err
		}
		if id := ev.GetJobId(); id != "" {
			f.progress.changed(id)
		}
	}
}

// syncProgress sends the progress of the jobs that changed to their
// replicas.
func (f *Failover) syncProgress(ctx context.Context) {
	r := f.router
	if r.replicas == nil {
		return
	}
	reg, ok := r.replicaRegion(r.dir.Local())
	if !ok {
		return // no region to push to: the changes wait for one
	}
	p := &f.progress
	if reg.Name != p.to {
		if p.to != "" {
			r.log("replica region changed: every job's replica is pushed to the new one", "from", p.to, "to", reg.Name)
		}
		p.to = reg.Name
		clear(p.pushed)
		p.lost()
	}
	ids, all := p.take()
	if all {
		jobs, err := pb.ListAllJobs(ctx, func(ctx context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
			return pb.NewJobServiceClient(r.local()).ListJobs(ctx, req)
		}, &pb.ListJobsRequest{})
		if err != nil {
			r.reportError("progress", "listing jobs to push their progress failed; retrying", err)
			p.lost()
			p.retry(ids)
			return
		}
		ids = ids[:0]
		for _, j := range jobs {
			ids = append(ids, j.GetId())
		}
	}
	var failed []string
	var firstErr error
	for _, id := range ids {
		if err := f.pushProgress(ctx, id); err != nil {
			failed = append(failed, id)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(failed) > 0 && ctx.Err() == nil {
		r.reportError("progress", "progress not pushed to the replica region; retrying", firstErr, "jobs", len(failed), "replica_region", reg.Name)
	}
	p.retry(failed)
}

// pushProgress sends one job's progress to its replica if it changed
// since the last push. An error means the push should be retried.
func (f *Failover) pushProgress(ctx context.Context, id string) error {
	r := f.router
	got, err := pb.NewJobServiceClient(r.local()).GetJob(ctx, &pb.GetJobRequest{Id: id})
	if err != nil {
		// A deleted job has nothing to push; anything else is retried.
		if status.Code(err) == codes.NotFound {
			return nil
		}
		return fmt.Errorf("job %s: %w", id, err)
	}
	j := got.GetJob()
	mark := pushMark{done: int(j.GetStatus().GetTaskStates()["SUCCEEDED"]), config: j.GetConfigVersion()}
	if last, ok := f.progress.pushed[id]; ok && last == mark {
		return nil
	}
	tasks, err := pb.NewTaskServiceClient(r.local()).ListTasks(ctx, &pb.ListTasksRequest{JobId: id, States: []pb.TaskState{pb.TaskState_TASK_STATE_SUCCEEDED}})
	if err != nil {
		return fmt.Errorf("tasks of job %s: %w", id, err)
	}
	succeeded := make([]uint32, 0, len(tasks.GetTasks()))
	for _, t := range tasks.GetTasks() {
		succeeded = append(succeeded, t.GetInstance())
	}
	job := proto.Clone(j).(*pb.Job)
	if job.Spec != nil {
		job.Spec.Failover = nil // keep the policy the replica has
	}
	if _, err := r.replicate(ctx, r.dir.Local(), job, succeeded); err != nil {
		return fmt.Errorf("replica of job %s: %w", id, err)
	}
	f.progress.pushed[id] = mark
	return nil
}
