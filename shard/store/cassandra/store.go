package cassandra

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Store is a store.Store in a Cassandra keyspace. It is safe for
// concurrent use.
type Store struct {
	cfg     Config
	session *gocql.Session
	q       statements
	closed  *atomic.Bool // shared with the views made by Fence
	fence   *fence       // on a view made by Fence: checked before every write
	// afterCreate, when set (by tests), runs between a view's job writes
	// and the fence's confirmation after them.
	afterCreate func()
	// specs keeps decoded configs by job incarnation and version.
	specs *codec.SpecCache
	// partitions and knownDays are the task partitions and audit days
	// this store registered (shared with the views made by Fence).
	partitions *knownPartitions
	knownDays  *registeredDays
}

var _ store.Backend = (*Store)(nil)

// Open connects to Cassandra, applies missing migrations when
// cfg.Migrate is set, and otherwise fails with ErrSchemaVersion unless the
// keyspace's schema is the one this build uses. It fails with
// store.ErrUnavailable when no host answers.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("cassandra store: %w", err)
	}
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Migrate {
		_, err = s.migrate(ctx)
	} else {
		err = s.checkSchema(ctx)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cassandra store: %w", err)
	}
	return s, nil
}

// connect opens a session without a keyspace: statements name their
// tables with the keyspace, so one session also serves migrations.
func connect(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	session, err := cfg.cluster("").CreateSession()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("cassandra %s: %w: connect: %w", cfg.hostsString(), store.ErrUnavailable, err)
	}
	return &Store{cfg: cfg, session: session, q: newStatements(cfg.Keyspace), closed: new(atomic.Bool),
		specs:      codec.NewSpecCache(codec.DefaultSpecCacheEntries, codec.DefaultSpecCacheBytes),
		partitions: new(knownPartitions), knownDays: new(registeredDays)}, nil
}

// Close ends the session; later calls fail with store.ErrUnavailable.
// Closing twice is harmless.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.session.Close()
	}
	return nil
}

// Keyspace is the keyspace the store lives in.
func (s *Store) Keyspace() string { return s.cfg.Keyspace }

// AtomicAcrossPartitions reports false: WriteTasks applies a batch as
// conditional batches of up to MaxConditionalBatch tasks of one partition,
// each all or nothing, but not all of them together under concurrent
// writers (see doc.go).
func (s *Store) AtomicAcrossPartitions() bool { return false }

// begin fails fast on a cancelled context or a closed store.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return fmt.Errorf("cassandra %s: %w: store is closed", s.cfg.hostsString(), store.ErrUnavailable)
	}
	return nil
}

func (s *Store) query(ctx context.Context, stmt string, args ...any) *gocql.Query {
	return s.session.Query(stmt, args...).WithContext(ctx)
}

// CreateJob stores a new job with Revision 1, and its spec as config
// version job.ConfigVersion (1 when 0); it sets both on job. The config is
// written first, under the new incarnation nobody reads yet; the job row,
// a compare-and-set, then makes job and config visible together.
func (s *Store) CreateJob(ctx context.Context, job *model.Job) error {
	return s.CreateJobs(ctx, []*model.Job{job})[0]
}

// createParallelism bounds the job creations CreateJobs has in flight.
const createParallelism = 16

// errNotAttempted is the error of a job CreateJobs did not get to: the
// context ended first.
var errNotAttempted = errors.New("not attempted")

// CreateJobs stores new jobs, each as CreateJob does: a job row's
// compare-and-set is a Paxos round of its own partition, which no batch
// can join with another's, so the creations run side by side instead.
func (s *Store) CreateJobs(ctx context.Context, jobs []*model.Job) []error {
	errs := make([]error, len(jobs))
	for i := range errs {
		errs[i] = errNotAttempted
	}
	err := parallel(ctx, len(jobs), createParallelism, func(ctx context.Context, i int) error {
		errs[i] = s.createJob(ctx, jobs[i])
		return nil
	})
	s.confirmFence(ctx, jobs, errs)
	for i, e := range errs {
		if e == errNotAttempted {
			cause := err
			if cause == nil {
				cause = ctx.Err()
			}
			if cause == nil {
				cause = context.Canceled
			}
			errs[i] = fmt.Errorf("create job: %w", cause)
		}
	}
	return errs
}

