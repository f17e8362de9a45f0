package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// gatedStore holds every task write until the test lets it through.
type gatedStore struct {
	*memstore.Store
	entered chan struct{}
	gate    chan struct{}
}

func (s *gatedStore) WriteTasks(ctx context.Context, ts []*model.TaskRuntime) error {
	if err := s.hold(ctx); err != nil {
		return err
	}
	return s.Store.WriteTasks(ctx, ts)
}

// WritePass holds a pass that writes tasks, as WriteTasks does.
func (s *gatedStore) WritePass(ctx context.Context, p store.Pass) error {
	if len(p.Tasks) > 0 {
		if err := s.hold(ctx); err != nil {
			return err
		}
	}
	return s.Store.WritePass(ctx, p)
}

func (s *gatedStore) hold(ctx context.Context) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// While a pass writes, the engine's state is not locked: reads answer at
// once and an API change is made (and waits only for the write of the
// pass that takes it); the events of the held write are published only
// once it landed.
func TestReadsDoNotWaitForThePassWrite(t *testing.T) {
	st := &gatedStore{Store: memstore.New(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	close(st.gate) // writes go through while the shard starts
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestShardOn(t, st, clk, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	job := s.create(oneCore(2))
	s.until("2 running", func() bool { return s.count(job, model.TaskRunning) == 2 })

	st.gate = make(chan struct{}) // the loop is idle: the next pass's task write waits
	<-st.entered                  // drop a stale signal, if any
	other := s.create(oneCore(1))
	s.tick()
	select {
	case <-st.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no pass wrote the new job's tasks")
	}
	sub, _, err := s.e.Reads().Watch(other, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel()

	start := time.Now()
	if _, err := s.e.Reads().GetJob(job); err != nil {
		t.Fatal(err)
	}
	if _, err := s.e.Reads().ListTasks(other, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("reads took %v while a pass's write was held", d)
	}
	// A job read shows what is stored: not the tasks the held pass made.
	if j, err := s.e.Reads().GetJob(other); err != nil || len(j.Status.TaskStates) != 0 {
		t.Fatalf("the job's tasks shown before the write that made them landed: %+v %v", j, err)
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("an event of a write not yet done was published: %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
	stopped := make(chan error, 1)
	go func() { _, err := Do(context.Background(), s.e, StopJob{ID: job}); stopped <- err }()
	select {
	case err := <-stopped:
		t.Fatalf("a stop was answered (%v) before any write stored it", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(st.gate)
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if j, err := s.e.Reads().GetJob(other); err != nil || j.Status.TaskStates[model.TaskInitialized]+j.Status.TaskStates[model.TaskPending]+j.Status.TaskStates[model.TaskPlaced]+j.Status.TaskStates[model.TaskLaunching]+j.Status.TaskStates[model.TaskRunning] != 1 {
		t.Fatalf("the job's task once its write landed: %+v %v", j, err)
	}
	if j, _ := s.e.Reads().GetJob(job); !j.Status.Killed {
		t.Fatalf("a stop answered is not shown: %+v", j.Status)
	}
	stored, err := st.Store.GetJob(context.Background(), job)
	if err != nil || !stored.Status.Killed {
		t.Fatalf("stop answered before it was stored: %+v %v", stored, err)
	}
	select {
	case <-sub.C:
	case <-time.After(10 * time.Second):
		t.Fatal("no event of the new job after its write landed")
	}
}

// A change whose write fails is answered as not stored (never as done);
// the engine keeps it and writes it again with its next pass, so the
// store comes in line with what it holds once it answers.
func TestAChangeWhoseWriteFailedIsNotAnsweredAsDone(t *testing.T) {
	st := &pausedStore{Store: memstore.New(), timeout: 50 * time.Millisecond}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestShardOn(t, st, clk, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	job := s.create(oneCore(2))
	s.until("2 running", func() bool { return s.count(job, model.TaskRunning) == 2 })

	st.paused.Store(true)
	_, err := Do(context.Background(), s.e, StopJob{ID: job})
	if !errors.Is(err, ErrNotStored) || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("stop while the store is down: %v, want not stored and unavailable", err)
	}
	if j, _ := st.Store.GetJob(context.Background(), job); j.Status.Killed {
		t.Fatal("the store has the stop that failed")
	}
	st.paused.Store(false)
	s.until("the stop stored and carried out", func() bool {
		j, err := st.Store.GetJob(context.Background(), job)
		return err == nil && j.Status.Killed && j.Status.State == model.JobKilled
	})
}

// lateStore lands a copy of the next late passes it is given, then answers
// them with a conflict: an earlier write whose answer was lost and whose
// effect landed after the engine read the stored revisions, as a
// conditional write timed out on Cassandra can.
type lateStore struct {
	*memstore.Store
	late  atomic.Int32
	calls atomic.Int32
}

func (s *lateStore) WritePass(ctx context.Context, p store.Pass) error {
	if len(p.NewJobs) == 0 && !p.Empty() && s.late.Add(-1) >= 0 {
		s.calls.Add(1)
		landed := store.Pass{}
		for _, t := range p.Tasks {
			cp := *t
			landed.Tasks = append(landed.Tasks, &cp)
		}
		for _, j := range p.Jobs {
			cp := *j
			landed.Jobs = append(landed.Jobs, &cp)
		}
		if err := s.Store.WritePass(ctx, landed); err != nil {
			return err
		}
		return fmt.Errorf("a write landed late: %w", store.ErrConflict)
	}
	return s.Store.WritePass(ctx, p)
}

// A pass that meets a conflict takes the stored revisions and is written
// again, more than once: a write that landed after the revisions were
// read does not fail the change as not stored.
func TestAPassThatMeetsConflictsTwiceIsStored(t *testing.T) {
	st := &lateStore{Store: memstore.New()}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestShardOn(t, st, clk, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	job := s.create(oneCore(2))
	s.until("2 running", func() bool { return s.count(job, model.TaskRunning) == 2 })

	st.late.Store(2)
	if _, err := Do(context.Background(), s.e, StopJob{ID: job}); err != nil {
		t.Fatalf("stop whose write met two conflicts: %v", err)
	}
	if n := st.calls.Load(); n != 2 {
		t.Fatalf("%d writes landed late, want 2", n)
	}
	if j, err := st.Store.GetJob(context.Background(), job); err != nil || !j.Status.Killed {
		t.Fatalf("the stop answered is not stored: %+v %v", j, err)
	}
}
