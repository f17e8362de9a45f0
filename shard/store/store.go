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
	// ErrFenced means a write was refused, changing nothing, because a
	// newer term than the writer's holds its fence: another leader took
	// over.
	ErrFenced = errors.New("fenced by a newer term")
)

// JobStore keeps jobs: a record of status per job, and its configs by
// version. Configs are immutable once stored and kept compressed; a job
// record names its current config version and is rewritten on every
// status change without rewriting the config.
type JobStore interface {
	// CreateJob stores a new job with Revision 1, and job.Spec as config
	// version job.ConfigVersion (set to 1 when 0); ErrExists if the id is
	// taken.
	CreateJob(ctx context.Context, job *model.Job) error
	// CreateJobs stores many new jobs as CreateJob does, in as few writes
	// as the backend allows, each on its own: errs[i] says what became of
	// jobs[i] (nil: stored whole; ErrExists: the id is taken, by a stored
	// job or by another of jobs: of those with one id, one is stored;
	// ErrInvalid: a malformed job), and a
	// job that is not stored leaves nothing behind. A failure of the whole
	// write (ErrUnavailable, ErrFenced, a cancelled context) is the error
	// of every job it touched.
	CreateJobs(ctx context.Context, jobs []*model.Job) (errs []error)
	// UpdateJob replaces a job's record if its stored revision equals
	// job.Revision, then increments job.Revision; ErrConflict otherwise.
	// job.Spec is not written: a new spec is stored with PutJobConfig
	// first, then named by job.ConfigVersion here (0 is ErrInvalid; the
	// version is not checked against the stored configs).
	UpdateJob(ctx context.Context, job *model.Job) error
	// GetJob and ListJobs return jobs with the spec of their current
	// config version.
	GetJob(ctx context.Context, id model.JobID) (*model.Job, error)
	ListJobs(ctx context.Context) ([]*model.Job, error)
	// DeleteJob removes a job with its tasks, configs, updates and events.
	DeleteJob(ctx context.Context, id model.JobID) error
	// PutJobConfig stores a config version of an existing job (ErrNotFound
	// if there is no such job; ErrExists if the version is stored).
	PutJobConfig(ctx context.Context, id model.JobID, version uint64, spec *model.JobSpec) error
	// GetJobConfig returns one config version of a job.
	GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, error)
	// ListJobConfigVersions returns the stored config versions of a job,
	// ascending.
	ListJobConfigVersions(ctx context.Context, id model.JobID) ([]uint64, error)
}

// UpdateStore keeps job updates.
type UpdateStore interface {
	// CreateUpdate stores a new update with Revision 1; ErrExists if the
	// id is taken, ErrNotFound if its job does not exist.
	CreateUpdate(ctx context.Context, u *model.Update) error
	// WriteUpdate replaces an update if its stored revision equals
	// u.Revision, then increments u.Revision; ErrConflict otherwise.
	WriteUpdate(ctx context.Context, u *model.Update) error
	GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error)
	// ListUpdates returns a job's updates, oldest first.
	ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error)
}

// EventQuery selects stored events.
type EventQuery struct {
	Job model.JobID
	// Instance, when set, keeps only that task's events (job events are
	// left out).
	Instance *uint32
	// After keeps events with Seq > After.
	After uint64
	// Limit bounds the answer (0: no bound).
	Limit int
}

// EventStore keeps the history of jobs and tasks for a retention window.
type EventStore interface {
	// AppendEvents stores events; each is kept for at least ttl after its
	// Time and is gone from ListEvents once that has passed.
	AppendEvents(ctx context.Context, events []model.Event, ttl time.Duration) error
	// ListEvents returns a job's events in Seq order.
	ListEvents(ctx context.Context, q EventQuery) ([]model.Event, error)
	// PruneEvents frees the space of expired events and says how many it
	// removed (a backend that expires them by itself returns 0).
	PruneEvents(ctx context.Context) (int, error)
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

// LeaseStore keeps leases for leader election (every Backend, and a
// Kubernetes Lease: hostmgr-k8s/lease).
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

// AuditQuery selects audit records.
type AuditQuery struct {
	// Name keeps only the records of this caller.
	Name string
	// Since keeps records with a later Time.
	Since time.Time
	// Limit keeps only the newest Limit records (0: no bound).
	Limit int
}

// AuditStore keeps the audit log of a region's gateway, for a retention
// window like events.
type AuditStore interface {
	// AppendAudit stores records, each kept for at least ttl after its
	// Time and gone from ListAudit once that has passed.
	AppendAudit(ctx context.Context, recs []model.AuditRecord, ttl time.Duration) error
	// ListAudit returns unexpired records, oldest first.
	ListAudit(ctx context.Context, q AuditQuery) ([]model.AuditRecord, error)
	// PruneAudit frees the space of expired records and says how many it
	// removed (a backend that expires them by itself returns 0).
	PruneAudit(ctx context.Context) (int, error)
}

// Fencer fences a leader's writes by the term of its lease, so that a
// leader that was paused past its lease cannot write once another took
// over.
type Fencer interface {
	// Fence records term as the newest term of the named fence and returns
	// a view of the store whose writes carry it: each write is refused with
	// ErrFenced, changing nothing, once a newer term is recorded (by a later
	// Fence, or by AcquireLease of a lease of the same name in the store).
	// The check is made by the backend together with the write. Fence fails
	// with ErrFenced when a newer term is recorded already. Reads through
	// the view are not fenced; closing the view closes the store.
	Fence(ctx context.Context, name string, term uint64) (Store, error)
}

// Store is a backend holding every aggregate.
type Store interface {
	JobStore
	TaskStore
	RecordStore
	UpdateStore
	EventStore
	Close() error
}

// Backend is what each backend (memstore, boltstore, cassandra) is, and
// what a region runs on: the store, the leases for electing its leader,
// the gateway's audit log and the fencing of a leader's writes.
type Backend interface {
	Store
	LeaseStore
	AuditStore
	Fencer
}
