package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var errClosed = fmt.Errorf("memstore closed: %w", store.ErrUnavailable)

// Store is an in-memory store.Store. The zero value is not usable; call New.
type Store struct {
	*state
	// fence, on a view made by Fence, is checked by every write.
	fence *fence
}

// state is what a store and the views made of it by Fence share.
type state struct {
	mu     sync.RWMutex
	closed bool
	// jobs holds job records: every field but Spec, which is the config
	// the record's ConfigVersion names.
	jobs    map[model.JobID]*model.Job
	configs map[model.JobID]map[uint64]*model.JobSpec
	tasks   map[model.JobID]map[uint32]*model.TaskRuntime

	updates map[model.UpdateID]*model.Update
	events  map[model.JobID]*eventLog
	// audit is the audit log in time order.
	audit []storedAudit
	// records are store.RecordStore's, by table name and key, encoded.
	records map[string]map[string][]byte
}

var _ store.Backend = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{state: &state{
		jobs:    make(map[model.JobID]*model.Job),
		configs: make(map[model.JobID]map[uint64]*model.JobSpec),
		tasks:   make(map[model.JobID]map[uint32]*model.TaskRuntime),
		updates: make(map[model.UpdateID]*model.Update),
		events:  make(map[model.JobID]*eventLog),
		records: map[string]map[string][]byte{},
	}}
}

// lock takes the write lock of an open store; the caller unlocks.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	if err := s.checkFence(); err != nil {
		s.mu.Unlock()
		return err
	}
	return nil
}

// rlock takes the read lock of an open store; the caller unlocks.
func (s *Store) rlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errClosed
	}
	return nil
}

// CreateJob stores a new job with Revision 1, and its spec as config
// version job.ConfigVersion (1 when 0); it sets both on job.
func (s *Store) CreateJob(ctx context.Context, job *model.Job) error {
	return s.CreateJobs(ctx, []*model.Job{job})[0]
}

// CreateJobs stores new jobs under one lock, each on its own.
func (s *Store) CreateJobs(ctx context.Context, jobs []*model.Job) []error {
	errs := make([]error, len(jobs))
	stored := make([]*model.Job, len(jobs))
	specs := make([]*model.JobSpec, len(jobs))
	for i, job := range jobs {
		if err := codec.CheckJob(job); err != nil {
			errs[i] = fmt.Errorf("create job: %w", err)
			continue
		}
		spec, err := codec.CloneSpec(&job.Spec)
		if err != nil {
			errs[i] = fmt.Errorf("create job %s: %w", job.ID, err)
			continue
		}
		specs[i] = spec
		stored[i] = cloneJob(job)
		stored[i].Revision = 1
		stored[i].ConfigVersion = max(job.ConfigVersion, 1)
	}
	if err := s.lock(ctx); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs
	}
	defer s.mu.Unlock()
	for i, job := range jobs {
		if errs[i] != nil {
			continue
		}
		if _, ok := s.jobs[job.ID]; ok {
			errs[i] = fmt.Errorf("create job %s: %w", job.ID, store.ErrExists)
			continue
		}
		s.jobs[job.ID] = stored[i]
		s.configs[job.ID] = map[uint64]*model.JobSpec{stored[i].ConfigVersion: specs[i]}
		s.tasks[job.ID] = make(map[uint32]*model.TaskRuntime)
		job.Revision, job.ConfigVersion = 1, stored[i].ConfigVersion
	}
	return errs
}

// UpdateJob replaces a job's record (not its spec) if its stored revision
// equals job.Revision, and increments job.Revision.
func (s *Store) UpdateJob(ctx context.Context, job *model.Job) error {
	if err := codec.CheckJobRecord(job); err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	stored := cloneJob(job)
	stored.Revision = job.Revision + 1
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkJob(job); err != nil {
		return err
	}
	s.jobs[job.ID] = stored
	job.Revision = stored.Revision
	return nil
}

// checkJob checks that job's record can replace the stored one, as
// UpdateJob says; the caller holds the lock.
func (s *Store) checkJob(job *model.Job) error {
	old, ok := s.jobs[job.ID]
	if !ok {
		return fmt.Errorf("update job %s: %w", job.ID, store.ErrNotFound)
	}
	if old.Revision != job.Revision {
		return fmt.Errorf("update job %s: stored revision %d, given %d: %w",
			job.ID, old.Revision, job.Revision, store.ErrConflict)
	}
	return nil
}

// withSpec returns a copy of a stored job record with its spec; the
// caller holds the lock.
func (s *Store) withSpec(j *model.Job) (*model.Job, error) {
	spec, ok := s.configs[j.ID][j.ConfigVersion]
	if !ok {
		return nil, fmt.Errorf("job %s: config version %d: %w", j.ID, j.ConfigVersion, store.ErrNotFound)
	}
	out := cloneJob(j)
	c, err := codec.CloneSpec(spec)
	if err != nil {
		return nil, err
	}
	out.Spec = *c
	return out, nil
}

// GetJob returns a copy of a stored job.
func (s *Store) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return s.withSpec(j)
}

// ListJobs returns copies of all jobs ordered by id.
func (s *Store) ListJobs(ctx context.Context) ([]*model.Job, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]*model.Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		c, err := s.withSpec(j)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *model.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteJob removes a job with its tasks, configs, updates and events.
func (s *Store) DeleteJob(ctx context.Context, id model.JobID) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.jobs[id]; !ok {
		return fmt.Errorf("delete job %s: %w", id, store.ErrNotFound)
	}
	delete(s.jobs, id)
	delete(s.configs, id)
	delete(s.tasks, id)
	delete(s.events, id)
	for uid, u := range s.updates {
		if u.Job == id {
			delete(s.updates, uid)
		}
	}
	return nil
}

// PutJobConfig stores a copy of a new config version of a job.
func (s *Store) PutJobConfig(ctx context.Context, id model.JobID, version uint64, spec *model.JobSpec) error {
	if err := codec.CheckConfig(id, version, spec); err != nil {
		return fmt.Errorf("put job config: %w", err)
	}
	c, err := codec.CloneSpec(spec)
	if err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	versions, ok := s.configs[id]
	switch {
	case !ok:
		return fmt.Errorf("job %s config %d: job: %w", id, version, store.ErrNotFound)
	case versions[version] != nil:
		return fmt.Errorf("job %s config %d: %w", id, version, store.ErrExists)
	}
	versions[version] = c
	return nil
}

// GetJobConfig returns a copy of one config version of a job.
func (s *Store) GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	versions, ok := s.configs[id]
	if !ok {
		return nil, fmt.Errorf("job %s config %d: job: %w", id, version, store.ErrNotFound)
	}
	spec, ok := versions[version]
	if !ok {
		return nil, fmt.Errorf("job %s config %d: %w", id, version, store.ErrNotFound)
	}
	return codec.CloneSpec(spec)
}

// ListJobConfigVersions returns the stored config versions of a job,
// ascending.
func (s *Store) ListJobConfigVersions(ctx context.Context, id model.JobID) ([]uint64, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	versions, ok := s.configs[id]
	if !ok {
		return nil, fmt.Errorf("config versions of job %s: %w", id, store.ErrNotFound)
	}
	return slices.Sorted(maps.Keys(versions)), nil
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
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkTasks(tasks); err != nil {
		return err
	}
	for _, t := range staged {
		s.tasks[t.ID.Job][t.ID.Instance] = t
	}
	for _, t := range tasks {
		t.Revision++
	}
	return nil
}

// checkTasks checks that tasks can be written as WriteTasks says; the
// caller holds the lock.
func (s *Store) checkTasks(tasks []*model.TaskRuntime) error {
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
