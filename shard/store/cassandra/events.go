package cassandra

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Events. A job's events are partitioned by (job, bucket): its task events
// like its tasks (bucket = instance / BucketSize, so a 100,000-task job's
// half a million events make ten partitions of bounded size), its job
// events in jobEventBucket. A query for one instance reads one partition;
// a query for the whole job reads every partition the job lists in
// event_buckets from After on and merges them in Seq order, reading no
// more than Limit rows of each. Every row carries a TTL, so Cassandra
// drops expired events by itself and PruneEvents has nothing to do.

// jobEventBucket is the partition of a job's job events.
const jobEventBucket = -1

// Bounds of AppendEvents: the rows of one unlogged batch (one partition),
// and the batches in flight at once.
const (
	maxEventBatch       = 500
	eventBatchBytes     = 256 << 10
	eventWriteParallism = 8
)

// maxTTL is Cassandra's largest TTL, 20 years, in seconds.
const maxTTL = 20 * 365 * 24 * 60 * 60

// seqValue maps a Seq onto a bigint that sorts as the Seq does.
func seqValue(seq uint64) int64 { return int64(seq ^ 1<<63) }

func seqOf(v int64) uint64 { return uint64(v) ^ 1<<63 }

func eventBucket(e *model.Event) int {
	if e.Task != nil {
		return bucketOf(e.Task.ID.Instance)
	}
	return jobEventBucket
}

// eventPartition is one partition of events being appended.
type eventPartition struct {
	job    model.JobID
	bucket int
	rows   []eventRow
	ttl    int // the longest TTL of its rows, in seconds
}

type eventRow struct {
	seq, expires int64
	instance     *int64
	ttl          int
	record       []byte
}

// AppendEvents stores events, each with a TTL that keeps it at least ttl
// after its Time; events already expired are not stored. It records the
// partitions written for each job first, then writes each partition's
// events as unlogged single-partition batches, several at once. Appending
// an event again (a retry) stores it once.
func (s *Store) AppendEvents(ctx context.Context, events []model.Event, ttl time.Duration) error {
	if err := codec.CheckEvents(events, ttl); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	now := time.Now()
	type partKey struct {
		job    model.JobID
		bucket int
	}
	parts := map[partKey]*eventPartition{}
	var order []*eventPartition
	for i := range events {
		e := &events[i]
		expires := e.Time.Add(ttl)
		left := expires.Sub(now)
		if left <= 0 {
			continue
		}
		key := partKey{e.Job, eventBucket(e)}
		p := parts[key]
		if p == nil {
			p = &eventPartition{job: e.Job, bucket: eventBucket(e)}
			parts[key] = p
			order = append(order, p)
		}
		row := eventRow{seq: seqValue(e.Seq), expires: expires.UnixMicro(), ttl: eventTTL(left), record: codec.AppendEvent(nil, e)}
		if e.Task != nil {
			in := int64(e.Task.ID.Instance)
			row.instance = &in
		}
		p.rows = append(p.rows, row)
		p.ttl = max(p.ttl, row.ttl)
	}
	slices.SortFunc(order, func(a, b *eventPartition) int {
		return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.bucket, b.bucket))
	})
	if err := s.registerEventPartitions(ctx, order); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	var batches []*gocql.Batch
	for _, p := range order {
		for rows := p.rows; len(rows) > 0; {
			b := s.session.NewBatch(gocql.UnloggedBatch)
			size := 0
			for len(rows) > 0 && len(b.Entries) < maxEventBatch && size < eventBatchBytes {
				r := rows[0]
				b.Query(s.q.insertEvent, string(p.job), p.bucket, r.seq, r.instance, r.expires, r.record, r.ttl)
				size += len(r.record)
				rows = rows[1:]
			}
			batches = append(batches, b)
		}
	}
	err := parallel(ctx, len(batches), eventWriteParallism, func(ctx context.Context, i int) error {
		return s.session.ExecuteBatch(batches[i].WithContext(ctx))
	})
	if err != nil {
		return fmt.Errorf("append events: %w", s.classify(ctx, err))
	}
	return nil
}

