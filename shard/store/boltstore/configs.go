package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Job configs live in bucket "job_configs" (layout.go): the job's prefix
// and the big-endian 8-byte config version map to the config record. A
// job record written by an older build holds the spec of config version 1
// itself and has no configs until it is first updated. The sequence of
// the job's bucket is its incarnation, the cache's key for its decoded
// configs.

// jobConfig returns one config version of a job whose record is record:
// from the cache, the job's bucket, or an older build's record.
func (s *Store) jobConfig(tx *bolt.Tx, id model.JobID, version uint64, record []byte) (*model.JobSpec, error) {
	var key codec.SpecKey
	if b := jobBucket(tx, id); b != nil {
		key = codec.SpecKey{Job: id, Incarnation: strconv.FormatUint(b.Sequence(), 10), Version: version}
		if spec, ok := s.specs.Get(key); ok {
			return spec, nil
		}
	}
	if v := tx.Bucket(jobConfigsBucket).Get(configKey(id, version)); v != nil {
		spec, err := codec.DecodeConfig(v)
		if err != nil {
			return nil, fmt.Errorf("config version %d: %w", version, err)
		}
		if key.Job != "" {
			s.specs.Put(key, spec, codec.ConfigSize(v))
		}
		return spec, nil
	}
	if version == 1 && codec.JobRecordHasSpec(record) {
		job, err := codec.DecodeJobRecord(id, record)
		if err != nil {
			return nil, err
		}
		return &job.Spec, nil
	}
	return nil, fmt.Errorf("config version %d: %w", version, store.ErrNotFound)
}

// moveEmbeddedSpec stores the spec an older build's job record holds as
// config version 1 of the job, before the record is replaced by one
// without it.
func moveEmbeddedSpec(tx *bolt.Tx, id model.JobID, record []byte) error {
	job, err := codec.DecodeJobRecord(id, record)
	if err != nil {
		return err
	}
	config, err := codec.EncodeConfig(&job.Spec)
	if err != nil {
		return err
	}
	if err := putConfig(tx, id, 1, config); err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	return nil
}

// putConfig stores a config version of a job; ErrExists if the version
// is stored.
func putConfig(tx *bolt.Tx, id model.JobID, version uint64, config []byte) error {
	configs, key := tx.Bucket(jobConfigsBucket), configKey(id, version)
	if configs.Get(key) != nil {
		return store.ErrExists
	}
	return configs.Put(key, config)
}

// PutJobConfig stores a new config version of an existing job.
func (s *Store) PutJobConfig(ctx context.Context, id model.JobID, version uint64, spec *model.JobSpec) error {
	if err := codec.CheckConfig(id, version, spec); err != nil {
		return fmt.Errorf("put job config: %w", err)
	}
	config, err := codec.EncodeConfig(spec)
	if err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	err = s.update(ctx, func(tx *bolt.Tx) error {
		record := tx.Bucket(jobsBucket).Get([]byte(id))
		if record == nil {
			return fmt.Errorf("job: %w", store.ErrNotFound)
		}
		if version == 1 && codec.JobRecordHasSpec(record) {
			return store.ErrExists
		}
		return putConfig(tx, id, version, config)
	})
	if err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	return nil
}

// GetJobConfig returns one config version of a job.
func (s *Store) GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, error) {
	var spec *model.JobSpec
	err := s.view(ctx, func(tx *bolt.Tx) error {
		record := tx.Bucket(jobsBucket).Get([]byte(id))
		if record == nil {
			return fmt.Errorf("job: %w", store.ErrNotFound)
		}
		var err error
		spec, err = s.jobConfig(tx, id, version, record)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return spec, nil
}

// ListJobConfigVersions returns the stored config versions of a job,
// ascending.
func (s *Store) ListJobConfigVersions(ctx context.Context, id model.JobID) ([]uint64, error) {
	var versions []uint64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		record := tx.Bucket(jobsBucket).Get([]byte(id))
		if record == nil {
			return store.ErrNotFound
		}
		prefix := configPrefix(id)
		err := scan(tx.Bucket(jobConfigsBucket), prefix, nil, func(k, _ []byte) (bool, error) {
			if len(k) != len(prefix)+8 {
				return false, fmt.Errorf("%w: config key %x", ErrCorrupt, k)
			}
			versions = append(versions, binary.BigEndian.Uint64(k[len(prefix):]))
			return true, nil
		})
		if err != nil {
			return err
		}
		if codec.JobRecordHasSpec(record) && (len(versions) == 0 || versions[0] != 1) {
			versions = append([]uint64{1}, versions...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("config versions of job %s: %w", id, err)
	}
	return versions, nil
}
