package cassandra

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"
	"golang.org/x/sync/semaphore"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// BucketSize is how many consecutive instances of a job share one task
// partition: a 100,000-instance job has 10 partitions, small enough to
// read in pages and to update in one conditional batch each.
const BucketSize = 10_000

// MaxConditionalBatch is the most tasks one conditional batch carries. A
// Paxos round over more rows risks Cassandra's write timeout (one 10,000-
// row round took over 2 s on a loaded test node), so a partition with
// more writes is split into several conditional batches.
const MaxConditionalBatch = 1_000

// writeParallelism is how many partitions one WriteTasks call reads or
// writes at a time; the conditional batches in flight together carry at
// most MaxConditionalBatch rows.
const writeParallelism = 16

func bucketOf(instance uint32) int { return int(instance / BucketSize) }

// partition names one task partition: a bucket of one job incarnation.
type partition struct {
	job         model.JobID
	incarnation gocql.UUID
	bucket      int
}

// taskWrite is one task of a batch after collapsing repeats: the batch
// may list a task several times, each time at the revision the previous
// write produced, and only the last value is stored.
type taskWrite struct {
	id     model.TaskID
	expect uint64             // the revision the stored task must have
	last   *model.TaskRuntime // the value to store
	writes uint64             // how many times the batch lists the task
}

// WriteTasks stores a batch of runtimes with compare-and-set on every
// task. The batch is applied as conditional batches, each within one task
// partition (job, instance/BucketSize) and of at most MaxConditionalBatch
// tasks; each is all or nothing. A batch that needs more than one is
// first checked against the stored revisions, so a stale revision writes
// nothing; only a writer racing between that check and the conditional
// batches can leave some of them written, and the error then says so (it
// is still ErrConflict: every task that was written was compare-and-set,
// so re-reading and retrying is correct).
//
// Partitions are independent, so the lookups, checks and conditional
// batches of different partitions run concurrently, at most
// writeParallelism at a time: a pass that changed a few tasks of each of
// hundreds of small jobs pays for a handful of Paxos rounds in a row, not
// for hundreds.
func (s *Store) WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error {
	if len(tasks) == 0 {
		return ctx.Err()
	}
	for i, t := range tasks {
		if t == nil {
			return fmt.Errorf("write tasks: %w: task %d of batch is nil", store.ErrInvalid, i)
		}
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("write tasks: %w", err)
	}
	groups, order, err := s.groupByPartition(ctx, tasks)
	if err != nil {
		return fmt.Errorf("write tasks: %w", err)
	}
	if err := s.registerPartitions(ctx, order); err != nil {
		return fmt.Errorf("write tasks: %w", err)
	}
	type unit struct {
		p      partition
		writes []*taskWrite
	}
	var units []unit
	for _, p := range order {
		writes := groups[p]
		slices.SortFunc(writes, func(a, b *taskWrite) int { return cmp.Compare(a.id.Instance, b.id.Instance) })
		for len(writes) > 0 {
			n := min(len(writes), MaxConditionalBatch)
			units = append(units, unit{p, writes[:n]})
			writes = writes[n:]
		}
	}
	if len(units) > 1 {
		err := parallel(ctx, len(order), writeParallelism, func(ctx context.Context, i int) error {
			return s.checkRevisions(ctx, order[i], groups[order[i]])
		})
		if err != nil {
			return fmt.Errorf("write tasks: %w", err)
		}
	}
	var applied atomic.Int64
	rows := semaphore.NewWeighted(MaxConditionalBatch)
	err = parallel(ctx, len(units), writeParallelism, func(ctx context.Context, i int) error {
		// Big rounds go one at a time: several 1,000-row Paxos rounds at
		// once time out on a loaded node.
		n := int64(len(units[i].writes))
		if err := rows.Acquire(ctx, n); err != nil {
			return err
		}
		defer rows.Release(n)
		if err := s.writeConditionalBatch(ctx, units[i].p, units[i].writes); err != nil {
			return err
		}
		applied.Add(1)
		return nil
	})
	if err != nil {
		if n := applied.Load(); n > 0 {
			return fmt.Errorf("write tasks: %d of %d conditional batches were applied: %w", n, len(units), err)
		}
		return fmt.Errorf("write tasks: %w", err)
	}
	for _, t := range tasks {
		t.Revision++
	}
	return nil
}

