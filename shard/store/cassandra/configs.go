package cassandra

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// ConfigChunkSize bounds one chunk of a stored config: a config of
// megabytes (a job with an override per instance) is written as many small
// mutations, far from Cassandra's limits on one mutation.
const ConfigChunkSize = 256 << 10

// chunkParallelism bounds the chunks of one config written at once.
const chunkParallelism = 4

// storedConfig names the chunks of a config written by writeConfig.
type storedConfig struct {
	id     gocql.UUID
	chunks int
}

// writeConfig writes a config record in chunks and the row that names
// them. With createConfig (a compare-and-set: ErrExists when the version
// is stored) the row makes the version visible, so it is written after
// every chunk and a reader never meets a config with chunks missing. With
// insertConfig (CreateJob: the incarnation is new and no reader looks at
// it before the job row exists) the row is written beside the chunks.
func (s *Store) writeConfig(ctx context.Context, stmt string, job model.JobID, inc gocql.UUID, version uint64, config []byte) (storedConfig, error) {
	c := storedConfig{id: gocql.TimeUUID(), chunks: (len(config) + ConfigChunkSize - 1) / ConfigChunkSize}
	row := s.query(ctx, stmt, string(job), inc, int64(version), c.id, c.chunks, int64(len(config)))
	alongside := 0
	if stmt == s.q.insertConfig {
		alongside = 1
	}
	err := parallel(ctx, c.chunks+alongside, chunkParallelism, func(ctx context.Context, i int) error {
		if i == c.chunks {
			return row.WithContext(ctx).Exec()
		}
		chunk := config[i*ConfigChunkSize : min(len(config), (i+1)*ConfigChunkSize)]
		return s.query(ctx, s.q.insertChunk, c.id, i, chunk).Exec()
	})
	if err != nil || alongside == 1 {
		return c, s.classify(ctx, err)
	}
	applied, err := row.MapScanCAS(map[string]any{})
	if err != nil {
		return c, s.classify(ctx, err)
	}
	if !applied {
		s.dropChunks(ctx, c.id)
		return c, store.ErrExists
	}
	return c, nil
}

// dropConfig removes, as far as it can, a config no job names; what it
// leaves is removed with the job's other stale incarnations.
func (s *Store) dropConfig(ctx context.Context, job model.JobID, inc gocql.UUID, c storedConfig) {
	_ = s.query(ctx, s.q.deleteConfigs, string(job), inc).Exec()
	s.dropChunks(ctx, c.id)
}

func (s *Store) dropChunks(ctx context.Context, id gocql.UUID) {
	_ = s.query(ctx, s.q.deleteChunks, id).Exec()
}

