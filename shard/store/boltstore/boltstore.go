package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var (
	jobsBucket  = []byte("jobs")
	poolsBucket = []byte("pools")
	metaBucket  = []byte("meta")
	valueBucket = []byte("values")
	formatKey   = []byte("format")
	// Buckets added with updates and hosts; an older file gains them when
	// opened.
	updatesBucket    = []byte("updates")
	jobUpdatesBucket = []byte("job_updates")
	hostsBucket      = []byte("hosts")
	auditBucket      = []byte("audit")
	// Added with cluster migrations.
	migrationsBucket = []byte("migrations")
)

// buckets are the top-level buckets every open file has (layout.go has
// those of each job's records).
var buckets = [][]byte{jobsBucket, poolsBucket, metaBucket, valueBucket,
	updatesBucket, jobUpdatesBucket, hostsBucket, auditBucket, migrationsBucket,
	jobRecordsBucket, jobConfigsBucket}

// ctxCheckEvery is how many tasks of a batch are written between checks
// for a cancelled context.
const ctxCheckEvery = 1024

// listSlabSize is how many runtimes ListTasks allocates at once.
const listSlabSize = 256

// Store is a store.Store in one bbolt file. It is safe for concurrent use.
type Store struct {
	db *bolt.DB
	// specs keeps decoded configs, keyed by the sequence number of their
	// job's configs bucket (a new one for every CreateJob).
	specs *codec.SpecCache
	// fence, on a view made by Fence, is checked by every write
	// transaction; root is the store the view was made from.
	fence *fence
	root  *Store
	// commits groups concurrent small writes into shared transactions.
	commits *groupCommit
}

var _ store.Backend = (*Store)(nil)

// Open opens the store in the file at path, creating the file and its
// parent directories if needed. A file held open by another Store makes
// Open fail after a second instead of waiting forever.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: time.Second,
		// The map freelist stays fast as the file grows; not syncing it
		// only means it is rebuilt by a scan when the file is opened.
		FreelistType:   bolt.FreelistMapType,
		NoFreelistSync: true,
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		// A file from an older build gains the buckets it lacks here.
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(metaBucket)
		switch v := meta.Get(formatKey); {
		case v == nil:
			return meta.Put(formatKey, []byte{fileFormat})
		case len(v) == 1 && v[0] == 1:
			// Format 1's nested per-job buckets move to format 2's flat
			// ones, in this one transaction.
			if err := migrateNested(tx); err != nil {
				return fmt.Errorf("moving the records of format 1 to format %d: %w", fileFormat, err)
			}
			return meta.Put(formatKey, []byte{fileFormat})
		case len(v) == 1 && v[0] > fileFormat:
			return fmt.Errorf("%w: the file is in format %d, this build reads format %d; run the newer peloton, or restore a backup made before it (peloton store restore)",
				ErrNewerFormat, v[0], fileFormat)
		case len(v) != 1 || v[0] != fileFormat:
			return fmt.Errorf("%w: file format %v, this build reads %d", ErrCorrupt, v, fileFormat)
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("boltstore: open %s: %w", path, err), db.Close())
	}
	return &Store{db: db, specs: codec.NewSpecCache(codec.DefaultSpecCacheEntries, codec.DefaultSpecCacheBytes), commits: newGroupCommit(db)}, nil
}

// Close releases the file; later calls fail with store.ErrUnavailable.
// Closing twice is harmless.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file the store lives in.
func (s *Store) Path() string { return s.db.Path() }

// backendError maps bbolt's "closed" onto store.ErrUnavailable, and an id
// or value too large for bbolt onto store.ErrInvalid.
func backendError(err error) error {
	switch {
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return fmt.Errorf("boltstore: %w: %w", store.ErrUnavailable, err)
	case errors.Is(err, berrors.ErrKeyTooLarge), errors.Is(err, berrors.ErrValueTooLarge):
		return fmt.Errorf("boltstore: %w: %w", store.ErrInvalid, err)
	}
	return err
}

