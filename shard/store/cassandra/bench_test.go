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
	"github.com/peloton-federated/peloton/shard/store/codec"
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
	return rate(b, writers, func(w, round int) (int, error) {
		first := round * batchSize % jobSize
		batch := jobs[w][first : first+batchSize]
		for _, t := range batch {
			t.State = model.TaskState(1 + round%5)
			t.Reason = "bench"
			t.UpdateTime = time.Now()
		}
		return len(batch), s.WriteTasks(ctx, batch)
	})
}

// rate runs step(writer, round) for rounds 0, 1, ... in writers goroutines
// for at least benchDuration and returns how many things per second the
// steps say they did.
func rate(b *testing.B, writers int, step func(w, round int) (int, error)) float64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(benchDuration)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; time.Now().Before(deadline); round++ {
				n, err := step(w, round)
				if err != nil {
					b.Error(err)
					return
				}
				done.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

// jobCreateRate measures CreateJob calls per second by writers goroutines
// for at least benchDuration; each job carries a full spec.
func jobCreateRate(b *testing.B, s store.Store, prefix string, writers int) float64 {
	ctx := context.Background()
	return rate(b, writers, func(w, i int) (int, error) {
		return 1, s.CreateJob(ctx, storetest.FullJob(model.JobID(fmt.Sprintf("%s-%d-%d", prefix, w, i))))
	})
}

// eventAppendRate measures events appended per second in calls of
// perCall task events, by writers goroutines each appending to its own
// job (100,000 instances, ten partitions), for at least benchDuration.
func eventAppendRate(b *testing.B, s store.Store, prefix string, writers, perCall int) float64 {
	ctx := context.Background()
	return rate(b, writers, func(w, call int) (int, error) {
		job := model.JobID(fmt.Sprintf("%s-%d", prefix, w))
		events := make([]model.Event, perCall)
		for i := range events {
			n := call*perCall + i
			task := storetest.FullTask(model.TaskID{Job: job, Instance: uint32(n % 100_000)})
			events[i] = model.Event{Seq: 1_800_000_000_000_000 + uint64(n), Time: time.Now(), Job: job, Task: task}
		}
		return perCall, s.AppendEvents(ctx, events, time.Hour)
	})
}

// configFigures are the costs of a job with an override per instance.
type configFigures struct {
	store, load, cachedLoad time.Duration
}

// overrideConfigTimes stores a job of 100,000 instances with an override
// each (CreateJob), loads it (the first GetJob decodes it) and loads it
// again (from the cache of decoded configs), rounds times, and returns
// the mean of each.
func overrideConfigTimes(b *testing.B, s store.Store, prefix string, rounds int) configFigures {
	ctx := context.Background()
	spec := storetest.OverrideSpec(100_000)
	var f configFigures
	for r := range rounds {
		id := model.JobID(fmt.Sprintf("%s-%d", prefix, r))
		t0 := time.Now()
		if err := s.CreateJob(ctx, &model.Job{ID: id, Spec: *spec}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := s.GetJob(ctx, id); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := s.GetJob(ctx, id); err != nil {
			b.Fatal(err)
		}
		f.store += t1.Sub(t0)
		f.load += t2.Sub(t1)
		f.cachedLoad += time.Since(t2)
	}
	f.store /= time.Duration(rounds)
	f.load /= time.Duration(rounds)
	f.cachedLoad /= time.Duration(rounds)
	return f
}

// BenchmarkBackends prints task-state writes/s, job-create/s and event
// appends/s for the embedded store (the baseline) and Cassandra side by
// side, measured in the same run, with Cassandra's ratio to the baseline;
// then the time to store and load a job of 100,000 instances with an
// override each, and its stored size. It needs
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
		{name: "event appends/s, calls of 5,000, 1 writer", measure: func(s store.Store, p string) float64 {
			return eventAppendRate(b, s, p, 1, 5_000)
		}},
		{name: "event appends/s, calls of 5,000, 4 writers", measure: func(s store.Store, p string) float64 {
			return eventAppendRate(b, s, p, 4, 5_000)
		}},
	}
	var boltConfig, cassaConfig configFigures
	for range b.N {
		for i, f := range figures {
			prefix := fmt.Sprintf("f%d-%d", i, time.Now().UnixNano())
			f.bolt = f.measure(bs, prefix)
			f.cassa = f.measure(cs, prefix)
		}
		prefix := fmt.Sprintf("overrides-%d", time.Now().UnixNano())
		boltConfig = overrideConfigTimes(b, bs, prefix, 3)
		cassaConfig = overrideConfigTimes(b, cs, prefix, 3)
	}
	b.Logf("%-50s %12s %12s %10s", "figure", "boltstore", "cassandra", "ratio c/b")
	for _, f := range figures {
		b.Logf("%-50s %12.0f %12.0f %9.2fx", f.name, f.bolt, f.cassa, f.cassa/f.bolt)
	}
	config, err := codec.EncodeConfig(storetest.OverrideSpec(100_000))
	if err != nil {
		b.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 }
	b.Logf("100,000-override config: %d bytes stored (%d chunks of at most %d in Cassandra)",
		len(config), (len(config)+ConfigChunkSize-1)/ConfigChunkSize, ConfigChunkSize)
	for _, row := range []struct {
		name        string
		bolt, cassa time.Duration
	}{
		{"100,000-override config: store (CreateJob), ms", boltConfig.store, cassaConfig.store},
		{"100,000-override config: load (GetJob), ms", boltConfig.load, cassaConfig.load},
		{"100,000-override config: cached load, ms", boltConfig.cachedLoad, cassaConfig.cachedLoad},
	} {
		b.Logf("%-50s %12.1f %12.1f %9.2fx", row.name, ms(row.bolt), ms(row.cassa), ms(row.cassa)/ms(row.bolt))
	}
	b.ReportMetric(figures[0].cassa, "cassandra-task-writes/s")
	b.ReportMetric(figures[0].bolt, "bolt-task-writes/s")
	b.ReportMetric(figures[3].cassa, "cassandra-job-creates/s")
	b.ReportMetric(figures[3].bolt, "bolt-job-creates/s")
	b.ReportMetric(figures[5].cassa, "cassandra-event-appends/s")
	b.ReportMetric(figures[5].bolt, "bolt-event-appends/s")
	b.ReportMetric(ms(cassaConfig.store+cassaConfig.load), "cassandra-override-config-store+load-ms")
	b.ReportMetric(ms(boltConfig.store+boltConfig.load), "bolt-override-config-store+load-ms")
	b.ReportMetric(float64(len(config)), "override-config-bytes")
}
