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

// Events live in the job's bucket (layout.go): 'z' and the big-endian
// 8-byte Seq map to the event's expiry (8 bytes, microseconds since the
// epoch, big-endian) followed by its record; 'i', a task's big-endian
// 4-byte instance and the 8-byte Seq map to nothing, so one task's events
// are one cursor range. A query with After and Limit seeks and reads only
// what it returns, plus the expired events on its way, which PruneEvents
// deletes. An id with no job (host pool moves) has a bucket of events
// too.

const expiryLen = 8

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
			job model.JobID
			b   *bolt.Bucket
		)
		for i := range events {
			e := &events[i]
			if values[i] == nil {
				continue
			}
			if b == nil || e.Job != job {
				var err error
				if b, err = jobBucketFor(tx, e.Job); err != nil {
					return err
				}
				job = e.Job
			}
			key := eventKey(e.Seq)
			if old := b.Get(key); old != nil {
				if in, ok := codec.EventInstance(old[expiryLen:]); ok {
					if err := b.Delete(eventTaskKey(in, e.Seq)); err != nil {
						return err
					}
				}
			}
			if err := b.Put(key, values[i]); err != nil {
				return err
			}
			if e.Task != nil {
				if err := b.Put(eventTaskKey(e.Task.ID.Instance, e.Seq), nil); err != nil {
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
		if q.After == math.MaxUint64 {
			return nil
		}
		b := jobBucket(tx, q.Job)
		if b == nil {
			return nil
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
			return scan(b, []byte{kindEvent}, eventKey(q.After+1), func(k, v []byte) (bool, error) {
				if len(k) != 9 {
					return false, fmt.Errorf("%w: event key %x", ErrCorrupt, k)
				}
				return take(binary.BigEndian.Uint64(k[1:]), v)
			})
		}
		task := eventTaskKey(*q.Instance, 0)[:5]
		return scan(b, task, eventTaskKey(*q.Instance, q.After+1), func(k, _ []byte) (bool, error) {
			if len(k) != 13 {
				return false, fmt.Errorf("%w: task event key %x", ErrCorrupt, k)
			}
			seq := binary.BigEndian.Uint64(k[5:])
			return take(seq, b.Get(eventKey(seq)))
		})
	})
	if err != nil {
		return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
	}
	return out, nil
}

// PruneEvents deletes the expired events in one transaction, and the
// buckets of ids with no job left empty.
func (s *Store) PruneEvents(ctx context.Context) (int, error) {
	removed := 0
	now := time.Now().UnixMicro()
	err := s.update(ctx, func(tx *bolt.Tx) error {
		removed = 0
		root, jobs := tx.Bucket(jobRecordsBucket), tx.Bucket(jobsBucket)
		var emptied [][]byte
		err := root.ForEachBucket(func(id []byte) error {
			b := root.Bucket(id)
			var gone [][]byte
			err := scan(b, []byte{kindEvent}, nil, func(k, v []byte) (bool, error) {
				if !expired(v, now) {
					return true, nil
				}
				gone = append(gone, bytes.Clone(k))
				if in, ok := codec.EventInstance(v[expiryLen:]); ok && len(k) == 9 {
					gone = append(gone, eventTaskKey(in, binary.BigEndian.Uint64(k[1:])))
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			for _, k := range gone {
				if k[0] == kindEvent {
					removed++
				}
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			if k, _ := b.Cursor().First(); k == nil && jobs.Get(id) == nil {
				emptied = append(emptied, bytes.Clone(id))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range emptied {
			if err := root.DeleteBucket(id); err != nil {
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
