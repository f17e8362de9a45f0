package cassandra

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/peloton-federated/peloton/shard/store"
)

// migration is one schema step: CQL statements that are each idempotent
// (IF NOT EXISTS), so a migration interrupted half way is simply applied
// again. "%[1]s" in a statement is the keyspace. A released migration is
// never edited: a change is a new migration with the next version.
type migration struct {
	version     int
	description string
	statements  []string
}

// migrations is the schema, oldest first; versions are 1, 2, 3, ...
var migrations = []migration{
	{
		version:     1,
		description: "jobs, task partitions, tasks, pools, values, leases",
		statements: []string{
			// A job's record is codec.EncodeJob's value: status plus the
			// flate-compressed spec. revision is kept beside it for the
			// compare-and-set of UpdateJob. incarnation is new for every
			// CreateJob: tasks are keyed by it, so a job deleted and
			// created again never sees the old job's tasks, even where
			// their cleanup was interrupted.
			`CREATE TABLE IF NOT EXISTS %[1]s.jobs (
				id text PRIMARY KEY,
				incarnation timeuuid,
				revision bigint,
				record blob)`,
			// The task partitions a job incarnation has written, in
			// order, so ListTasks and DeleteJob know which partitions of
			// tasks exist without scanning.
			`CREATE TABLE IF NOT EXISTS %[1]s.task_partitions (
				job_id text,
				incarnation timeuuid,
				bucket int,
				PRIMARY KEY ((job_id), incarnation, bucket))`,
			// One partition per 10,000 instances of a job incarnation
			// (bucket = instance / 10000), rows in instance order. record
			// is codec.AppendTask's value.
			`CREATE TABLE IF NOT EXISTS %[1]s.tasks (
				job_id text,
				incarnation timeuuid,
				bucket int,
				instance bigint,
				revision bigint,
				record blob,
				PRIMARY KEY ((job_id, incarnation, bucket), instance))`,
			`CREATE TABLE IF NOT EXISTS %[1]s.pools (
				path text PRIMARY KEY,
				revision bigint,
				record blob)`,
			`CREATE TABLE IF NOT EXISTS %[1]s.named_values (
				name text PRIMARY KEY,
				value blob)`,
			// Leader leases. A lease row lives as long as its TTL:
			// acquiring is INSERT ... IF NOT EXISTS USING TTL, renewing is
			// UPDATE ... USING TTL ... IF holder = ? AND term = ?,
			// releasing is DELETE ... IF holder = ?; an unrenewed lease
			// disappears by itself. term counts acquisitions, as a fencing
			// token: the next term is taken from lease_terms (no TTL, so
			// it outlives the lease) with IF term = ? before acquiring.
			`CREATE TABLE IF NOT EXISTS %[1]s.leases (
				name text PRIMARY KEY,
				holder text,
				term bigint)`,
			`CREATE TABLE IF NOT EXISTS %[1]s.lease_terms (
				name text PRIMARY KEY,
				term bigint)`,
		},
	},
	{
		version:     2,
		description: "versioned job configs in chunks, updates, hosts, events",
		statements: []string{
			// A job's record moves to status: codec.EncodeJobRecord's
			// value (status and config version, no spec). A row written
			// before keeps its record (status plus the spec, which reads
			// as config version 1); this build never writes record.
			`ALTER TABLE %[1]s.jobs ADD IF NOT EXISTS status blob`,
			// The config versions of each job incarnation: a version is
			// stored once its row is written, after all its chunks.
			// config_id names the chunks; chunks and config_size let a
			// reader check that it has them all.
			`CREATE TABLE IF NOT EXISTS %[1]s.job_configs (
				job_id text,
				incarnation timeuuid,
				version bigint,
				config_id timeuuid,
				chunks int,
				config_size bigint,
				PRIMARY KEY ((job_id), incarnation, version))`,
			// A config record (codec.EncodeConfig) in chunks of at most
			// ConfigChunkSize bytes, one partition per stored config.
			`CREATE TABLE IF NOT EXISTS %[1]s.config_chunks (
				config_id timeuuid,
				chunk int,
				data blob,
				PRIMARY KEY ((config_id), chunk))`,
			// Updates by id (record is codec.EncodeUpdate's value), and
			// each job's update ids.
			`CREATE TABLE IF NOT EXISTS %[1]s.updates (
				id text PRIMARY KEY,
				job_id text,
				revision bigint,
				record blob)`,
			`CREATE TABLE IF NOT EXISTS %[1]s.job_updates (
				job_id text,
				update_id text,
				PRIMARY KEY ((job_id), update_id))`,
			// Host records (codec.EncodeHost), all in partition part = 0,
			// in id order: a shard's few thousand hosts are one batch.
			`CREATE TABLE IF NOT EXISTS %[1]s.hosts (
				part int,
				id text,
				record blob,
				PRIMARY KEY ((part), id))`,
			// Events, every row written with a TTL. A job's task events
			// are partitioned like its tasks (bucket = instance /
			// BucketSize), its job events in bucket -1; rows are in seq
			// order (seq stored as int64(seq ^ 1<<63), so that it sorts
			// as the unsigned Seq does). expires (microseconds since the
			// epoch) hides an event the moment its retention ends, before
			// the TTL, which counts in whole seconds, removes it.
			`CREATE TABLE IF NOT EXISTS %[1]s.events (
				job_id text,
				bucket int,
				seq bigint,
				instance bigint,
				expires bigint,
				record blob,
				PRIMARY KEY ((job_id, bucket), seq))`,
			// The event partitions a job has, each row written with the
			// longest TTL of the events it announces.
			`CREATE TABLE IF NOT EXISTS %[1]s.event_buckets (
				job_id text,
				bucket int,
				PRIMARY KEY ((job_id), bucket))`,
		},
	},
	{
		version:     3,
		description: "cluster migrations",
		statements: []string{
			// Migrations (codec.EncodeMigration), all in partition part =
			// 0: a region has few, listed together.
			`CREATE TABLE IF NOT EXISTS %[1]s.cluster_migrations (
				part int,
				id text,
				revision bigint,
				record blob,
				PRIMARY KEY ((part), id))`,
		},
	},
	{
		version:     4,
		description: "audit log",
		statements: []string{
			// Audit records (codec.AppendAudit's value) by UTC day of
			// their time, newest first, every row written with a TTL;
			// expires (microseconds since the epoch) hides a record the
			// moment its retention ends. seq orders records of the same
			// time as appended; writer tells processes apart.
			`CREATE TABLE IF NOT EXISTS %[1]s.audit (
				day int,
				time bigint,
				seq bigint,
				writer bigint,
				expires bigint,
				record blob,
				PRIMARY KEY ((day), time, seq, writer))
				WITH CLUSTERING ORDER BY (time DESC, seq DESC, writer DESC)`,
			// The days that have audit records, newest first.
			`CREATE TABLE IF NOT EXISTS %[1]s.audit_days (
				part int,
				day int,
				PRIMARY KEY ((part), day))
				WITH CLUSTERING ORDER BY (day DESC)`,
		},
	},
}

