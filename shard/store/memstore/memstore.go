package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

var errClosed = fmt.Errorf("memstore closed: %w", store.ErrUnavailable)

// Store is an in-memory store.Store. The zero value is not usable; call New.
type Store struct {
	mu     sync.RWMutex
	closed bool
	jobs   map[model.JobID]*model.Job
	tasks  map[model.JobID]map[uint32]*model.TaskRuntime
	pools  map[string]*model.Pool
	values map[string][]byte
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		jobs:   make(map[model.JobID]*model.Job),
		tasks:  make(map[model.JobID]map[uint32]*model.TaskRuntime),
		pools:  make(map[string]*model.Pool),
		values: make(map[string][]byte),
	}
}

func checkJob(job *model.Job) error {
	if job == nil {
		return fmt.Errorf("%w: nil job", store.ErrInvalid)
	}
	if job.ID == "" {
		return fmt.Errorf("%w: job id is empty", store.ErrInvalid)
	}
	return nil
}

// CreateJob stores a new job with Revision 1 and sets job.Revision to 1.
func (s *Store) CreateJob(ctx context.Context, job *model.Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkJob(job); err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	stored, err := cloneJob(job)
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	stored.Revision = 1
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, ok := s.jobs[job.ID]; ok {
		return fmt.Errorf("create job %s: %w", job.ID, store.ErrExists)
	}
	s.jobs[job.ID] = stored
	s.tasks[job.ID] = make(map[uint32]*model.TaskRuntime)
	job.Revision = 1
	return nil
}

// UpdateJob replaces a job whose stored revision equals job.Revision and
// increments job.Revision.
func (s *Store) UpdateJob(ctx context.Context, job *model.Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkJob(job); err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	stored, err := cloneJob(job)
	if err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	stored.Revision = job.Revision + 1
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	old, ok := s.jobs[job.ID]
	if !ok {
		return fmt.Errorf("update job %s: %w", job.ID, store.ErrNotFound)
	}
	if old.Revision != job.Revision {
		return fmt.Errorf("update job %s: stored revision %d, given %d: %w",
			job.ID, old.Revision, job.Revision, store.ErrConflict)
	}
	s.jobs[job.ID] = stored
	job.Revision = stored.Revision
	return nil
}

// GetJob returns a copy of a stored job.
func (s *Store) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return cloneJob(j)
}

// ListJobs returns copies of all jobs ordered by id.
func (s *Store) ListJobs(ctx context.Context) ([]*model.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	out := make([]*model.Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		c, err := cloneJob(j)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *model.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteJob removes a job and all its tasks.
func (s *Store) DeleteJob(ctx context.Context, id model.JobID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, ok := s.jobs[id]; !ok {
		return fmt.Errorf("delete job %s: %w", id, store.ErrNotFound)
	}
	delete(s.jobs, id)
	delete(s.tasks, id)
	return nil
}

// WriteTasks stores a batch of runtimes atomically. Every task's job must
// exist; each task's stored revision must equal its Revision (0: must not
// exist). Tasks are checked in order, so a task listed twice must carry the
// revision its first write produces. On any error nothing is written and no
// Revision changes; on success each Revision is incremented.
func (s *Store) WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(tasks) == 0 {
		return nil
	}
	staged := make([]*model.TaskRuntime, len(tasks))
	for i, t := range tasks {
		if t == nil {
			return fmt.Errorf("write tasks: %w: task %d of batch is nil", store.ErrInvalid, i)
		}
		staged[i] = cloneTask(t)
		staged[i].Revision = t.Revision + 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	// Revisions as they will be once the earlier tasks of the batch apply.
	pending := make(map[model.TaskID]uint64, len(tasks))
	for _, t := range tasks {
		byInstance, ok := s.tasks[t.ID.Job]
		if !ok {
			return fmt.Errorf("write task %s: job: %w", t.ID, store.ErrNotFound)
		}
		current, ok := pending[t.ID]
		if !ok {
			if old, exists := byInstance[t.ID.Instance]; exists {
				current = old.Revision
			}
		}
		if current != t.Revision {
			return fmt.Errorf("write task %s: stored revision %d, given %d: %w",
				t.ID, current, t.Revision, store.ErrConflict)
		}
		pending[t.ID] = t.Revision + 1
	}
	for _, t := range staged {
		s.tasks[t.ID.Job][t.ID.Instance] = t
	}
	for _, t := range tasks {
		t.Revision++
	}
	return nil
}

// GetTask returns a copy of a stored task.
func (s *Store) GetTask(ctx context.Context, id model.TaskID) (*model.TaskRuntime, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	t, ok := s.tasks[id.Job][id.Instance]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return cloneTask(t), nil
}

// ListTasks returns copies of a job's tasks ordered by instance;
// ErrNotFound if the job does not exist.
func (s *Store) ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	byInstance, ok := s.tasks[job]
	if !ok {
		return nil, fmt.Errorf("tasks of job %s: %w", job, store.ErrNotFound)
	}
	out := make([]*model.TaskRuntime, 0, len(byInstance))
	for _, t := range byInstance {
		out = append(out, cloneTask(t))
	}
	slices.SortFunc(out, func(a, b *model.TaskRuntime) int { return cmp.Compare(a.ID.Instance, b.ID.Instance) })
	return out, nil
}

// Close makes every later call fail with store.ErrUnavailable.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
