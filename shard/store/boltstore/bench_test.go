package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// benchStore opens a store holding job "bench" with n stored tasks and
// returns them, ready to be written again.
func benchStore(b *testing.B, n int) (*Store, []*model.TaskRuntime) {
	b.Helper()
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateJob(ctx, storetest.FullJob("bench")); err != nil {
		b.Fatal(err)
	}
	tasks := make([]*model.TaskRuntime, n)
	for i := range tasks {
		tasks[i] = storetest.FullTask(model.TaskID{Job: "bench", Instance: uint32(i)})
	}
	for first := 0; first < n; first += 10_000 {
		if err := s.WriteTasks(ctx, tasks[first:min(n, first+10_000)]); err != nil {
			b.Fatal(err)
		}
	}
	return s, tasks
}

// changeState makes the kind of change the job manager writes on a task
// event: new state, reason, message and update time.
func changeState(t *model.TaskRuntime, round int) {
	t.State = model.TaskState(1 + round%int(model.TaskLost))
	t.Reason = model.ReasonRetrying
	t.Message = fmt.Sprint("event ", round)
	t.UpdateTime = time.Unix(1_700_000_000, int64(round))
}

func writesPerSecond(writes int, d time.Duration) float64 {
	return float64(writes) / d.Seconds()
}

// oneTxPerTaskRate is the baseline: writes/s when every task write is its
// own transaction (and its own fsync). It warms the file up first and runs
// for at least 300 writes and half a second, since single fsyncs are noisy.
func oneTxPerTaskRate(b *testing.B) float64 {
	b.Helper()
	ctx := context.Background()
	s, tasks := benchStore(b, 100)
	write := func(round int) {
		t := tasks[round%len(tasks)]
		changeState(t, round)
		if err := s.WriteTasks(ctx, []*model.TaskRuntime{t}); err != nil {
			b.Fatal(err)
		}
	}
	for round := range 50 {
		write(round)
	}
	start := time.Now()
	writes := 0
	for ; writes < 300 || time.Since(start) < 500*time.Millisecond; writes++ {
		write(writes)
	}
	return writesPerSecond(writes, time.Since(start))
}

// BenchmarkWriteTasks measures committed task writes per second for batch
// sizes 1, 100 and 10,000, each against one transaction per task measured
// in the same run (so batch=1 shows the noise: its ratio should be ~1).
func BenchmarkWriteTasks(b *testing.B) {
	baseline := oneTxPerTaskRate(b)
	b.Logf("baseline, one transaction per task: %.0f writes/s", baseline)
	for _, size := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			ctx := context.Background()
			s, tasks := benchStore(b, size)
			round := 0
			for b.Loop() {
				round++
				for _, t := range tasks {
					changeState(t, round)
				}
				if err := s.WriteTasks(ctx, tasks); err != nil {
					b.Fatal(err)
				}
			}
			rate := writesPerSecond(size*b.N, b.Elapsed())
			b.ReportMetric(rate, "writes/s")
			b.ReportMetric(rate/baseline, "x-vs-tx-per-task")
		})
	}
}

// jsonTaskStore is the baseline for BenchmarkTaskStateWrites: the same
// layout, the same batching and compare-and-set, but each runtime stored as
// encoding/json.
type jsonTaskStore struct{ db *bolt.DB }

func (j jsonTaskStore) writeTasks(tasks []*model.TaskRuntime) error {
	err := j.db.Update(func(tx *bolt.Tx) error {
		bucket, err := tx.CreateBucketIfNotExists([]byte(tasks[0].ID.Job))
		if err != nil {
			return err
		}
		for _, t := range tasks {
			key := binary.BigEndian.AppendUint32(nil, t.ID.Instance)
			var stored uint64
			if old := bucket.Get(key); old != nil {
				var prev model.TaskRuntime
				if err := json.Unmarshal(old, &prev); err != nil {
					return err
				}
				stored = prev.Revision
			}
			if stored != t.Revision {
				return fmt.Errorf("task %s: %w", t.ID, store.ErrConflict)
			}
			next := *t
			next.Revision++
			value, err := json.Marshal(&next)
			if err != nil {
				return err
			}
			if err := bucket.Put(key, value); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, t := range tasks {
			t.Revision++
		}
	}
	return err
}

func (j jsonTaskStore) listTasks(job model.JobID) ([]*model.TaskRuntime, error) {
	var tasks []*model.TaskRuntime
	err := j.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(job)).ForEach(func(_, v []byte) error {
			t := new(model.TaskRuntime)
			if err := json.Unmarshal(v, t); err != nil {
				return err
			}
			tasks = append(tasks, t)
			return nil
		})
	})
	return tasks, err
}

