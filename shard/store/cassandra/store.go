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
	closed  atomic.Bool
}

var _ store.Store = (*Store)(nil)

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
	return &Store{cfg: cfg, session: session, q: newStatements(cfg.Keyspace)}, nil
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
	if err := checkJob(job); err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	record, err := codec.EncodeJob(job, 1)
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, err)
	}
	applied, err := s.query(ctx, s.q.createJob, string(job.ID), gocql.TimeUUID(), int64(1), record).
		MapScanCAS(map[string]any{})
	if err != nil {
		return fmt.Errorf("create job %s: %w", job.ID, s.classify(ctx, err))
	}
	if !applied {
		return fmt.Errorf("create job %s: %w", job.ID, store.ErrExists)
	}
	job.Revision = 1
	return nil
}

// UpdateJob replaces a job whose stored revision equals job.Revision and
// increments job.Revision.
func (s *Store) UpdateJob(ctx context.Context, job *model.Job) error {
	if err := checkJob(job); err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	record, err := codec.EncodeJob(job, job.Revision+1)
	if err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	err = s.compareAndSet(ctx, s.q.updateJob, job.Revision,
		int64(job.Revision+1), record, string(job.ID), int64(job.Revision))
	if err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	job.Revision++
	return nil
}

// compareAndSet runs an "UPDATE ... IF revision = ?" statement: nil when
// applied, ErrNotFound when the row does not exist, ErrConflict naming
// the stored revision otherwise.
func (s *Store) compareAndSet(ctx context.Context, stmt string, given uint64, args ...any) error {
	prev := map[string]any{}
	applied, err := s.query(ctx, stmt, args...).MapScanCAS(prev)
	if err != nil {
		return s.classify(ctx, err)
	}
	if applied {
		return nil
	}
	stored, _ := prev["revision"].(int64)
	if stored == 0 {
		// Revisions start at 1: no stored revision means no row.
		return store.ErrNotFound
	}
	return fmt.Errorf("stored revision %d, given %d: %w", stored, given, store.ErrConflict)
}

// GetJob returns a stored job.
func (s *Store) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	var record []byte
	err := s.query(ctx, s.q.getJob, string(id)).Scan(&record)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && record == nil) {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, s.classify(ctx, err))
	}
	job, err := codec.DecodeJob(id, record)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return job, nil
}

// ListJobs returns all jobs ordered by id. It reads the whole jobs table.
func (s *Store) ListJobs(ctx context.Context) ([]*model.Job, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	iter := s.query(ctx, s.q.listJobs).Iter()
	var (
		jobs   []*model.Job
		id     string
		record []byte
		decErr error
	)
	for iter.Scan(&id, &record) {
		if record == nil {
			continue
		}
		job, err := codec.DecodeJob(model.JobID(id), record)
		if err != nil && decErr == nil {
			decErr = err
		}
		if err == nil {
			jobs = append(jobs, job)
		}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", s.classify(ctx, err))
	}
	if decErr != nil {
		return nil, fmt.Errorf("list jobs: %w", decErr)
	}
	slices.SortFunc(jobs, func(a, b *model.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, nil
}

// DeleteJob removes a job, then its tasks. Removing the job row is one
// compare-and-set, after which the job and its tasks are gone for every
// reader: tasks are keyed by the job's incarnation, which a new job of the
// same id never shares. The task partitions are then deleted; if that is
// interrupted, what is left is unreachable and the next DeleteJob of the
// same id removes it.
func (s *Store) DeleteJob(ctx context.Context, id model.JobID) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("delete job %s: %w", id, err)
	}
	applied, err := s.query(ctx, s.q.deleteJob, string(id)).MapScanCAS(map[string]any{})
	if err != nil {
		return fmt.Errorf("delete job %s: %w", id, s.classify(ctx, err))
	}
	if !applied {
		return fmt.Errorf("delete job %s: %w", id, store.ErrNotFound)
	}
	if err := s.removeStaleTasks(ctx, id); err != nil {
		return fmt.Errorf("delete job %s: job deleted, its tasks not yet: %w", id, err)
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