func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return backendError(s.db.View(fn))
}

func (s *Store) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return backendError(s.db.Update(s.fenced(fn)))
}

// batch is update for small writes that many callers make at once: they
// are committed together (groupCommit), each caller returning once its
// write is durable.
func (s *Store) batch(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return backendError(s.commits.run(s.fenced(fn)))
}

// CreateJob stores a new job with Revision 1, and its spec as config
// version job.ConfigVersion (1 when 0); it sets both on job.
func (s *Store) CreateJob(ctx context.Context, job *model.Job) error {
	return s.CreateJobs(ctx, []*model.Job{job})[0]
}

// newJob is a job ready to be stored: its record and config encoded.
type newJob struct {
	key, record, config []byte
	version             uint64
}

func encodeNewJob(job *model.Job) (newJob, error) {
	if err := codec.CheckJob(job); err != nil {
		return newJob{}, err
	}
	version := max(job.ConfigVersion, 1)
	config, err := codec.EncodeConfig(&job.Spec)
	if err != nil {
		return newJob{}, err
	}
	withVersion := *job
	withVersion.ConfigVersion = version
	return newJob{key: []byte(job.ID), record: codec.EncodeJobRecord(&withVersion, 1), config: config, version: version}, nil
}

// CreateJobs stores new jobs in one transaction, each on its own: a job
// whose id is taken is left out (ErrExists), the others are stored. The
// records are encoded before the transaction, outside the writer's lock.
func (s *Store) CreateJobs(ctx context.Context, jobs []*model.Job) []error {
	errs := make([]error, len(jobs))
	encoded := make([]newJob, len(jobs))
	todo := 0
	for i, job := range jobs {
		var err error
		if encoded[i], err = encodeNewJob(job); err != nil {
			if job != nil && job.ID != "" {
				errs[i] = fmt.Errorf("create job %s: %w", job.ID, err)
			} else {
				errs[i] = fmt.Errorf("create job: %w", err)
			}
			continue
		}
		todo++
	}
	if todo == 0 {
		return errs
	}
	exists := make([]bool, len(jobs))
	// Concurrent creates share one commit (group commit); the function
	// starts afresh each time, as Batch may run it again alone.
	err := s.batch(ctx, func(tx *bolt.Tx) error {
		clear(exists)
		for i := range encoded {
			if errs[i] != nil {
				continue
			}
			created, err := putNewJob(tx, &encoded[i])
			if err != nil {
				return err
			}
			exists[i] = !created
		}
		return nil
	})
	for i, job := range jobs {
		switch {
		case errs[i] != nil:
		case err != nil:
			errs[i] = fmt.Errorf("create job %s: %w", job.ID, err)
		case exists[i]:
			errs[i] = fmt.Errorf("create job %s: %w", job.ID, store.ErrExists)
		default:
			job.Revision, job.ConfigVersion = 1, encoded[i].version
		}
	}
	return errs
}

// putNewJob stores a new job's record, its config and its empty tasks; it
// reports false, writing nothing, when the id is taken.
func putNewJob(tx *bolt.Tx, j *newJob) (bool, error) {
	jobs := tx.Bucket(jobsBucket)
	if jobs.Get(j.key) != nil {
		return false, nil
	}
	if err := jobs.Put(j.key, j.record); err != nil {
		return false, err
	}
	id := model.JobID(j.key)
	b, err := jobBucketFor(tx, id)
	if err != nil {
		return false, err
	}
	// Tasks or configs left under the id (none should be: a delete takes
	// them with the job) do not become the new job's.
	configs := tx.Bucket(jobConfigsBucket)
	if err := deletePrefix(b, []byte{kindTask}); err != nil {
		return false, err
	}
	if err := deletePrefix(configs, configPrefix(id)); err != nil {
		return false, err
	}
	// Each job is numbered anew, so that decoded configs cached under an
	// earlier job of the same id never match.
	seq, err := tx.Bucket(jobRecordsBucket).NextSequence()
	if err != nil {
		return false, err
	}
	if err := b.SetSequence(seq); err != nil {
		return false, err
	}
	return true, configs.Put(configKey(id, j.version), j.config)
}