// SchemaVersion is the schema version this build reads and writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// MigrateResult says what Migrate did.
type MigrateResult struct {
	Keyspace string
	// CreatedKeyspace is true when the keyspace did not exist before.
	CreatedKeyspace bool
	// Applied lists the versions applied by this call, oldest first;
	// empty when the schema was already current.
	Applied []int
	// Version is the schema version after the call.
	Version int
}

// Migrate creates the keyspace (with cfg.Replication) if it is missing
// and applies every migration it has not recorded in schema_migrations.
// It is safe to run again, and concurrently: every statement is
// idempotent. It does not change the replication of an existing keyspace.
func Migrate(ctx context.Context, cfg Config) (MigrateResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return MigrateResult{}, err
	}
	// Schema changes wait for every node to agree; give them time.
	cfg.Timeout = max(cfg.Timeout, 30*time.Second)
	s, err := connect(ctx, cfg)
	if err != nil {
		return MigrateResult{}, err
	}
	defer s.Close()
	return s.migrate(ctx)
}

func (s *Store) migrate(ctx context.Context) (MigrateResult, error) {
	ks := s.cfg.Keyspace
	res := MigrateResult{Keyspace: ks}
	exists, err := s.keyspaceExists(ctx)
	if err != nil {
		return res, err
	}
	if !exists {
		stmt := fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s AND durable_writes = true",
			ks, s.cfg.Replication.CQL())
		if err := s.ddl(ctx, stmt); err != nil {
			return res, fmt.Errorf("create keyspace %s: %w", ks, err)
		}
		res.CreatedKeyspace = true
	}
	err = s.ddl(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.schema_migrations (
		version int PRIMARY KEY,
		description text,
		applied_at timestamp)`, ks))
	if err != nil && exists && strings.Contains(err.Error(), "doesn't exist") {
		// The keyspace was seen, but the coordinator has not received it
		// yet: a node of a new ring, or one back from a restart, still
		// pulling the schema. That passes: the start tries again.
		err = fmt.Errorf("%w: the keyspace is not known to every node yet: %v", store.ErrUnavailable, err)
	}
	if err != nil {
		return res, fmt.Errorf("create %s.schema_migrations: %w", ks, err)
	}
	applied, err := s.appliedVersions(ctx)
	if err != nil {
		return res, err
	}
	// A keyspace a newer build migrated is left as it is.
	if err := s.refuseNewer(applied); err != nil {
		return res, err
	}
	for _, m := range migrations {
		if applied[m.version] {
			continue
		}
		for i, stmt := range m.statements {
			if err := s.ddl(ctx, fmt.Sprintf(stmt, ks)); err != nil {
				return res, fmt.Errorf("migration %d (%s), statement %d: %w", m.version, m.description, i+1, err)
			}
		}
		err := s.session.Query(fmt.Sprintf(
			"INSERT INTO %s.schema_migrations (version, description, applied_at) VALUES (?, ?, ?)", ks),
			m.version, m.description, time.Now()).WithContext(ctx).Exec()
		if err != nil {
			return res, fmt.Errorf("record migration %d: %w", m.version, s.classify(ctx, err))
		}
		res.Applied = append(res.Applied, m.version)
	}
	res.Version = SchemaVersion()
	return res, nil
}

// ddl runs a schema statement and waits until every node has it.
func (s *Store) ddl(ctx context.Context, stmt string) error {
	if err := s.session.Query(stmt).WithContext(ctx).Exec(); err != nil {
		return s.classify(ctx, err)
	}
	if err := s.session.AwaitSchemaAgreement(ctx); err != nil {
		return s.classify(ctx, err)
	}
	return nil
}

func (s *Store) keyspaceExists(ctx context.Context) (bool, error) {
	var name string
	err := s.session.Query("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
		s.cfg.Keyspace).WithContext(ctx).Scan(&name)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read keyspaces: %w", s.classify(ctx, err))
	}
	return true, nil
}

func (s *Store) tableExists(ctx context.Context, table string) (bool, error) {
	var name string
	err := s.session.Query("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
		s.cfg.Keyspace, table).WithContext(ctx).Scan(&name)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read tables: %w", s.classify(ctx, err))
	}
	return true, nil
}

func (s *Store) appliedVersions(ctx context.Context) (map[int]bool, error) {
	iter := s.session.Query(fmt.Sprintf("SELECT version FROM %s.schema_migrations", s.cfg.Keyspace)).
		WithContext(ctx).Iter()
	applied := map[int]bool{}
	var v int
	for iter.Scan(&v) {
		applied[v] = true
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read %s.schema_migrations: %w", s.cfg.Keyspace, s.classify(ctx, err))
	}
	return applied, nil
}

// checkSchema fails with ErrSchemaVersion unless every migration of this
// build is recorded, and no newer one.
func (s *Store) checkSchema(ctx context.Context) error {
	hint := "run `peloton store migrate --cassandra " + s.cfg.hostsString() + " --keyspace " + s.cfg.Keyspace + "`"
	exists, err := s.keyspaceExists(ctx)
	if err != nil {
		return err
	}
	if exists {
		exists, err = s.tableExists(ctx, "schema_migrations")
		if err != nil {
			return err
		}
	}
	if !exists {
		return fmt.Errorf("%w: keyspace %s has no schema; %s", ErrSchemaVersion, s.cfg.Keyspace, hint)
	}
	applied, err := s.appliedVersions(ctx)
	if err != nil {
		return err
	}
	if err := s.refuseNewer(applied); err != nil {
		return err
	}
	var missing []string
	for _, m := range migrations {
		if !applied[m.version] {
			missing = append(missing, fmt.Sprint(m.version))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: keyspace %s lacks migrations %s; %s",
			ErrSchemaVersion, s.cfg.Keyspace, strings.Join(missing, ","), hint)
	}
	return nil
}

// refuseNewer fails with ErrSchemaVersion when applied holds a migration
// this build does not know: the keyspace was migrated by a newer build.
func (s *Store) refuseNewer(applied map[int]bool) error {
	known := map[int]bool{}
	for _, m := range migrations {
		known[m.version] = true
	}
	var unknown []int
	for v := range applied {
		if !known[v] {
			unknown = append(unknown, v)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	names := make([]string, len(unknown))
	for i, v := range unknown {
		names[i] = fmt.Sprint(v)
	}
	return fmt.Errorf("%w: keyspace %s has migrations %s that this build (schema %d) does not know; upgrade peloton",
		ErrSchemaVersion, s.cfg.Keyspace, strings.Join(names, ","), SchemaVersion())
}

// DropKeyspace removes the store's keyspace with every table in it: for
// scratch keyspaces (tests, benchmarks) that would otherwise pile up in a
// long-lived Cassandra. The store is unusable afterwards.
func (s *Store) DropKeyspace(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("drop keyspace: %w", err)
	}
	if err := s.ddl(ctx, "DROP KEYSPACE IF EXISTS "+s.cfg.Keyspace); err != nil {
		return fmt.Errorf("drop keyspace %s: %w", s.cfg.Keyspace, err)
	}
	return nil
}
