package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// pausedStore is a store whose backend can stop answering, as a paused
// Cassandra node does: every call waits for the driver's timeout, then
// fails as unavailable.
type pausedStore struct {
	*memstore.Store
	timeout time.Duration
	paused  atomic.Bool
	failed  atomic.Int64 // calls refused while paused
}

func (s *pausedStore) wait(ctx context.Context) error {
	if !s.paused.Load() {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.timeout):
	}
	s.failed.Add(1)
	return fmt.Errorf("paused: %w", store.ErrUnavailable)
}

func (s *pausedStore) WriteTasks(ctx context.Context, ts []*model.TaskRuntime) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.WriteTasks(ctx, ts)
}

func (s *pausedStore) WritePass(ctx context.Context, p store.Pass) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.WritePass(ctx, p)
}

func (s *pausedStore) UpdateJob(ctx context.Context, j *model.Job) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.UpdateJob(ctx, j)
}

func (s *pausedStore) CreateJob(ctx context.Context, j *model.Job) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.CreateJob(ctx, j)
}

func (s *pausedStore) CreateJobs(ctx context.Context, js []*model.Job) []error {
	if err := s.wait(ctx); err != nil {
		errs := make([]error, len(js))
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	return s.Store.CreateJobs(ctx, js)
}

func (s *pausedStore) GetRecord(ctx context.Context, t *store.Table, key string) ([]byte, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.GetRecord(ctx, t, key)
}

func (s *pausedStore) AppendEvents(ctx context.Context, evs []model.Event, ttl time.Duration) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.AppendEvents(ctx, evs, ttl)
}

// While the store does not answer, the loop stops holding the engine's
// lock through failed writes: reads are served at once (only the pass
// that found the outage waited for the store). A create is refused as
// unavailable. Once the store answers again, the loop resumes by itself
// and the job finishes with what it ran during the outage persisted.
func TestStoreOutageKeepsReadsServedAndResumes(t *testing.T) {
	st := &pausedStore{Store: memstore.New(), timeout: 300 * time.Millisecond}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestShardOn(t, st, clk, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	spec := oneCore(4)
	spec.Task.Env = map[string]string{sim.EnvDuration: "1s"}
	job := s.create(spec)
	s.until("4 tasks running", func() bool { return s.count(job, model.TaskRunning) == 4 })

	st.paused.Store(true)
	// The runs end; the pass that records it finds the store paused.
	s.clk.Advance(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for st.failed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no write reached the paused store")
		}
		s.tick()
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(2 * st.timeout) // that pass gives up
	if _, err := Do(context.Background(), s.e, CreateJob{Spec: oneCore(1)}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("create during the outage: %v, want unavailable", err)
	}

	// Reads while the loop probes the store (each probe waits its timeout).
	var slowest time.Duration
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.clk.Advance(maxProbeWait)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	probes := st.failed.Load()
	for i := 0; i < 40 || st.failed.Load() < probes+3; i++ {
		start := time.Now()
		if _, err := s.e.Reads().GetJob(job); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
		time.Sleep(20 * time.Millisecond)
		if i > 1000 {
			t.Fatal("the loop did not probe the store")
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("slowest read during the outage: %v (the store's timeout is %v); %d calls refused by the paused store",
		slowest, st.timeout, st.failed.Load())
	if slowest > st.timeout/2 {
		t.Errorf("a read waited %v during the outage: the loop held the lock through a failed write", slowest)
	}

	st.paused.Store(false)
	var stored []*model.TaskRuntime
	s.until("the job's end stored", func() bool {
		var err error
		stored, err = st.Store.ListTasks(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		j, err := st.Store.GetJob(context.Background(), job)
		return err == nil && j.Status.State == model.JobSucceeded
	})
	for _, tk := range stored {
		if tk.State != model.TaskSucceeded || tk.Run != 1 {
			t.Errorf("stored task %d: %s run %d, want SUCCEEDED run 1", tk.ID.Instance, tk.State, tk.Run)
		}
	}
}
