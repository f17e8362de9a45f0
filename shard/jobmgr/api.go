package jobmgr

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"slices"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// NewJobID returns a new, globally unique job id: a UUID of version 7
// (RFC 9562), 48 bits of Unix milliseconds then 74 random bits. Ids made
// later sort after earlier ones, so a store ordered by id writes the
// records of new jobs side by side rather than all over its tree.
func NewJobID() model.JobID {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return model.JobID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// GetJob returns a job with its task counts, as the store has them (see
// jobsView): it never waits for a pass.
func (r Reads) GetJob(id model.JobID) (*model.Job, error) {
	e := r.e
	j := e.view.get(id)
	if j == nil {
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	return core.CopyJob(j), nil
}

// JobFilter selects jobs in ListJobs.
type JobFilter struct {
	States []model.JobState
	Pool   string
	// Labels the job must have: a nil value matches any value.
	Labels map[string]*string
	// Name, when set, is the job's exact name.
	Name string
	// RunOf, when set, is the periodic job whose runs are listed.
	RunOf model.JobID
	// After, when set, leaves out the jobs up to and including it in
	// listing order (creation time, then id).
	After *JobKey
	// Limit, when > 0, is the most jobs returned.
	Limit int
	// Newest lists newest first; After then leaves out the jobs up to and
	// including it in that order (it and the newer ones).
	Newest bool
	// Match, when set, is one more test a job must pass (a search the
	// caller defines).
	Match func(*model.Job) bool
	// Total, when set, receives how many jobs match, After and Limit
	// aside: every page's total.
	Total *int
	// Tasks, when set, receives the tasks of every job that matches,
	// After and Limit aside, by state.
	Tasks map[model.TaskState]uint64
}

// JobKey is a job's place in listing order.
type JobKey struct {
	Created time.Time
	ID      model.JobID
}

// ListJobs returns jobs, oldest first (ties by id), as the store has them
// (see jobsView): it never waits for a pass.
func (r Reads) ListJobs(f JobFilter) []*model.Job {
	e := r.e
	if f.Total != nil && f.unfiltered() && f.Tasks == nil {
		*f.Total = e.view.size()
	} else if f.Total != nil || f.Tasks != nil {
		n := 0
		e.view.walk(nil, false, func(j *model.Job) bool {
			if f.matches(j) {
				n++
				if f.Tasks != nil {
					for st, c := range j.Status.TaskStates {
						f.Tasks[st] += uint64(c)
					}
				}
			}
			return true
		})
		if f.Total != nil {
			*f.Total = n
		}
	}
	var out []*model.Job
	e.view.walk(f.After, f.Newest, func(j *model.Job) bool {
		if f.Limit > 0 && len(out) == f.Limit {
			return false
		}
		if f.matches(j) {
			out = append(out, core.CopyJob(j))
		}
		return true
	})
	return out
}

// unfiltered reports whether every job matches f (After and Limit aside).
func (f *JobFilter) unfiltered() bool {
	return f.Pool == "" && len(f.States) == 0 && f.Name == "" && len(f.Labels) == 0 && f.Match == nil && f.RunOf == ""
}

// matches tests a job against f's filters (After is the walk's).
func (f *JobFilter) matches(j *model.Job) bool {
	if f.Match != nil && !f.Match(j) {
		return false
	}
	if f.Pool != "" && j.Spec.Pool != f.Pool {
		return false
	}
	if len(f.States) > 0 && !slices.Contains(f.States, j.Status.State) {
		return false
	}
	if f.Name != "" && j.Spec.Name != f.Name {
		return false
	}
	if f.RunOf != "" && (j.Status.RunOf == nil || j.Status.RunOf.Parent != f.RunOf) {
		return false
	}
	for k, want := range f.Labels {
		got, ok := j.Spec.Labels[k]
		if !ok || (want != nil && got != *want) {
			return false
		}
	}
	return true
}

// jobShell carries out the commands on a job's instances: stop the job,
// stop or restart some of its instances (asking its SLA), and delete a
// finished job with its volumes.
type jobShell struct{ e *Engine }

// stop asks for every task of a job to be killed. Stopping a finished
// job changes nothing.
func (s *jobShell) stop(ctx context.Context, id model.JobID) (*model.Job, error) {
	s.e.lock()
	je := s.e.c.Jobs[id]
	if je == nil {
		s.e.mu.Unlock()
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	if s.e.c.Stop(je) {
		if err := s.e.storeJobLocked(ctx, je); err != nil {
			return nil, fmt.Errorf("store job: %w", err)
		}
		s.e.lock()
	}
	defer s.e.mu.Unlock()
	return s.e.c.SnapshotJob(je), nil
}

// delete removes a finished job and its tasks.
func (s *jobShell) delete(ctx context.Context, id model.JobID) error {
	s.e.lock()
	je := s.e.c.Jobs[id]
	if je == nil {
		s.e.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	if st := je.Job.Status.State; !st.IsTerminal() {
		s.e.mu.Unlock()
		return fmt.Errorf("job %s is %s: stop it first: %w", id, st, core.ErrNotTerminal)
	}
	cfg := je.Current()
	s.e.mu.Unlock()
	// A finished job does not change again: it is removed with no lock
	// held, and a second delete of it meanwhile finds it gone or removes
	// nothing more.
	if err := s.removeVolumes(ctx, je.Job.ID, cfg); err != nil {
		return err
	}
	if err := s.e.cfg.Store.DeleteJob(ctx, id); err != nil {
		return fmt.Errorf("delete job: %w", err)
	}
	s.e.lock()
	defer s.e.mu.Unlock()
	if s.e.c.Jobs[id] != je {
		return nil
	}
	s.e.view.remove(id)
	s.e.c.RemoveJob(id)
	delete(s.e.c.Work, id)
	je.InWork = false
	s.e.c.Log.Info("job deleted", "job", id)
	return nil
}

// ListTasks returns a job's tasks by instance, optionally only in states.
func (r Reads) ListTasks(id model.JobID, states []model.TaskState) ([]*model.TaskRuntime, error) {
	e := r.e
	e.lock()
	je := e.c.Jobs[id]
	if je == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	tasks := je.Tasks
	if je.Evicted {
		e.mu.Unlock()
		stored, err := e.cfg.Store.ListTasks(context.Background(), id)
		if err != nil {
			return nil, fmt.Errorf("read tasks of finished job %s: %w", id, err)
		}
		return filterTasks(stored, states, false), nil
	}
	out := filterTasks(tasks, states, true)
	cache := core.ReasonCache{}
	for _, t := range out {
		e.c.ExplainWaiting(je, t, false, cache)
	}
	var cold []int
	for i, t := range tasks {
		if core.IsCold(t) && (len(states) == 0 || slices.Contains(states, t.State)) {
			cold = append(cold, i)
		}
	}
	e.mu.Unlock()
	if len(cold) == 0 {
		return out, nil
	}
	// Tasks that ended for good are read from the store; they no longer
	// change, so reading them after the lock is let go is safe.
	if err := e.jobs.warmUp(out, id, cold); err != nil {
		return nil, err
	}
	return out, nil
}

// warmUp fills the cold tasks among out (instances cold, in order) from
// the store: one by one when they are few, in one read otherwise.
func (s *jobShell) warmUp(out []*model.TaskRuntime, id model.JobID, cold []int) error {
	ctx := context.Background()
	byInstance := map[uint32]*model.TaskRuntime{}
	if len(cold) <= 64 {
		for _, i := range cold {
			t, err := s.e.cfg.Store.GetTask(ctx, model.TaskID{Job: id, Instance: uint32(i)})
			if err != nil {
				return fmt.Errorf("read ended task %s/%d: %w", id, i, err)
			}
			byInstance[uint32(i)] = t
		}
	} else {
		stored, err := s.e.cfg.Store.ListTasks(ctx, id)
		if err != nil {
			return fmt.Errorf("read ended tasks of job %s: %w", id, err)
		}
		for _, t := range stored {
			byInstance[t.ID.Instance] = t
		}
	}
	for k, t := range out {
		// Copies of cold marks carry no id: take the stored task.
		if t.ID.Job == "" {
			st := byInstance[uint32(cold[0])]
			if st == nil {
				return fmt.Errorf("ended task %s/%d is missing from the store: %w", id, cold[0], core.ErrNotFound)
			}
			out[k] = st
			cold = cold[1:]
		}
	}
	return nil
}

// filterTasks keeps the tasks in states (all when none), copied if asked.
func filterTasks(tasks []*model.TaskRuntime, states []model.TaskState, copyThem bool) []*model.TaskRuntime {
	out := make([]*model.TaskRuntime, 0, len(tasks))
	for _, t := range tasks {
		if len(states) > 0 && !slices.Contains(states, t.State) {
			continue
		}
		if copyThem {
			cp := *t
			t = &cp
		}
		out = append(out, t)
	}
	return out
}

// GetTask returns one task.
func (r Reads) GetTask(id model.TaskID) (*model.TaskRuntime, error) {
	e := r.e
	e.lock()
	je := e.c.Jobs[id.Job]
	if je == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("job %s: %w", id.Job, core.ErrNotFound)
	}
	if je.Evicted {
		e.mu.Unlock()
		t, err := e.cfg.Store.GetTask(context.Background(), id)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", id, err)
		}
		return t, nil
	}
	_, t := e.c.Task(id)
	if t == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("task %s: %w", id, core.ErrNotFound)
	}
	cp := *t
	e.c.ExplainWaiting(e.c.Jobs[id.Job], &cp, true, nil)
	e.mu.Unlock()
	if core.IsCold(t) {
		return e.cfg.Store.GetTask(context.Background(), id)
	}
	return &cp, nil
}

// stopTasks kills some (or all, when instances is empty) tasks of a job.
// Stopping running instances of a long-running job asks its SLA first and
// is refused with ErrSLA when it says no, unless force.
func (s *jobShell) stopTasks(ctx context.Context, id model.JobID, instances []uint32, force bool) ([]*model.TaskRuntime, error) {
	s.e.lock()
	je := s.e.c.Jobs[id]
	if je == nil {
		s.e.mu.Unlock()
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	if je.Evicted {
		// A finished job has nothing left to stop.
		s.e.mu.Unlock()
		return s.e.Reads().ListTasks(id, nil)
	}
	if len(instances) == 0 {
		s.e.mu.Unlock()
		if _, err := Do(ctx, s.e, StopJob{ID: id}); err != nil {
			return nil, err
		}
		return s.e.Reads().ListTasks(id, nil)
	}
	out, cold, err := s.e.c.StopInstances(je, instances, force)
	s.e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	s.e.wake()
	if err := s.warmUp(out, id, cold); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadLog reads a run's output from the host manager that ran it.
func (r Reads) ReadLog(ctx context.Context, id model.TaskID, run uint32, stream string, offset, limit int64) ([]byte, int64, int64, error) {
	e := r.e
	t, err := e.Reads().GetTask(id)
	if err != nil {
		return nil, 0, 0, err
	}
	if run == 0 {
		run = t.Run
	}
	// Earlier runs are found by run id on the plugin of the current host.
	host, cluster := t.Host, t.Cluster
	if host == "" {
		return nil, 0, 0, fmt.Errorf("task %s run %d has not been placed: %w", id, run, core.ErrNoLogs)
	}
	p, ok := e.c.Plugins[cluster].(hostmgr.LogReader)
	if !ok {
		return nil, 0, 0, fmt.Errorf("cluster %q keeps no task logs: %w", cluster, core.ErrNoLogs)
	}
	return p.ReadLog(ctx, model.MakeRunID(id, run), host, stream, offset, limit)
}

// Watch subscribes to events of one job ("" for all) after sequence after,
// returning those it missed. The in-memory backlog holds only the latest
// events of the region; a watcher of one job that resumes from further
// back gets the job's stored history too, and a watcher of all jobs gets
// ErrEventsGone rather than a stream with a hole in it.
func (r Reads) Watch(job model.JobID, after uint64) (*Subscription, []core.Event, error) {
	e := r.e
	sub, missed, gap := e.events.subscribe(job, after)
	if job == "" || after == 0 {
		if gap {
			sub.Cancel()
			return nil, nil, fmt.Errorf("%w: events of all jobs after seq %d are no longer held in memory; list the current state, then watch from now (after_seq 0), or watch one job", ErrEventsGone, after)
		}
		return sub, missed, nil
	}
	stored, err := e.cfg.Store.ListEvents(context.Background(), store.EventQuery{Job: job, After: after, Limit: maxResumeEvents})
	if err != nil || len(stored) == 0 {
		return sub, missed, nil
	}
	last := stored[len(stored)-1].Seq
	for _, ev := range missed {
		if ev.Seq > last {
			stored = append(stored, ev)
		}
	}
	return sub, stored, nil
}

// ErrEventsGone is the error of a watch of all jobs that asks to resume
// from events no longer held: the watcher would miss some.
var ErrEventsGone = errors.New("events are gone")

// maxResumeEvents bounds the stored events one resumed watch replays.
const maxResumeEvents = 200_000

// Clusters lists the configured plugin cluster names, sorted.
func (r Reads) Clusters() []string {
	e := r.e
	var out []string
	for n := range e.c.Plugins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
