package cassandra

import "fmt"

// statements is every CQL statement the store runs, with the keyspace
// filled in.
type statements struct {
	createJob, updateJob, getJob, listJobs, deleteJob, jobIncarnation string

	addTaskPartition, listTaskPartitions, listAllTaskPartitions string
	deleteTaskPartition, deleteTaskPartitions                   string
	insertTask, updateTask, getTask, listTasks, taskRevisions   string

	createPool, updatePool, deletePool, listPools string

	getValue, putValue string
}

func newStatements(ks string) statements {
	f := func(format string) string { return fmt.Sprintf(format, ks) }
	return statements{
		createJob:      f("INSERT INTO %s.jobs (id, incarnation, revision, record) VALUES (?, ?, ?, ?) IF NOT EXISTS"),
		updateJob:      f("UPDATE %s.jobs SET revision = ?, record = ? WHERE id = ? IF revision = ?"),
		getJob:         f("SELECT record FROM %s.jobs WHERE id = ?"),
		listJobs:       f("SELECT id, record FROM %s.jobs"),
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

		createPool: f("INSERT INTO %s.pools (path, revision, record) VALUES (?, ?, ?) IF NOT EXISTS"),
		updatePool: f("UPDATE %s.pools SET revision = ?, record = ? WHERE path = ? IF revision = ?"),
		deletePool: f("DELETE FROM %s.pools WHERE path = ? IF EXISTS"),
		listPools:  f("SELECT path, record FROM %s.pools"),

		getValue: f("SELECT value FROM %s.named_values WHERE name = ?"),
		putValue: f("INSERT INTO %s.named_values (name, value) VALUES (?, ?)"),
	}
}