// BenchmarkTaskStateWrites measures task state changes committed per
// second in batches of 1,000 over a job of 10,000 tasks, against the same
// store layout with JSON-encoded values, measured in the same run.
func BenchmarkTaskStateWrites(b *testing.B) {
	const jobSize, batchSize = 10_000, 1_000
	ctx := context.Background()

	db, err := bolt.Open(filepath.Join(b.TempDir(), "json.db"), 0o600, &bolt.Options{
		FreelistType: bolt.FreelistMapType, NoFreelistSync: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	baselineStore := jsonTaskStore{db: db}
	jsonTasks := make([]*model.TaskRuntime, jobSize)
	for i := range jsonTasks {
		jsonTasks[i] = storetest.FullTask(model.TaskID{Job: "bench", Instance: uint32(i)})
	}
	if err := baselineStore.writeTasks(jsonTasks); err != nil {
		b.Fatal(err)
	}
	const baselineRounds = 20
	start := time.Now()
	for round := range baselineRounds {
		first := round * batchSize % jobSize
		batch := jsonTasks[first : first+batchSize]
		for _, t := range batch {
			changeState(t, round)
		}
		if err := baselineStore.writeTasks(batch); err != nil {
			b.Fatal(err)
		}
	}
	baseline := writesPerSecond(baselineRounds*batchSize, time.Since(start))

	s, tasks := benchStore(b, jobSize)
	round := 0
	for b.Loop() {
		first := round * batchSize % jobSize
		batch := tasks[first : first+batchSize]
		for _, t := range batch {
			changeState(t, round)
		}
		if err := s.WriteTasks(ctx, batch); err != nil {
			b.Fatal(err)
		}
		round++
	}
	rate := writesPerSecond(b.N*batchSize, b.Elapsed())
	b.ReportMetric(rate, "writes/s")
	b.ReportMetric(baseline, "json-writes/s")
	b.ReportMetric(rate/baseline, "x-vs-json")
}

// BenchmarkTaskCodec measures encoding plus decoding one runtime, against
// encoding/json in the same run, and the size of each encoding.
func BenchmarkTaskCodec(b *testing.B) {
	task := storetest.FullTask(model.TaskID{Job: "bench", Instance: 12345})
	task.Revision = 7
	const baselineRounds = 20_000
	start := time.Now()
	var jsonSize int
	for range baselineRounds {
		value, err := json.Marshal(task)
		if err != nil {
			b.Fatal(err)
		}
		var back model.TaskRuntime
		if err := json.Unmarshal(value, &back); err != nil {
			b.Fatal(err)
		}
		jsonSize = len(value)
	}
	baselineNs := float64(time.Since(start).Nanoseconds()) / baselineRounds

	var size int
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = appendTask(buf[:0], task, task.Revision)
		if _, err := decodeTask(task.ID, buf); err != nil {
			b.Fatal(err)
		}
		size = len(buf)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64(size), "bytes/task")
	b.ReportMetric(float64(jsonSize), "json-bytes/task")
	b.ReportMetric(baselineNs, "json-ns/op")
	b.ReportMetric(baselineNs/ns, "x-vs-json")
}

// BenchmarkListTasks measures reading back a job of 10,000 tasks (what a
// new leader does for every job), against the JSON layout in the same run.
func BenchmarkListTasks(b *testing.B) {
	const jobSize = 10_000
	db, err := bolt.Open(filepath.Join(b.TempDir(), "json.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	baselineStore := jsonTaskStore{db: db}
	jsonTasks := make([]*model.TaskRuntime, jobSize)
	for i := range jsonTasks {
		jsonTasks[i] = storetest.FullTask(model.TaskID{Job: "bench", Instance: uint32(i)})
	}
	if err := baselineStore.writeTasks(jsonTasks); err != nil {
		b.Fatal(err)
	}
	const baselineRounds = 5
	start := time.Now()
	for range baselineRounds {
		if got, err := baselineStore.listTasks("bench"); err != nil || len(got) != jobSize {
			b.Fatalf("json list: %d tasks, %v", len(got), err)
		}
	}
	baseline := writesPerSecond(baselineRounds*jobSize, time.Since(start))

	ctx := context.Background()
	s, _ := benchStore(b, jobSize)
	for b.Loop() {
		if got, err := s.ListTasks(ctx, "bench"); err != nil || len(got) != jobSize {
			b.Fatalf("list: %d tasks, %v", len(got), err)
		}
	}
	rate := writesPerSecond(b.N*jobSize, b.Elapsed())
	b.ReportMetric(rate, "tasks/s")
	b.ReportMetric(baseline, "json-tasks/s")
	b.ReportMetric(rate/baseline, "x-vs-json")
}

// benchEvents returns n task events of job "bench" numbered from first,
// spread over 10,000 instances.
func benchEvents(first uint64, n int) []model.Event {
	events := make([]model.Event, n)
	now := time.Now()
	for i := range events {
		task := storetest.FullTask(model.TaskID{Job: "bench", Instance: uint32(i % 10_000)})
		events[i] = model.Event{Seq: first + uint64(i), Time: now, Job: "bench", Task: task}
	}
	return events
}

// BenchmarkAppendEvents measures events appended per second in calls of
// 5,000 (what a pass of the job manager writes), against writing the
// same number of task runtimes in one WriteTasks call, measured in the
// same run.
func BenchmarkAppendEvents(b *testing.B) {
	const perCall = 5_000
	ctx := context.Background()
	s, tasks := benchStore(b, perCall)
	const baselineRounds = 10
	start := time.Now()
	for round := range baselineRounds {
		for _, t := range tasks {
			changeState(t, round)
		}
		if err := s.WriteTasks(ctx, tasks); err != nil {
			b.Fatal(err)
		}
	}
	baseline := writesPerSecond(baselineRounds*perCall, time.Since(start))

	seq := uint64(1_800_000_000_000_000)
	for b.Loop() {
		if err := s.AppendEvents(ctx, benchEvents(seq, perCall), time.Hour); err != nil {
			b.Fatal(err)
		}
		seq += perCall
	}
	rate := writesPerSecond(b.N*perCall, b.Elapsed())
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(baseline, "task-writes/s")
	b.ReportMetric(rate/baseline, "x-vs-task-writes")
}

// BenchmarkOverrideConfig stores and loads a job of 100,000 instances with
// an override each: the time to store it (CreateJob), to load it cold
// (GetJob decoding it) and warm (from the cache of decoded configs), and
// its stored size, against encoding/json of the same spec in the same run.
func BenchmarkOverrideConfig(b *testing.B) {
	ctx := context.Background()
	spec := storetest.OverrideSpec(100_000)
	start := time.Now()
	raw, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	var back model.JobSpec
	if err := json.Unmarshal(raw, &back); err != nil {
		b.Fatal(err)
	}
	jsonTime := time.Since(start)

	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	config, err := codec.EncodeConfig(spec)
	if err != nil {
		b.Fatal(err)
	}
	var store, cold, warm time.Duration
	i := 0
	for b.Loop() {
		id := model.JobID(fmt.Sprint("overrides-", i))
		i++
		start := time.Now()
		if err := s.CreateJob(ctx, &model.Job{ID: id, Spec: *spec}); err != nil {
			b.Fatal(err)
		}
		stored := time.Now()
		s.specs.Forget(id)
		if _, err := s.GetJob(ctx, id); err != nil {
			b.Fatal(err)
		}
		loaded := time.Now()
		if _, err := s.GetJob(ctx, id); err != nil {
			b.Fatal(err)
		}
		store += stored.Sub(start)
		cold += loaded.Sub(stored)
		warm += time.Since(loaded)
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(config)), "stored-bytes")
	b.ReportMetric(float64(len(raw)), "json-bytes")
	b.ReportMetric(store.Seconds()*1000/n, "store-ms")
	b.ReportMetric(cold.Seconds()*1000/n, "load-ms")
	b.ReportMetric(warm.Seconds()*1000/n, "cached-load-ms")
	b.ReportMetric(jsonTime.Seconds()*1000, "json-roundtrip-ms")
	b.ReportMetric((store+cold).Seconds()*1000/n/(jsonTime.Seconds()*1000), "x-store+load-vs-json")
}
