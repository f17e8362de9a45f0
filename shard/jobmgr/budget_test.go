package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// batchStore records the largest batch of tasks written at once.
type batchStore struct {
	*memstore.Store
	mu      sync.Mutex
	largest int
}

func (s *batchStore) WriteTasks(ctx context.Context, ts []*model.TaskRuntime) error {
	s.note(len(ts))
	return s.Store.WriteTasks(ctx, ts)
}

func (s *batchStore) WritePass(ctx context.Context, p store.Pass) error {
	s.note(len(p.Tasks))
	return s.Store.WritePass(ctx, p)
}

func (s *batchStore) note(n int) {
	s.mu.Lock()
	s.largest = max(s.largest, n)
	s.mu.Unlock()
}

func (s *batchStore) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.largest
	s.largest = 0
	return n
}

// A pass creates, and stops, at most CreateBatch tasks over every job: jobs
// that arrive together, or a huge job stopped, are written in bounded
// batches, the next pass following at once.
func TestPassesChangeBoundedBatches(t *testing.T) {
	st := &batchStore{Store: memstore.New()}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Cluster: "sim", Hosts: []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 1000, MemMB: 1000}}}, Clock: clk, DefaultDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 100
	e := New(Config{Region: "test", Store: st, Plugins: []hostmgr.Plugin{p}, Clock: clk, CreateBatch: batch, EventRetention: 10 * 365 * 24 * time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-e.Ready()

	var jobs []model.JobID
	for range 5 {
		spec := oneCore(300) // one runs, the rest wait
		spec.Pool, spec.Type, spec.MaxAttempts = core.RootPool, model.JobBatch, 1
		j, err := Do(ctx, e, CreateJob{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.ID)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never reached: %s", what)
			}
			time.Sleep(5 * time.Millisecond) // passes come at once while work is left: no tick needed
		}
	}
	created := func() int {
		n := 0
		for _, id := range jobs {
			j, _ := e.Reads().GetJob(id)
			n += int(j.Status.TasksCreated)
		}
		return n
	}
	waitUntil("every task created", func() bool { return created() == 1500 })
	if n := st.take(); n > batch+len(jobs) {
		t.Errorf("a pass wrote %d tasks while creating, want at most %d (and a few of other jobs' changes)", n, batch)
	}
	if _, err := Do(ctx, e, StopJob{ID: jobs[0]}); err != nil {
		t.Fatal(err)
	}
	waitUntil("the stopped job killed", func() bool {
		j, _ := e.Reads().GetJob(jobs[0])
		return j.Status.State == model.JobKilled
	})
	if n := st.take(); n > batch+len(jobs) {
		t.Errorf("a pass wrote %d tasks while stopping a job of 300, want at most about %d", n, batch)
	}
}
