package store

import (
	"context"
	"errors"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Sentinel errors every backend returns (wrapped with %w where useful).
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrConflict means a compare-and-set found a different revision.
	ErrConflict = errors.New("revision conflict")
	// ErrUnavailable means the backend cannot be reached right now.
	ErrUnavailable = errors.New("store unavailable")
	// ErrInvalid means the call itself was malformed (nil job, empty id).
	ErrInvalid = errors.New("invalid store request")
)

// JobStore keeps jobs: spec and status.
type JobStore interface {
	// CreateJob stores a new job with Revision 1; ErrExists if the id is taken.
	CreateJob(ctx context.Context, job *model.Job) error
	// UpdateJob replaces a job if its stored revision equals job.Revision,
	// then increments job.Revision; ErrConflict otherwise.
	UpdateJob(ctx context.Context, job *model.Job) error
	GetJob(ctx context.Context, id model.JobID) (*model.Job, error)
	ListJobs(ctx context.Context) ([]*model.Job, error)
	// DeleteJob removes a job and all its tasks.
	DeleteJob(ctx context.Context, id model.JobID) error
}

// TaskStore keeps task runtimes.
type TaskStore interface {
	// WriteTasks stores runtimes in one atomic batch. Each task's stored
	// revision must equal its Revision (0: must not exist yet); on success
	// each Revision is incremented. On ErrConflict nothing is written. The
	// job must exist (ErrNotFound otherwise).
	WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error
	GetTask(ctx context.Context, id model.TaskID) (*model.TaskRuntime, error)
	// ListTasks returns a job's tasks ordered by instance.
	ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error)
}

// PoolStore keeps the resource pool tree.
type PoolStore interface {
	// CreatePool stores a new pool with Revision 1; ErrExists if the path
	// is taken.
	CreatePool(ctx context.Context, pool *model.Pool) error
	// UpdatePool replaces a pool if its stored revision equals
	// pool.Revision, then increments pool.Revision; ErrConflict otherwise.
	UpdatePool(ctx context.Context, pool *model.Pool) error
	// DeletePool removes a pool; ErrNotFound if there is none.
	DeletePool(ctx context.Context, path string) error
	// ListPools returns every pool ordered by path.
	ListPools(ctx context.Context) ([]*model.Pool, error)
}

// ValueStore keeps small named values of the shard's components, such as
// a Mesos framework id.
type ValueStore interface {
	// GetValue returns a value; ErrNotFound if it was never put.
	GetValue(ctx context.Context, key string) ([]byte, error)
	// PutValue stores or replaces a value.
	PutValue(ctx context.Context, key string, value []byte) error
}

// JobBatchUpdater is an optional capability: UpdateJobs replaces several
// jobs in one atomic write, with the same compare-and-set as UpdateJob on
// each (ErrConflict on any: nothing is written).
type JobBatchUpdater interface {
	UpdateJobs(ctx context.Context, jobs []*model.Job) error
}

// LeaseStore is an optional capability: leases for leader election.
// A lease taken or renewed with ttl is held for at least ttl from the
// moment the call was made.
type LeaseStore interface {
	// AcquireLease takes the named lease for holder for ttl if it is free or
	// expired (or already held by holder: then it renews), returning the
	// lease's fencing term (strictly increasing each time a new holder
	// takes it). ErrConflict when another holder has it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (term uint64, err error)
	// RenewLease extends a lease held by holder at term; ErrConflict if it
	// was lost.
	RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error
	// ReleaseLease gives a lease up (no error if not held).
	ReleaseLease(ctx context.Context, name, holder string, term uint64) error
	// LeaseHolder returns the current holder and term ("" when free).
	LeaseHolder(ctx context.Context, name string) (holder string, term uint64, err error)
}

// Store is a backend holding every aggregate.
type Store interface {
	JobStore
	TaskStore
	PoolStore
	ValueStore
	Close() error
}
