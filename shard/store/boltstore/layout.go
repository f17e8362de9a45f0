package boltstore

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
)

// File format 2 keeps a job's tasks and events in one nested bucket of
// its own, under "job_records", each key starting with a byte that says
// its kind:
//
//	'i' + instance + seq                 nothing: one task's events in order
//	't' + instance (4 bytes)             the task's record
//	'z' + seq (8 bytes)                  expiry, then the event record
//
// and its configs in the flat bucket "job_configs", keyed by the job's id
// (its length as a uvarint, then the id: no id's key is the start of
// another's) and the version (8 bytes), so that the job's bucket stays
// small enough to be stored inline in its parent's page. Numbers are
// big-endian. A job costs one bucket, and a job of many tasks keeps them
// in a tree of its own, so writing them seeks a small tree; deleting a job
// drops the bucket and its configs' range. The bucket's sequence is the
// job's incarnation, numbered anew by every create so that decoded
// configs cached under an earlier job of the same id never match. Format
// 1 kept a nested bucket per job in each of "tasks", "configs" and
// "events" (the last with two more inside): five buckets for every job;
// Open moves such a file's records into format 2 (migrateNested).
var (
	jobRecordsBucket = []byte("job_records")
	jobConfigsBucket = []byte("job_configs")

	// Format 1's buckets of nested per-job buckets.
	nestedTasksBucket   = []byte("tasks")
	nestedConfigsBucket = []byte("configs")
	nestedEventsBucket  = []byte("events")
	nestedSeqBucket     = []byte("seq")
	nestedTaskBucket    = []byte("task")
)

// The kinds of the records in a job's bucket: the first byte of their
// keys. Events sort last: their seqs grow, so they are appended at the
// end of the job's tree.
const (
	kindEventTask = 'i'
	kindTask      = 't'
	kindEvent     = 'z'
)

// jobBucket returns the bucket of a job's records; nil when there is none.
func jobBucket(tx *bolt.Tx, job model.JobID) *bolt.Bucket {
	return tx.Bucket(jobRecordsBucket).Bucket([]byte(job))
}

// jobBucketFor returns the bucket of a job's records, creating it when
// there is none.
func jobBucketFor(tx *bolt.Tx, job model.JobID) (*bolt.Bucket, error) {
	return tx.Bucket(jobRecordsBucket).CreateBucketIfNotExists([]byte(job))
}

func taskKey(instance uint32) []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, 5), kindTask), instance)
}

// configPrefix is the start of the keys of a job's configs.
func configPrefix(job model.JobID) []byte {
	return append(binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(job)+8), uint64(len(job))), job...)
}

func configKey(job model.JobID, version uint64) []byte {
	return binary.BigEndian.AppendUint64(configPrefix(job), version)
}

func eventKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, 9), kindEvent), seq)
}

// eventTaskKey is the key of a task's event in the index of each task's
// events.
func eventTaskKey(instance uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(append(make([]byte, 0, 13), kindEventTask), instance), seq)
}

// scan calls fn with every key of b that starts with prefix, from the
// first at or after from (nil: the first), in order, until fn says stop.
func scan(b *bolt.Bucket, prefix, from []byte, fn func(k, v []byte) (bool, error)) error {
	if from == nil {
		from = prefix
	}
	c := b.Cursor()
	for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if more, err := fn(k, v); !more || err != nil {
			return err
		}
	}
	return nil
}

// deletePrefix deletes every key of b that starts with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	var keys [][]byte
	err := scan(b, prefix, nil, func(k, _ []byte) (bool, error) {
		keys = append(keys, bytes.Clone(k))
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// migrateNested moves a format 1 file's nested per-job buckets of tasks,
// configs and events into format 2's bucket per job, in tx, and deletes
// them. Keys and values are copied: what a transaction puts must stay
// valid until it commits, and the nested buckets' pages are freed.
func migrateNested(tx *bolt.Tx) error {
	to := tx.Bucket(jobRecordsBucket)
	if old := tx.Bucket(nestedConfigsBucket); old != nil {
		// Incarnations go on from where format 1 numbered them.
		if err := to.SetSequence(old.Sequence()); err != nil {
			return err
		}
	}
	moves := []struct {
		from []byte
		move func(id model.JobID, from, job *bolt.Bucket) error
	}{
		{nestedTasksBucket, func(_ model.JobID, from, job *bolt.Bucket) error { return copyNested(from, job, kindTask) }},
		{nestedConfigsBucket, func(id model.JobID, from, job *bolt.Bucket) error {
			if err := copyConfigs(from, tx.Bucket(jobConfigsBucket), id); err != nil {
				return err
			}
			return job.SetSequence(from.Sequence())
		}},
		{nestedEventsBucket, func(_ model.JobID, from, job *bolt.Bucket) error {
			if seqs := from.Bucket(nestedSeqBucket); seqs != nil {
				if err := copyNested(seqs, job, kindEvent); err != nil {
					return err
				}
			}
			if byTask := from.Bucket(nestedTaskBucket); byTask != nil {
				return copyNested(byTask, job, kindEventTask)
			}
			return nil
		}},
	}
	for _, m := range moves {
		root := tx.Bucket(m.from)
		if root == nil {
			continue
		}
		err := root.ForEachBucket(func(id []byte) error {
			job, err := jobBucketFor(tx, model.JobID(id))
			if err != nil {
				return err
			}
			return m.move(model.JobID(id), root.Bucket(id), job)
		})
		if err != nil {
			return err
		}
		if err := tx.DeleteBucket(m.from); err != nil {
			return err
		}
	}
	return nil
}

// copyConfigs puts a job's configs of format 1 into job_configs.
func copyConfigs(from, to *bolt.Bucket, job model.JobID) error {
	prefix := configPrefix(job)
	return from.ForEach(func(k, v []byte) error {
		return to.Put(append(bytes.Clone(prefix), k...), bytes.Clone(v))
	})
}

// copyNested puts every key of from, after the kind byte, into to.
func copyNested(from, to *bolt.Bucket, kind byte) error {
	return from.ForEach(func(k, v []byte) error {
		if v == nil && from.Bucket(k) != nil { // a nested bucket: none is expected here
			return nil
		}
		return to.Put(append([]byte{kind}, k...), bytes.Clone(v))
	})
}