// groupByPartition resolves each job's incarnation (ErrNotFound for a
// job that does not exist), collapses repeated tasks (ErrConflict when a
// repeat does not carry the revision its predecessor produces) and groups
// the writes by partition, partitions in (job, bucket) order.
func (s *Store) groupByPartition(ctx context.Context, tasks []*model.TaskRuntime) (map[partition][]*taskWrite, []partition, error) {
	incarnations, err := s.incarnations(ctx, tasks)
	if err != nil {
		return nil, nil, err
	}
	writes := map[model.TaskID]*taskWrite{}
	groups := map[partition][]*taskWrite{}
	var order []partition
	for _, t := range tasks {
		inc := incarnations[t.ID.Job]
		if w := writes[t.ID]; w != nil {
			if want := w.expect + w.writes; t.Revision != want {
				return nil, nil, fmt.Errorf("task %s: revision after its earlier write in this batch %d, given %d: %w",
					t.ID, want, t.Revision, store.ErrConflict)
			}
			w.last = t
			w.writes++
			continue
		}
		w := &taskWrite{id: t.ID, expect: t.Revision, last: t, writes: 1}
		writes[t.ID] = w
		p := partition{job: t.ID.Job, incarnation: inc, bucket: bucketOf(t.ID.Instance)}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], w)
	}
	slices.SortFunc(order, func(a, b partition) int {
		return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.bucket, b.bucket))
	})
	return groups, order, nil
}

// incarnations resolves the incarnation of every job the tasks belong
// to, concurrently.
func (s *Store) incarnations(ctx context.Context, tasks []*model.TaskRuntime) (map[model.JobID]gocql.UUID, error) {
	var jobs []model.TaskID // the first task of each job, for the error
	seen := map[model.JobID]bool{}
	for _, t := range tasks {
		if !seen[t.ID.Job] {
			seen[t.ID.Job] = true
			jobs = append(jobs, t.ID)
		}
	}
	found := make([]gocql.UUID, len(jobs))
	err := parallel(ctx, len(jobs), writeParallelism, func(ctx context.Context, i int) error {
		inc, err := s.incarnation(ctx, jobs[i].Job)
		if err != nil {
			return fmt.Errorf("task %s: job: %w", jobs[i], err)
		}
		found[i] = inc
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[model.JobID]gocql.UUID, len(jobs))
	for i, id := range jobs {
		out[id.Job] = found[i]
	}
	return out, nil
}

// registerPartitions records the partitions about to be written, one
// unconditional batch per job (the rows share the job's partition).
// Recording a partition that stays empty is harmless.
//
// A partition this store registered already is not registered again: a
// registration is removed only with its incarnation once that is no
// longer the job's current one, and writes always resolve the current
// one, so a pass that changes a task of each of many small jobs does not
// write a registration row per job every time.
func (s *Store) registerPartitions(ctx context.Context, order []partition) error {
	todo := s.partitions.unknown(order)
	if len(todo) == 0 {
		return nil
	}
	err := s.batchPerJob(ctx, len(todo), func(i int) model.JobID { return todo[i].job }, func(b *gocql.Batch, i int) {
		b.Query(s.q.addTaskPartition, string(todo[i].job), todo[i].incarnation, todo[i].bucket)
	})
	if err == nil {
		s.partitions.add(todo)
	}
	return err
}

// maxKnownPartitions bounds the registrations a store remembers; past it
// the memory starts afresh (a forgotten one is merely written again).
const maxKnownPartitions = 200_000

// knownPartitions are the task partitions a store registered.
type knownPartitions struct {
	mu   sync.Mutex
	seen map[partition]struct{}
}

// unknown returns the partitions of order not registered yet, in order.
func (k *knownPartitions) unknown(order []partition) []partition {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]partition, 0, len(order))
	for _, p := range order {
		if _, ok := k.seen[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func (k *knownPartitions) add(ps []partition) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen == nil || len(k.seen)+len(ps) > maxKnownPartitions {
		k.seen = make(map[partition]struct{}, len(ps))
	}
	for _, p := range ps {
		k.seen[p] = struct{}{}
	}
}

// batchPerJob writes n rows, row i of job(i), as one unlogged batch per run
// of rows of one job, writeParallelism batches at a time; add puts row i
// in its batch.
func (s *Store) batchPerJob(ctx context.Context, n int, job func(i int) model.JobID, add func(b *gocql.Batch, i int)) error {
	var starts []int
	for i := range n {
		if i == 0 || job(i) != job(i-1) {
			starts = append(starts, i)
		}
	}
	return parallel(ctx, len(starts), writeParallelism, func(ctx context.Context, k int) error {
		to := n
		if k+1 < len(starts) {
			to = starts[k+1]
		}
		b := s.session.NewBatch(gocql.UnloggedBatch).WithContext(ctx)
		for i := starts[k]; i < to; i++ {
			add(b, i)
		}
		if err := s.session.ExecuteBatch(b); err != nil {
			return s.classify(ctx, err)
		}
		return nil
	})
}

// checkRevisions reads the stored revisions of a partition's tasks (the
// instance range the writes span, sorted by instance) and returns
// ErrConflict naming the first task whose revision differs.
func (s *Store) checkRevisions(ctx context.Context, p partition, writes []*taskWrite) error {
	first, last := int64(writes[0].id.Instance), int64(writes[len(writes)-1].id.Instance)
	stored := make(map[int64]uint64, len(writes))
	iter := s.query(ctx, s.q.taskRevisions, string(p.job), p.incarnation, p.bucket, first, last).PageSize(5000).Iter()
	var instance, rev int64
	for iter.Scan(&instance, &rev) {
		stored[instance] = uint64(rev)
	}
	if err := iter.Close(); err != nil {
		return s.classify(ctx, err)
	}
	for _, w := range writes {
		if rev := stored[int64(w.id.Instance)]; rev != w.expect {
			return fmt.Errorf("task %s: stored revision %d, given %d: %w", w.id, rev, w.expect, store.ErrConflict)
		}
	}
	return nil
}

// writeConditionalBatch applies writes of one partition as one
// conditional batch:
// INSERT ... IF NOT EXISTS for new tasks, UPDATE ... IF revision = ? for
// the others. Cassandra applies all of it or, if any condition fails,
// none of it.
func (s *Store) writeConditionalBatch(ctx context.Context, p partition, writes []*taskWrite) error {
	b := s.session.NewBatch(gocql.LoggedBatch).WithContext(ctx)
	b.SerialConsistency(gocql.LocalSerial)
	buf := make([]byte, 0, 96*len(writes))
	for _, w := range writes {
		rev := w.expect + w.writes
		start := len(buf)
		buf = codec.AppendTask(buf, w.last, rev)
		record := buf[start:len(buf):len(buf)]
		instance := int64(w.id.Instance)
		if w.expect == 0 {
			b.Query(s.q.insertTask, string(p.job), p.incarnation, p.bucket, instance, int64(rev), record)
		} else {
			b.Query(s.q.updateTask, int64(rev), record, string(p.job), p.incarnation, p.bucket, instance, int64(w.expect))
		}
	}
	prev := map[string]any{}
	applied, iter, err := s.session.MapExecuteBatchCAS(b, prev)
	if err != nil {
		return s.classify(ctx, err)
	}
	if applied {
		return iter.Close()
	}
	// The rows Cassandra returns hold the current revision of the
	// batch's existing rows; a task with no row has revision 0.
	stored := map[int64]uint64{}
	for {
		if inst, ok := prev["instance"].(int64); ok {
			rev, _ := prev["revision"].(int64)
			stored[inst] = uint64(rev)
		}
		prev = map[string]any{}
		if !iter.MapScan(prev) {
			break
		}
	}
	if err := iter.Close(); err != nil {
		return s.classify(ctx, err)
	}
	for _, w := range writes {
		if rev := stored[int64(w.id.Instance)]; rev != w.expect {
			return fmt.Errorf("task %s: stored revision %d, given %d: %w", w.id, rev, w.expect, store.ErrConflict)
		}
	}
	return fmt.Errorf("task %s: a concurrent write changed the partition: %w", writes[0].id, store.ErrConflict)
}

// GetTask returns a stored task.
func (s *Store) GetTask(ctx context.Context, id model.TaskID) (*model.TaskRuntime, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("task %s: %w", id, err)
	}
	inc, err := s.incarnation(ctx, id.Job)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", id, err)
	}
	var record []byte
	err = s.query(ctx, s.q.getTask, string(id.Job), inc, bucketOf(id.Instance), int64(id.Instance)).Scan(&record)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && record == nil) {
		return nil, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", id, s.classify(ctx, err))
	}
	return codec.DecodeTask(id, record)
}

