package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
)

// BenchmarkEndedTaskMemory measures the job manager's heap for a running
// job of 100,000 tasks of which 90% have ended (a big batch job's long
// tail), with ended tasks read
// from the store (the default) against keeping every task in memory (the
// baseline), in the same run. Run with -benchtime=1x.
func BenchmarkEndedTaskMemory(b *testing.B) {
	n := uint32(100_000)
	var base float64
	for _, keep := range []bool{true, false} {
		heap := endedTaskHeap(b, n, keep)
		name := "ended tasks read from the store"
		if keep {
			name, base = "every task in memory (baseline)", heap
		}
		fmt.Printf("%-36s %8.1f MB for %d tasks (%.0f B per task)\n", name, heap/1e6, n, heap/float64(n))
		if !keep {
			fmt.Printf("%-36s %8.2fx\n", "heap against the baseline", heap/base)
			b.ReportMetric(heap/1e6, "MB")
			b.ReportMetric(heap/base, "x-baseline")
		}
	}
}

// endedTaskHeap runs a job of n tasks on the bbolt store and simulated
// hosts until 90% have succeeded, and returns how much the heap grew.
func endedTaskHeap(b *testing.B, n uint32, keep bool) float64 {
	b.Helper()
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "peloton.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p, err := sim.New(sim.Config{Cluster: "sim", DefaultDuration: time.Hour,
		Generate: sim.Generator{Count: 100, Shape: model.Resources{MilliCPU: 1000000, MemMB: 1 << 20}}})
	if err != nil {
		b.Fatal(err)
	}
	e := New(Config{Region: "bench", Store: st, Plugins: []hostmgr.Plugin{p}, KeepEndedTasks: keep})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	<-e.Ready()
	before := heapInUse()
	ended := n / 10 * 9
	spec := model.JobSpec{Name: "half", Type: model.JobBatch, Pool: core.RootPool, Instances: n, MaxAttempts: 1,
		Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 10, MemMB: 1}},
		Overrides: []model.InstanceOverride{{
			Instances: []model.InstanceRange{{From: 0, To: ended - 1}},
			Task:      model.TaskSpec{Env: map[string]string{sim.EnvDuration: "1s"}},
		}}}
	j, err := Do(ctx, e, CreateJob{Spec: spec})
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		got, err := e.Reads().GetJob(j.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.Status.TaskStates[model.TaskSucceeded] == ended && got.Status.TaskStates[model.TaskRunning] == n-ended {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("90%% of the job never ended: %v", got.Status.TaskStates)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Let the pass that wrote the last successes finish.
	time.Sleep(500 * time.Millisecond)
	e.lock()
	cold := e.c.Jobs[j.ID].Cold
	e.mu.Unlock()
	if want := int(ended); !keep && cold != want {
		b.Fatalf("%d ended tasks left memory, want %d", cold, want)
	}
	return heapInUse() - before
}

func heapInUse() float64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse)
}