// UpdateJob replaces a job's record (not its spec) if its stored revision
// equals job.Revision, and increments job.Revision.
func (s *Store) UpdateJob(ctx context.Context, job *model.Job) error {
	if err := codec.CheckJobRecord(job); err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	record := codec.EncodeJobRecord(job, job.Revision+1)
	err := s.batch(ctx, func(tx *bolt.Tx) error { return replaceJobRecord(tx, job, record) })
	if err != nil {
		return fmt.Errorf("update job %s: %w", job.ID, err)
	}
	job.Revision++
	return nil
}

// replaceJobRecord compares and sets one job record. A record of an older
// build holds the spec of config version 1: that spec moves to the job's
// configs first.
func replaceJobRecord(tx *bolt.Tx, job *model.Job, record []byte) error {
	jobs := tx.Bucket(jobsBucket)
	key := []byte(job.ID)
	old := jobs.Get(key)
	if old == nil {
		return fmt.Errorf("job %s: %w", job.ID, store.ErrNotFound)
	}
	rev, err := storedRevision(old, jobRecordVersion)
	if err != nil {
		return fmt.Errorf("job %s: %w", job.ID, err)
	}
	if rev != job.Revision {
		return fmt.Errorf("job %s: stored revision %d, given %d: %w", job.ID, rev, job.Revision, store.ErrConflict)
	}
	if codec.JobRecordHasSpec(old) {
		if err := moveEmbeddedSpec(tx, job.ID, old); err != nil {
			return fmt.Errorf("job %s: %w", job.ID, err)
		}
	}
	return jobs.Put(key, record)
}

// GetJob returns a stored job with the spec of its config version.
func (s *Store) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	var job *model.Job
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(jobsBucket).Get([]byte(id))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		job, err = s.decodeJob(tx, id, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return job, nil
}

// decodeJob decodes a job record and fills in its spec.
func (s *Store) decodeJob(tx *bolt.Tx, id model.JobID, record []byte) (*model.Job, error) {
	job, err := codec.DecodeJobRecord(id, record)
	if err != nil || codec.JobRecordHasSpec(record) {
		return job, err
	}
	spec, err := s.jobConfig(tx, id, job.ConfigVersion, record)
	if err != nil {
		return nil, err
	}
	job.Spec = *spec
	return job, nil
}