// listSlabSize is how many runtimes ListTasks allocates at once.
const listSlabSize = 256

// ListTasks returns a job's tasks ordered by instance: its partitions in
// bucket order, each read in pages in instance order.
func (s *Store) ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("tasks of job %s: %w", job, err)
	}
	inc, err := s.incarnation(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("tasks of job %s: %w", job, err)
	}
	var buckets []int
	iter := s.query(ctx, s.q.listTaskPartitions, string(job), inc).Iter()
	var bucket int
	for iter.Scan(&bucket) {
		buckets = append(buckets, bucket)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("tasks of job %s: %w", job, s.classify(ctx, err))
	}
	var (
		tasks    []*model.TaskRuntime
		slab     []model.TaskRuntime
		instance int64
		record   []byte
	)
	for _, b := range buckets {
		iter := s.query(ctx, s.q.listTasks, string(job), inc, b).PageSize(5000).Iter()
		for iter.Scan(&instance, &record) {
			if len(slab) == 0 {
				slab = make([]model.TaskRuntime, listSlabSize)
			}
			t := &slab[0]
			slab = slab[1:]
			id := model.TaskID{Job: job, Instance: uint32(instance)}
			if err := codec.DecodeTaskInto(t, id, record); err != nil {
				iter.Close()
				return nil, fmt.Errorf("tasks of job %s: %w", job, err)
			}
			tasks = append(tasks, t)
		}
		if err := iter.Close(); err != nil {
			return nil, fmt.Errorf("tasks of job %s: %w", job, s.classify(ctx, err))
		}
	}
	return tasks, nil
}
