package cassandra

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// benchDuration is how long each figure is measured for.
const benchDuration = 3 * time.Second

// taskStateWriteRate measures task state changes committed per second:
// batches of batchSize over a job of jobSize tasks, by writers goroutines
// each owning its own job, for at least benchDuration.
func taskStateWriteRate(b *testing.B, s store.Store, prefix string, writers, jobSize, batchSize int) float64 {
	ctx := context.Background()
	jobs := make([][]*model.TaskRuntime, writers)
	for w := range writers {
		id := model.JobID(fmt.Sprintf("%s-%d", prefix, w))
		if err := s.CreateJob(ctx, &model.Job{ID: id, Spec: model.JobSpec{Instances: uint32(jobSize)}}); err != nil {
			b.Fatal(err)
		}
		for first := 0; first < jobSize; first += batchSize {
			batch := make([]*model.TaskRuntime, batchSize)
			for i := range batch {
				batch[i] = storetest.FullTask(model.TaskID{Job: id, Instance: uint32(first + i)})
			}
			if err := s.WriteTasks(ctx, batch); err != nil {
				b.Fatal(err)
			}
			jobs[w] = append(jobs[w], batch...)
		}
	}
	var written atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(benchDuration)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; time.Now().Before(deadline); round++ {
				first := round * batchSize % jobSize
				batch := jobs[w][first : first+batchSize]
				for _, t := range batch {
					t.State = model.TaskState(1 + round%5)
					t.Reason = "bench"
					t.UpdateTime = time.Now()
				}
				if err := s.WriteTasks(ctx, batch); err != nil {
					b.Error(err)
					return
				}
				written.Add(int64(len(batch)))
			}
		}()
	}
	wg.Wait()
	return float64(written.Load()) / time.Since(start).Seconds()
}

// jobCreateRate measures CreateJob calls per second by writers goroutines
// for at least benchDuration; each job carries a full spec.
func jobCreateRate(b *testing.B, s store.Store, prefix string, writers int) float64 {
	ctx := context.Background()
	var created atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(benchDuration)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				job := storetest.FullJob(model.JobID(fmt.Sprintf("%s-%d-%d", prefix, w, i)))
				if err := s.CreateJob(ctx, job); err != nil {
					b.Error(err)
					return
				}
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(created.Load()) / time.Since(start).Seconds()
}

// BenchmarkBackends prints task-state writes/s and job-create/s for the
// embedded store (the baseline) and Cassandra side by side, measured in
// the same run, with Cassandra's ratio to the baseline. It needs
// PELOTON_TEST_CASSANDRA; run it with -benchtime=1x (each figure is
// measured for benchDuration whatever b.N is).
func BenchmarkBackends(b *testing.B) {
	cfg := testConfig(b, uniqueKeyspace("peloton_bench"))
	cfg.Migrate = true
	dropKeyspace(b, cfg)
	ctx := context.Background()
	cs, err := Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	bs, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer bs.Close()

	type figure struct {
		name        string
		measure     func(s store.Store, prefix string) float64
		bolt, cassa float64
	}
	figures := []*figure{
		{name: "task-state writes/s, batches of 1,000, 1 writer", measure: func(s store.Store, p string) float64 {
			return taskStateWriteRate(b, s, p, 1, 10_000, 1_000)
		}},
		{name: "task-state writes/s, batches of 1,000, 4 writers", measure: func(s store.Store, p string) float64 {
			return taskStateWriteRate(b, s, p, 4, 10_000, 1_000)
		}},
		{name: "task-state writes/s, batches of 1, 16 writers", measure: func(s store.Store, p string) float64 {
			return taskStateWriteRate(b, s, p, 16, 100, 1)
		}},
		{name: "job-create/s, 1 writer", measure: func(s store.Store, p string) float64 {
			return jobCreateRate(b, s, p, 1)
		}},
		{name: "job-create/s, 16 writers", measure: func(s store.Store, p string) float64 {
			return jobCreateRate(b, s, p, 16)
		}},
	}
	for range b.N {
		for i, f := range figures {
			prefix := fmt.Sprintf("f%d-%d", i, time.Now().UnixNano())
			f.bolt = f.measure(bs, prefix)
			f.cassa = f.measure(cs, prefix)
		}
	}
	b.Logf("%-50s %12s %12s %10s", "figure", "boltstore", "cassandra", "ratio c/b")
	for _, f := range figures {
		b.Logf("%-50s %12.0f %12.0f %9.2fx", f.name, f.bolt, f.cassa, f.cassa/f.bolt)
	}
	b.ReportMetric(figures[0].cassa, "cassandra-task-writes/s")
	b.ReportMetric(figures[0].bolt, "bolt-task-writes/s")
	b.ReportMetric(figures[3].cassa, "cassandra-job-creates/s")
	b.ReportMetric(figures[3].bolt, "bolt-job-creates/s")
}