// ListJobs returns all jobs ordered by id.
func (s *Store) ListJobs(ctx context.Context) ([]*model.Job, error) {
	var jobs []*model.Job
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(jobsBucket).ForEach(func(k, v []byte) error {
			job, err := s.decodeJob(tx, model.JobID(k), v)
			if err != nil {
				return err
			}
			jobs = append(jobs, job)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// DeleteJob removes a job with its tasks, configs, updates and events.
func (s *Store) DeleteJob(ctx context.Context, id model.JobID) error {
	key := []byte(id)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		jobs := tx.Bucket(jobsBucket)
		if jobs.Get(key) == nil {
			return store.ErrNotFound
		}
		if err := jobs.Delete(key); err != nil {
			return err
		}
		if err := deleteJobUpdates(tx, key); err != nil {
			return err
		}
		err := tx.Bucket(jobRecordsBucket).DeleteBucket(key)
		if err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return deletePrefix(tx.Bucket(jobConfigsBucket), configPrefix(id))
	})
	if err != nil {
		return fmt.Errorf("delete job %s: %w", id, err)
	}
	s.specs.Forget(id)
	return nil
}

// WriteTasks stores a batch of runtimes in one transaction. Every task's
// job must exist; each task's stored revision must equal its Revision (0:
// must not exist). Tasks are checked in order, so a task listed twice must
// carry the revision its first write produces. On any error nothing is
// written and no Revision changes; on success each Revision is incremented.
func (s *Store) WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error {
	if len(tasks) == 0 {
		return ctx.Err()
	}
	for i, t := range tasks {
		if t == nil {
			return fmt.Errorf("write tasks: %w: task %d of batch is nil", store.ErrInvalid, i)
		}
	}
	// Shares a commit with the writes made meanwhile (group commit); the
	// function starts afresh each time, as the group may run it again.
	err := s.batch(ctx, func(tx *bolt.Tx) error { return putTasks(ctx, tx, tasks) })
	if err != nil {
		return fmt.Errorf("write tasks: %w", err)
	}
	for _, t := range tasks {
		t.Revision++
	}
	return nil
}

// putTasks writes tasks in tx, each compared and set on its revision as
// WriteTasks says, leaving their Revision fields alone.
func putTasks(ctx context.Context, tx *bolt.Tx, tasks []*model.TaskRuntime) error {
	jobs := tx.Bucket(jobsBucket)
	var (
		job    model.JobID
		bucket *bolt.Bucket
		// Keys and values must stay untouched until the commit, so
		// they are carved out of arenas that only ever grow.
		keys   = make([]byte, 0, 5*len(tasks))
		values = make([]byte, 0, 64*len(tasks))
	)
	for i, t := range tasks {
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if bucket == nil || t.ID.Job != job {
			job, bucket = t.ID.Job, nil
			if jobs.Get([]byte(job)) == nil {
				return fmt.Errorf("task %s: job: %w", t.ID, store.ErrNotFound)
			}
			// A job of an older build may have no bucket yet.
			var err error
			if bucket, err = jobBucketFor(tx, job); err != nil {
				return err
			}
		}
		start := len(keys)
		keys = binary.BigEndian.AppendUint32(append(keys, kindTask), t.ID.Instance)
		key := keys[start:len(keys):len(keys)]
		var stored uint64
		if old := bucket.Get(key); old != nil {
			rev, err := storedRevision(old, taskRecordVersion)
			if err != nil {
				return fmt.Errorf("task %s: %w", t.ID, err)
			}
			stored = rev
		}
		if stored != t.Revision {
			return fmt.Errorf("task %s: stored revision %d, given %d: %w",
				t.ID, stored, t.Revision, store.ErrConflict)
		}
		start = len(values)
		values = appendTask(values, t, t.Revision+1)
		if err := bucket.Put(key, values[start:len(values):len(values)]); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}

// GetTask returns a stored task.
func (s *Store) GetTask(ctx context.Context, id model.TaskID) (*model.TaskRuntime, error) {
	var task *model.TaskRuntime
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := jobBucket(tx, id.Job)
		if b == nil {
			return store.ErrNotFound
		}
		v := b.Get(taskKey(id.Instance))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		task, err = decodeTask(id, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", id, err)
	}
	return task, nil
}

// ListTasks returns a job's tasks ordered by instance; ErrNotFound if the
// job does not exist.
func (s *Store) ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error) {
	var tasks []*model.TaskRuntime
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(jobsBucket).Get([]byte(job)) == nil {
			return store.ErrNotFound
		}
		b, prefix := jobBucket(tx, job), []byte{kindTask}
		if b == nil {
			return nil
		}
		// Runtimes are carved out of slabs: one allocation per
		// listSlabSize tasks instead of one per task.
		var slab []model.TaskRuntime
		return scan(b, prefix, nil, func(k, v []byte) (bool, error) {
			if len(k) != len(prefix)+4 {
				return false, fmt.Errorf("%w: task key %x", ErrCorrupt, k)
			}
			if len(slab) == 0 {
				slab = make([]model.TaskRuntime, listSlabSize)
			}
			t := &slab[0]
			slab = slab[1:]
			if err := decodeTaskInto(t, model.TaskID{Job: job, Instance: binary.BigEndian.Uint32(k[len(prefix):])}, v); err != nil {
				return false, err
			}
			tasks = append(tasks, t)
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("tasks of job %s: %w", job, err)
	}
	return tasks, nil
}
