// Package cassandra is the shard's production store.Store on Apache
// Cassandra (gocql): the same contract as the embedded boltstore, checked
// by the same suite (shard/store/storetest), with the values in the same
// binary encoding (shard/store/codec).
//
// Schema. Migrations are versioned CQL lists (schema.go), each statement
// idempotent, recorded in the keyspace's schema_migrations table and
// applied by Migrate (`peloton store migrate`) or by Open with
// Config.Migrate. Open without Migrate refuses a keyspace that is not at
// this build's version (ErrSchemaVersion). The keyspace is created with
// SimpleStrategy (one data center) or NetworkTopologyStrategy (a factor
// per data center, one per region); see Replication.
//
//	jobs            id → incarnation, revision, status (status + config version);
//	                record (status + compressed spec) on rows of schema 1
//	job_configs     (job_id) incarnation, version → config_id, chunks, config_size
//	config_chunks   ((config_id), chunk) → data: a config record in pieces
//	task_partitions (job_id) incarnation, bucket: the task partitions that exist
//	tasks           ((job_id, incarnation, bucket), instance) → revision, record
//	pools           path → revision, record
//	named_values    name → value
//	leases          name → holder, term, written with a TTL (leader election)
//	lease_terms     name → term, without TTL (fencing tokens outlive leases)
//	updates         id → job_id, revision, record
//	job_updates     (job_id) update_id: each job's updates
//	hosts           ((part = 0), id) → record: every host in id order
//	events          ((job_id, bucket), seq) → instance, expires, record, with a TTL
//	event_buckets   (job_id) bucket: the event partitions that exist, with a TTL
//	audit           ((day), time, seq, writer) → expires, record, with a TTL (audit.go)
//	audit_days      ((part = 0), day): the days that have audit records
//
// Job configs. A job's record names its config version; the configs are
// immutable, stored once per version, compressed, and written as chunks
// of at most ConfigChunkSize (256 KiB) in a partition of their own, so a
// config of megabytes (a 100,000-instance job with an override per
// instance compresses to about 2 MiB) is many small mutations. The chunks
// are written first, then the job_configs row that makes the version
// visible (for CreateJob, then the job row itself), so a reader never
// meets a config with chunks missing. UpdateJob rewrites the small status
// only. Configs are keyed by the job incarnation, and decoded configs are
// cached by (job, incarnation, version) (codec.SpecCache). A jobs row of
// schema 1 keeps its record: its spec is config version 1 of the job.
//
// Events. Task events are partitioned like tasks (bucket = instance /
// BucketSize) and job events in bucket -1, each row written with a TTL
// that outlives the event's retention, and expires hiding it exactly when
// the retention ends. A query for one instance reads one partition; a
// query for the job merges its partitions (event_buckets) in Seq order.
// AppendEvents writes unlogged single-partition batches, several at once.
//
// A job's tasks live in partitions of BucketSize consecutive instances
// (bucket = instance / BucketSize), so a 100,000-instance job is ten
// partitions of bounded size that ListTasks reads in order, page by page.
// Every CreateJob draws a new incarnation and tasks are keyed by it: a job
// deleted and created again never sees its predecessor's tasks, even when
// the predecessor's task partitions were not all deleted yet.
//
// Compare-and-set. Lightweight transactions (Paxos) are used only where a
// revision or an existence must be checked: CreateJob/CreateRecord (IF
// NOT EXISTS), UpdateJob/SwapRecord (IF revision = ?), DeleteJob/
// DeleteRecord (IF EXISTS), every task of WriteTasks, and, on a view made by Fence,
// the lease_terms row checked before each write (fence.go). Reads, values
// and the partition index are plain writes at Config.Consistency.
//
// WriteTasks atomicity. Cassandra applies a conditional batch only within
// one partition, and a Paxos round over very many rows risks its write
// timeout. WriteTasks therefore splits a batch into conditional batches
// of one task partition and at most MaxConditionalBatch (1,000) tasks
// each, applied in (job, instance) order; each is all or nothing. A batch
// that needs more than one is first checked against the stored
// revisions, so a stale task makes the whole batch fail with ErrConflict
// before anything is written; but a concurrent writer that changes a task
// between that check and the last conditional batch can leave the earlier
// ones applied. The error is still ErrConflict (every task written was
// itself compare-and-set, so re-reading and retrying is correct) and says
// how many were applied. The store declares this with
// AtomicAcrossPartitions() == false (storetest.PartitionedBatches), and
// the contract suite skips its cross-partition race test for it. Batches
// of up to 1,000 tasks of one job within one 10,000-instance bucket — what
// the job manager writes — keep the full guarantee.
//
// Failures. Unreachable hosts, timeouts and Cassandra's unavailable and
// overloaded answers become store.ErrUnavailable naming the hosts; a
// timed-out write may or may not have been applied, and the caller finds
// out by reading again. The driver reconnects by itself
// (Config.ReconnectInterval), so a store keeps working once Cassandra is
// back. No retry policy is set: retrying a compare-and-set blindly could
// apply it twice.
//
// It imports shard/model, shard/store, shard/store/codec and gocql only;
// it must not import the scheduler packages or any other backend (its
// benchmark, a test file, compares against boltstore).
package cassandra
