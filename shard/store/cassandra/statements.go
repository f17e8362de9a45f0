package cassandra

import "fmt"

// statements is every CQL statement the store runs, with the keyspace
// filled in.
type statements struct {
	createJob, updateJob, getJob, listJobs, deleteJob, jobIncarnation string

	insertConfig, createConfig, getConfig, listConfigVersions string
	listAllConfigs, deleteConfigs, insertChunk, getChunks     string
	deleteChunks                                              string
	createUpdate, writeUpdate, getUpdate, addJobUpdate        string
	listJobUpdates, deleteUpdate, deleteJobUpdates            string
	insertEvent, addEventBucket, listEventBuckets, listEvents string
	listTaskEvents, deleteEventPartition, deleteEventBuckets  string

	addTaskPartition, listTaskPartitions, listAllTaskPartitions string
	deleteTaskPartition, deleteTaskPartitions                   string
	insertTask, updateTask, getTask, listTasks, taskRevisions   string

	getValue, putValue, listValues string

	insertAudit, addAuditDay, listAuditDays, listAudit, anyAudit, deleteAuditDay string
}

func newStatements(ks string) statements {
	f := func(format string) string { return fmt.Sprintf(format, ks) }
	return statements{
		createJob:      f("INSERT INTO %s.jobs (id, incarnation, revision, status) VALUES (?, ?, ?, ?) IF NOT EXISTS"),
		updateJob:      f("UPDATE %s.jobs SET revision = ?, status = ? WHERE id = ? IF revision = ?"),
		getJob:         f("SELECT incarnation, status, record FROM %s.jobs WHERE id = ?"),
		listJobs:       f("SELECT id, incarnation, status, record FROM %s.jobs"),
		deleteJob:      f("DELETE FROM %s.jobs WHERE id = ? IF EXISTS"),
		jobIncarnation: f("SELECT incarnation FROM %s.jobs WHERE id = ?"),

		addTaskPartition:      f("INSERT INTO %s.task_partitions (job_id, incarnation, bucket) VALUES (?, ?, ?)"),
		listTaskPartitions:    f("SELECT bucket FROM %s.task_partitions WHERE job_id = ? AND incarnation = ?"),
		listAllTaskPartitions: f("SELECT incarnation, bucket FROM %s.task_partitions WHERE job_id = ?"),
		deleteTaskPartition:   f("DELETE FROM %s.tasks WHERE job_id = ? AND incarnation = ? AND bucket = ?"),
		deleteTaskPartitions:  f("DELETE FROM %s.task_partitions WHERE job_id = ? AND incarnation = ?"),
		insertTask: f("INSERT INTO %s.tasks (job_id, incarnation, bucket, instance, revision, record) " +
			"VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"),
		updateTask: f("UPDATE %s.tasks SET revision = ?, record = ? " +
			"WHERE job_id = ? AND incarnation = ? AND bucket = ? AND instance = ? IF revision = ?"),
		getTask:   f("SELECT record FROM %s.tasks WHERE job_id = ? AND incarnation = ? AND bucket = ? AND instance = ?"),
		listTasks: f("SELECT instance, record FROM %s.tasks WHERE job_id = ? AND incarnation = ? AND bucket = ?"),
		taskRevisions: f("SELECT instance, revision FROM %s.tasks " +
			"WHERE job_id = ? AND incarnation = ? AND bucket = ? AND instance >= ? AND instance <= ?"),

		insertAudit:    f("INSERT INTO %s.audit (day, time, seq, writer, expires, record) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?"),
		addAuditDay:    f("INSERT INTO %s.audit_days (part, day) VALUES (0, ?)"),
		listAuditDays:  f("SELECT day FROM %s.audit_days WHERE part = 0"),
		listAudit:      f("SELECT expires, record FROM %s.audit WHERE day = ? AND time > ?"),
		anyAudit:       f("SELECT time FROM %s.audit WHERE day = ? LIMIT 1"),
		deleteAuditDay: f("DELETE FROM %s.audit_days WHERE part = 0 AND day = ?"),

		insertConfig: f("INSERT INTO %s.job_configs (job_id, incarnation, version, config_id, chunks, config_size) " +
			"VALUES (?, ?, ?, ?, ?, ?)"),
		createConfig: f("INSERT INTO %s.job_configs (job_id, incarnation, version, config_id, chunks, config_size) " +
			"VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"),
		getConfig: f("SELECT config_id, chunks, config_size FROM %s.job_configs " +
			"WHERE job_id = ? AND incarnation = ? AND version = ?"),
		listConfigVersions: f("SELECT version FROM %s.job_configs WHERE job_id = ? AND incarnation = ?"),
		listAllConfigs:     f("SELECT incarnation, config_id FROM %s.job_configs WHERE job_id = ?"),
		deleteConfigs:      f("DELETE FROM %s.job_configs WHERE job_id = ? AND incarnation = ?"),
		insertChunk:        f("INSERT INTO %s.config_chunks (config_id, chunk, data) VALUES (?, ?, ?)"),
		getChunks:          f("SELECT chunk, data FROM %s.config_chunks WHERE config_id = ?"),
		deleteChunks:       f("DELETE FROM %s.config_chunks WHERE config_id = ?"),

		createUpdate:     f("INSERT INTO %s.updates (id, job_id, revision, record) VALUES (?, ?, ?, ?) IF NOT EXISTS"),
		writeUpdate:      f("UPDATE %s.updates SET revision = ?, record = ? WHERE id = ? IF revision = ? AND job_id = ?"),
		getUpdate:        f("SELECT record FROM %s.updates WHERE id = ?"),
		addJobUpdate:     f("INSERT INTO %s.job_updates (job_id, update_id) VALUES (?, ?)"),
		listJobUpdates:   f("SELECT update_id FROM %s.job_updates WHERE job_id = ?"),
		deleteUpdate:     f("DELETE FROM %s.updates WHERE id = ?"),
		deleteJobUpdates: f("DELETE FROM %s.job_updates WHERE job_id = ?"),

		insertEvent: f("INSERT INTO %s.events (job_id, bucket, seq, instance, expires, record) " +
			"VALUES (?, ?, ?, ?, ?, ?) USING TTL ?"),
		addEventBucket:   f("INSERT INTO %s.event_buckets (job_id, bucket) VALUES (?, ?) USING TTL ?"),
		listEventBuckets: f("SELECT bucket FROM %s.event_buckets WHERE job_id = ?"),
		listEvents: f("SELECT seq, expires, record FROM %s.events " +
			"WHERE job_id = ? AND bucket = ? AND seq > ?"),
		// One partition, filtered on a regular column: Cassandra reads
		// that partition only.
		listTaskEvents: f("SELECT seq, expires, record FROM %s.events " +
			"WHERE job_id = ? AND bucket = ? AND seq > ? AND instance = ? ALLOW FILTERING"),
		deleteEventPartition: f("DELETE FROM %s.events WHERE job_id = ? AND bucket = ?"),
		deleteEventBuckets:   f("DELETE FROM %s.event_buckets WHERE job_id = ?"),

		getValue:   f("SELECT value FROM %s.named_values WHERE name = ?"),
		putValue:   f("INSERT INTO %s.named_values (name, value) VALUES (?, ?)"),
		listValues: f("SELECT name, value FROM %s.named_values"),
	}
}