// jobConfig returns one config version of the job of row r: from the
// cache, the config's chunks, or an older build's record.
func (s *Store) jobConfig(ctx context.Context, r *jobRow, version uint64) (*model.JobSpec, error) {
	if version == 1 && r.legacySpec() {
		job, err := codec.DecodeJobRecord(r.id, r.record)
		if err != nil {
			return nil, err
		}
		return &job.Spec, nil
	}
	key := codec.SpecKey{Job: r.id, Incarnation: r.incarnation.String(), Version: version}
	if spec, ok := s.specs.Get(key); ok {
		return spec, nil
	}
	var (
		id     gocql.UUID
		chunks int
		size   int64
	)
	err := s.query(ctx, s.q.getConfig, string(r.id), r.incarnation, int64(version)).Scan(&id, &chunks, &size)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, fmt.Errorf("config version %d: %w", version, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	config, err := s.readChunks(ctx, id, chunks, size)
	if err != nil {
		return nil, fmt.Errorf("config version %d: %w", version, err)
	}
	spec, err := codec.DecodeConfig(config)
	if err != nil {
		return nil, fmt.Errorf("config version %d: %w", version, err)
	}
	s.specs.Put(key, spec, codec.ConfigSize(config))
	return spec, nil
}

// readChunks reads a config's chunks, a few per page, and checks that
// they are all there.
func (s *Store) readChunks(ctx context.Context, id gocql.UUID, chunks int, size int64) ([]byte, error) {
	if size < 0 || size > int64(chunks)*ConfigChunkSize {
		return nil, fmt.Errorf("%w: config of %d bytes in %d chunks", codec.ErrCorrupt, size, chunks)
	}
	config := make([]byte, 0, size)
	iter := s.query(ctx, s.q.getChunks, id).PageSize(4).Iter()
	var (
		chunk int
		data  []byte
		n     int
	)
	for iter.Scan(&chunk, &data) {
		if chunk != n || int64(len(config)+len(data)) > size {
			iter.Close()
			return nil, fmt.Errorf("%w: config chunk %d out of place", codec.ErrCorrupt, chunk)
		}
		config = append(config, data...)
		n++
	}
	if err := iter.Close(); err != nil {
		return nil, s.classify(ctx, err)
	}
	if n != chunks || int64(len(config)) != size {
		return nil, fmt.Errorf("%w: config has %d of %d chunks, %d of %d bytes", codec.ErrCorrupt, n, chunks, len(config), size)
	}
	return config, nil
}

// PutJobConfig stores a new config version of an existing job.
func (s *Store) PutJobConfig(ctx context.Context, id model.JobID, version uint64, spec *model.JobSpec) error {
	if err := codec.CheckConfig(id, version, spec); err != nil {
		return fmt.Errorf("put job config: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	config, err := codec.EncodeConfig(spec)
	if err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	r, err := s.getJobRow(ctx, id)
	if err != nil {
		return fmt.Errorf("job %s config %d: job: %w", id, version, err)
	}
	if version == 1 && r.legacySpec() {
		return fmt.Errorf("job %s config %d: %w", id, version, store.ErrExists)
	}
	if _, err := s.writeConfig(ctx, s.q.createConfig, id, r.incarnation, version, config); err != nil {
		return fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	return nil
}

// GetJobConfig returns one config version of a job.
func (s *Store) GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("job %s config %d: %w", id, version, err)
	}
	r, err := s.getJobRow(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("job %s config %d: job: %w", id, version, err)
	}
	spec, err := s.jobConfig(ctx, r, version)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return spec, nil
}

// ListJobConfigVersions returns the stored config versions of a job,
// ascending.
func (s *Store) ListJobConfigVersions(ctx context.Context, id model.JobID) ([]uint64, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("config versions of job %s: %w", id, err)
	}
	r, err := s.getJobRow(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("config versions of job %s: %w", id, err)
	}
	var versions []uint64
	if r.legacySpec() {
		versions = append(versions, 1)
	}
	iter := s.query(ctx, s.q.listConfigVersions, string(id), r.incarnation).Iter()
	var v int64
	for iter.Scan(&v) {
		versions = append(versions, uint64(v))
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("config versions of job %s: %w", id, s.classify(ctx, err))
	}
	return versions, nil
}

// removeStaleConfigs deletes the configs of every incarnation of job id
// except the current one (if the id has been created again): their
// chunks, then their rows.
func (s *Store) removeStaleConfigs(ctx context.Context, id model.JobID) error {
	current, err := s.incarnation(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	iter := s.query(ctx, s.q.listAllConfigs, string(id)).Iter()
	var (
		inc, config gocql.UUID
		stale       = map[gocql.UUID]bool{}
		chunks      []gocql.UUID
	)
	for iter.Scan(&inc, &config) {
		if inc != current {
			stale[inc] = true
			chunks = append(chunks, config)
		}
	}
	if err := iter.Close(); err != nil {
		return s.classify(ctx, err)
	}
	err = parallel(ctx, len(chunks), deleteParallelism, func(ctx context.Context, i int) error {
		return s.query(ctx, s.q.deleteChunks, chunks[i]).Exec()
	})
	if err != nil {
		return s.classify(ctx, err)
	}
	for inc := range stale {
		if err := s.query(ctx, s.q.deleteConfigs, string(id), inc).Exec(); err != nil {
			return s.classify(ctx, err)
		}
	}
	return nil
}

// deleteParallelism bounds the partitions a cleanup deletes at once.
const deleteParallelism = 8