// eventTTL is the TTL that keeps an event for left: whole seconds rounded
// up, plus one, as Cassandra counts from the write time truncated to the
// second.
func eventTTL(left time.Duration) int {
	return min(int((left+time.Second-1)/time.Second)+1, maxTTL)
}

// registerEventPartitions records the partitions about to be written, one
// unlogged batch per job (its rows share the job's partition), each row
// living as long as the longest-lived event it announces.
func (s *Store) registerEventPartitions(ctx context.Context, order []*eventPartition) error {
	return s.batchPerJob(ctx, len(order), func(i int) model.JobID { return order[i].job }, func(b *gocql.Batch, i int) {
		b.Query(s.q.addEventBucket, string(order[i].job), order[i].bucket, order[i].ttl)
	})
}

// eventBuckets returns the event partitions a job has.
func (s *Store) eventBuckets(ctx context.Context, job model.JobID) ([]int, error) {
	iter := s.query(ctx, s.q.listEventBuckets, string(job)).Iter()
	var (
		buckets []int
		bucket  int
	)
	for iter.Scan(&bucket) {
		buckets = append(buckets, bucket)
	}
	return buckets, s.classify(ctx, iter.Close())
}

// ListEvents returns a job's unexpired events in Seq order.
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	if err := codec.CheckEventQuery(q); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
	}
	if q.After == math.MaxUint64 {
		return nil, nil
	}
	if q.Instance != nil {
		events, err := s.readEvents(ctx, q, bucketOf(*q.Instance))
		if err != nil {
			return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
		}
		return events, nil
	}
	buckets, err := s.eventBuckets(ctx, q.Job)
	if err != nil {
		return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
	}
	parts := make([][]model.Event, len(buckets))
	err = parallel(ctx, len(buckets), listParallelism, func(ctx context.Context, i int) error {
		events, err := s.readEvents(ctx, q, buckets[i])
		parts[i] = events
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events of job %s: %w", q.Job, err)
	}
	events := slices.Concat(parts...)
	slices.SortFunc(events, func(a, b model.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	if q.Limit > 0 && len(events) > q.Limit {
		events = events[:q.Limit]
	}
	return events, nil
}

// readEvents reads the unexpired events of one partition after q.After,
// of q.Instance only when it is set, q.Limit of them at most.
func (s *Store) readEvents(ctx context.Context, q store.EventQuery, bucket int) ([]model.Event, error) {
	pageSize := 5000
	if q.Limit > 0 {
		pageSize = min(pageSize, q.Limit)
	}
	var query *gocql.Query
	if q.Instance != nil {
		query = s.query(ctx, s.q.listTaskEvents, string(q.Job), bucket, seqValue(q.After), int64(*q.Instance))
	} else {
		query = s.query(ctx, s.q.listEvents, string(q.Job), bucket, seqValue(q.After))
	}
	iter := query.PageSize(pageSize).Iter()
	now := time.Now().UnixMicro()
	var (
		events       []model.Event
		seq, expires int64
		record       []byte
	)
	for (q.Limit == 0 || len(events) < q.Limit) && iter.Scan(&seq, &expires, &record) {
		if expires <= now {
			continue
		}
		e, err := codec.DecodeEvent(q.Job, seqOf(seq), record)
		if err != nil {
			iter.Close()
			return nil, err
		}
		events = append(events, e)
	}
	if err := iter.Close(); err != nil {
		return nil, s.classify(ctx, err)
	}
	return events, nil
}

// PruneEvents returns 0: Cassandra drops expired events by their TTL.
func (s *Store) PruneEvents(ctx context.Context) (int, error) {
	if err := s.beginWrite(ctx); err != nil {
		return 0, fmt.Errorf("prune events: %w", err)
	}
	return 0, nil
}

// removeEvents deletes a job's event partitions, then its list of them.
func (s *Store) removeEvents(ctx context.Context, job model.JobID) error {
	buckets, err := s.eventBuckets(ctx, job)
	if err != nil {
		return err
	}
	err = parallel(ctx, len(buckets), deleteParallelism, func(ctx context.Context, i int) error {
		return s.query(ctx, s.q.deleteEventPartition, string(job), buckets[i]).Exec()
	})
	if err == nil {
		err = s.query(ctx, s.q.deleteEventBuckets, string(job)).Exec()
	}
	return s.classify(ctx, err)
}