// confirmFence checks, on a view made by Fence, that the fence still held
// after the jobs were written. The check before each write cannot be one
// transaction with it (fence.go): a writer paused between them lands its
// job after a takeover, and the new leader, which loaded the region's jobs
// when it took over, never learns of it. Such a job is answered
// ErrUnavailable, as a write that timed out is: the caller cannot count
// on it, asks the new leader again with the same id and is answered
// ErrExists there, which makes that leader take the stored job in.
func (s *Store) confirmFence(ctx context.Context, jobs []*model.Job, errs []error) {
	if s.fence == nil || !slices.Contains(errs, nil) {
		return
	}
	if s.afterCreate != nil {
		s.afterCreate()
	}
	err := s.begin(ctx)
	if err == nil {
		err = s.fence.checks.after(ctx, s.checkFence)
	}
	if err == nil {
		return
	}
	for i, e := range errs {
		if e == nil {
			errs[i] = fmt.Errorf("create job %s: %w: written, but the fence %s could not be confirmed after the write, so the region's new leader may not know of it: %v",
				jobs[i].ID, store.ErrUnavailable, s.fence.name, err)
		}
	}
}

func (s *Store) createJob(ctx context.Context, job *model.Job) error {
	if err := codec.CheckJob(job); err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	withVersion := *job
	withVersion.ConfigVersion = max(job.ConfigVersion, 1)
	config, err := codec.EncodeConfig(&job.Spec)
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	inc := gocql.TimeUUID()
	stored, err := s.writeConfig(ctx, s.q.insertConfig, job.ID, inc, withVersion.ConfigVersion, config)
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	applied, err := s.query(ctx, s.q.createJob, string(job.ID), inc, int64(1), codec.EncodeJobRecord(&withVersion, 1)).
		MapScanCAS(map[string]any{})
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, s.classify(ctx, err))
	}
	if !applied {
		// The config written is under an incarnation no job has.
		s.dropConfig(ctx, job.ID, inc, stored)
		return fmt.Errorf("create job %s: %w", job.ID, store.ErrExists)
	}
	job.Revision, job.ConfigVersion = 1, withVersion.ConfigVersion
	return nil
}

// UpdateJob replaces a job's record (not its spec) if its stored revision
// equals job.Revision, and increments job.Revision.
func (s *Store) UpdateJob(ctx context.Context, job *model.Job) error {
	if err := codec.CheckJobRecord(job); err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	err := s.compareAndSet(ctx, s.q.updateJob, job.Revision, nil,
		int64(job.Revision+1), codec.EncodeJobRecord(job, job.Revision+1), string(job.ID), int64(job.Revision))
	if err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	job.Revision++
	return nil
}

// jobRow is a job's row: its incarnation, its record as this build
// writes it (status), and the record with the spec inside an older build
// wrote (record), which holds config version 1 when present.
type jobRow struct {
	id             model.JobID
	incarnation    gocql.UUID
	status, record []byte
}

// legacySpec reports whether the row holds config version 1 itself.
func (r *jobRow) legacySpec() bool { return codec.JobRecordHasSpec(r.record) }

// getJobRow reads a job's row; ErrNotFound if there is no such job.
func (s *Store) getJobRow(ctx context.Context, id model.JobID) (*jobRow, error) {
	r := &jobRow{id: id}
	err := s.query(ctx, s.q.getJob, string(id)).Scan(&r.incarnation, &r.status, &r.record)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && r.status == nil && r.record == nil) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	return r, nil
}

// job decodes a job's row and reads the spec of its config version.
func (s *Store) job(ctx context.Context, r *jobRow) (*model.Job, error) {
	if r.status == nil {
		// Never updated since an older build wrote it.
		return codec.DecodeJobRecord(r.id, r.record)
	}
	job, err := codec.DecodeJobRecord(r.id, r.status)
	if err != nil {
		return nil, err
	}
	spec, err := s.jobConfig(ctx, r, job.ConfigVersion)
	if err != nil {
		return nil, err
	}
	job.Spec = *spec
	return job, nil
}

