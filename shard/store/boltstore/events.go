package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Events live in bucket "events": a nested bucket per job holding two
// more. "seq" maps the big-endian 8-byte Seq to the event's expiry (8
// bytes, microseconds since the epoch, big-endian) followed by its record;
// "task" maps a task's big-endian 4-byte instance and 8-byte Seq to
// nothing, so one task's events are one cursor range. A query with After
// and Limit seeks and reads only what it returns, plus the expired events
// on its way, which PruneEvents deletes.

var (
	eventSeqBucket  = []byte("seq")
	eventTaskBucket = []byte("task")
)

const expiryLen = 8

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func eventTaskKey(instance uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(make([]byte, 0, 12), instance), seq)
}

// expiryMicros is when an event stored at now with ttl expires, rounded
// up to the microsecond so it is kept at least ttl.
func expiryMicros(t time.Time, ttl time.Duration) int64 {
	exp := t.Add(ttl)
	us := exp.UnixMicro()
	if exp.After(time.UnixMicro(us)) && us < math.MaxInt64 {
		us++
	}
	return us
}

func expired(value []byte, nowMicros int64) bool {
	return len(value) < expiryLen || int64(binary.BigEndian.Uint64(value)) <= nowMicros
}

// jobEventBuckets returns a job's seq and task buckets, creating them
// when create is set (else nil when there are none).
func jobEventBuckets(tx *bolt.Tx, job model.JobID, create bool) (seqs, tasks *bolt.Bucket, err error) {
	root := tx.Bucket(eventsBucket)
	b := root.Bucket([]byte(job))
	if !create {
		if b == nil {
			return nil, nil, nil
		}
		return b.Bucket(eventSeqBucket), b.Bucket(eventTaskBucket), nil
	}
	if b == nil {
		if b, err = root.CreateBucket([]byte(job)); err != nil {
			return nil, nil, err
		}
	}
	if seqs, err = b.CreateBucketIfNotExists(eventSeqBucket); err != nil {
		return nil, nil, err
	}
	tasks, err = b.CreateBucketIfNotExists(eventTaskBucket)
	return seqs, tasks, err
}

// AppendEvents stores events in one transaction, each until its Time plus
// ttl; events already expired are not stored. An event of a Seq already
// stored for its job replaces it.
func (s *Store) AppendEvents(ctx context.Context, events []model.Event, ttl time.Duration) error {
	if err := codec.CheckEvents(events, ttl); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	now := time.Now().UnixMicro()
	values := make([][]byte, len(events))
	arena := make([]byte, 0, 96*len(events))
	for i := range events {
		exp := expiryMicros(events[i].Time, ttl)
		if exp <= now {
			continue
		}
		start := len(arena)
		arena = binary.BigEndian.AppendUint64(arena, uint64(exp))
		arena = codec.AppendEvent(arena, &events[i])
		values[i] = arena[start:len(arena):len(arena)]
	}
	// The loop's event writer shares commits with the other writers; the
	// function starts afresh each time, as the group commit may run it again.
	err := s.batch(ctx, func(tx *bolt.Tx) error {
		var (
			job          model.JobID
			seqs, byTask *bolt.Bucket
		)
		for i := range events {
			e := &events[i]
			if values[i] == nil {
				continue
			}
			if seqs == nil || e.Job != job {
				var err error
				if seqs, byTask, err = jobEventBuckets(tx, e.Job, true); err != nil {
					return err
				}
				job = e.Job
				// Seqs mostly grow: fill pages for appends.
				seqs.FillPercent, byTask.FillPercent = 0.9, 0.9
			}
			key := seqKey(e.Seq)
			if old := seqs.Get(key); old != nil {
				if in, ok := codec.EventInstance(old[expiryLen:]); ok {
					if err := byTask.Delete(eventTaskKey(in, e.Seq)); err != nil {
						return err
					}
				}
			}
			if err := seqs.Put(key, values[i]); err != nil {
				return err
			}
			if e.Task != nil {
				if err := byTask.Put(eventTaskKey(e.Task.ID.Instance, e.Seq), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// ListEvents returns a job's unexpired events in Seq order.
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	if err := codec.CheckEventQuery(q); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	var out []model.Event
	now := time.Now().UnixMicro()
	err := s.view(ctx, func(tx *bolt.Tx) error {
		seqs, byTask, err := jobEventBuckets(tx, q.Job, false)
		if seqs == nil || err != nil || q.After == math.MaxUint64 {
			return err
		}
		// take adds one stored event; it reports whether to go on.
		take := func(seq uint64, v []byte) (bool, error) {
			if v == nil || expired(v, now) {
				return true, nil
			}
			ev, err := codec.DecodeEvent(q.Job, seq, v[expiryLen:])
			if err != nil {
				return false, err
			}
			out = append(out, ev)
			return q.Limit == 0 || len(out) < q.Limit, nil
		}
		if q.Instance == nil {
			c := seqs.Cursor()
			for k, v := c.Seek(seqKey(q.After + 1)); k != nil; k, v = c.Next() {
				if more, err := take(binary.BigEndian.Uint64(k), v); !more || err != nil {
					return err
				}
			}
			return nil
		}
		prefix := eventTaskKey(*q.Instance, 0)[:4]
		c := byTask.Cursor()
		for k, _ := c.Seek(eventTaskKey(*q.Instance, q.After+1)); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			seq := binary.BigEndian.Uint64(k[4:])
			if more, err := take(seq, seqs.Get(k[4:])); !more || err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
	}
	return out, nil
}

// PruneEvents deletes the expired events in one transaction.
func (s *Store) PruneEvents(ctx context.Context) (int, error) {
	removed := 0
	now := time.Now().UnixMicro()
	err := s.update(ctx, func(tx *bolt.Tx) error {
		removed = 0
		root := tx.Bucket(eventsBucket)
		var emptied [][]byte
		err := root.ForEachBucket(func(job []byte) error {
			seqs, byTask, err := jobEventBuckets(tx, model.JobID(job), true)
			if err != nil {
				return err
			}
			var gone [][]byte
			err = seqs.ForEach(func(k, v []byte) error {
				if !expired(v, now) {
					return nil
				}
				gone = append(gone, k)
				if in, ok := codec.EventInstance(v[expiryLen:]); ok {
					return byTask.Delete(eventTaskKey(in, binary.BigEndian.Uint64(k)))
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, k := range gone {
				if err := seqs.Delete(k); err != nil {
					return err
				}
			}
			removed += len(gone)
			if k, _ := seqs.Cursor().First(); k == nil {
				emptied = append(emptied, job)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, job := range emptied {
			if err := root.DeleteBucket(job); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune events: %w", err)
	}
	return removed, nil
}