// GetJob returns a stored job with the spec of its config version.
func (s *Store) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	r, err := s.getJobRow(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	job, err := s.job(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return job, nil
}

// listParallelism bounds the configs ListJobs reads at once.
const listParallelism = 16

// ListJobs returns all jobs ordered by id. It reads the whole jobs table,
// then the configs the jobs name (from the cache where it has them).
func (s *Store) ListJobs(ctx context.Context) ([]*model.Job, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	iter := s.query(ctx, s.q.listJobs).Iter()
	var (
		rows []*jobRow
		id   string
	)
	for {
		r := &jobRow{}
		if !iter.Scan(&id, &r.incarnation, &r.status, &r.record) {
			break
		}
		if r.status != nil || r.record != nil {
			r.id = model.JobID(id)
			rows = append(rows, r)
		}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", s.classify(ctx, err))
	}
	jobs := make([]*model.Job, len(rows))
	err := parallel(ctx, len(rows), listParallelism, func(ctx context.Context, i int) error {
		job, err := s.job(ctx, rows[i])
		if err != nil {
			return fmt.Errorf("job %s: %w", rows[i].id, err)
		}
		jobs[i] = job
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	slices.SortFunc(jobs, func(a, b *model.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, nil
}

// DeleteJob removes a job, then its tasks, configs, updates and events.
// Removing the job row is one compare-and-set, after which the job, its
// tasks and configs are gone for every reader: they are keyed by the job's
// incarnation, which a new job of the same id never shares. The task and
// config partitions are then deleted; if that is interrupted, what is left
// is unreachable and the next DeleteJob of the same id removes it. Updates
// and events are keyed by job id: they are deleted last, and an
// interrupted delete can leave them to a job created again under the id
// (events until their TTL ends).
func (s *Store) DeleteJob(ctx context.Context, id model.JobID) error {
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("delete job %s: %w", id, err)
	}
	applied, err := s.query(ctx, s.q.deleteJob, string(id)).MapScanCAS(map[string]any{})
	if err != nil {
		return fmt.Errorf("delete job %s: %w", id, s.classify(ctx, err))
	}
	if !applied {
		return fmt.Errorf("delete job %s: %w", id, store.ErrNotFound)
	}
	s.specs.Forget(id)
	if err := s.removeStaleTasks(ctx, id); err != nil {
		return fmt.Errorf("delete job %s: job deleted, its tasks not yet: %w", id, err)
	}
	if err := s.removeStaleConfigs(ctx, id); err != nil {
		return fmt.Errorf("delete job %s: job and tasks deleted, its configs not yet: %w", id, err)
	}
	if err := s.removeUpdates(ctx, id); err != nil {
		return fmt.Errorf("delete job %s: job, tasks and configs deleted, its updates not yet: %w", id, err)
	}
	if err := s.removeEvents(ctx, id); err != nil {
		return fmt.Errorf("delete job %s: job, tasks, configs and updates deleted, its events not yet: %w", id, err)
	}
	return nil
}

// removeStaleTasks deletes the task partitions of every incarnation of
// job id except the current one (if the id has been created again).
func (s *Store) removeStaleTasks(ctx context.Context, id model.JobID) error {
	current, err := s.incarnation(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	iter := s.query(ctx, s.q.listAllTaskPartitions, string(id)).Iter()
	var (
		inc     gocql.UUID
		bucket  int
		buckets = map[gocql.UUID][]int{}
	)
	for iter.Scan(&inc, &bucket) {
		if inc != current {
			buckets[inc] = append(buckets[inc], bucket)
		}
	}
	if err := iter.Close(); err != nil {
		return s.classify(ctx, err)
	}
	for inc, bs := range buckets {
		for _, b := range bs {
			if err := s.query(ctx, s.q.deleteTaskPartition, string(id), inc, b).Exec(); err != nil {
				return s.classify(ctx, err)
			}
		}
		if err := s.query(ctx, s.q.deleteTaskPartitions, string(id), inc).Exec(); err != nil {
			return s.classify(ctx, err)
		}
	}
	return nil
}

// incarnation returns the current incarnation of job id; ErrNotFound if
// there is no such job.
func (s *Store) incarnation(ctx context.Context, id model.JobID) (gocql.UUID, error) {
	var inc gocql.UUID
	err := s.query(ctx, s.q.jobIncarnation, string(id)).Scan(&inc)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && inc == gocql.UUID{}) {
		return gocql.UUID{}, store.ErrNotFound
	}
	if err != nil {
		return gocql.UUID{}, s.classify(ctx, err)
	}
	return inc, nil
}
