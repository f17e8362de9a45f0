package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// testShard is an engine on the in-memory store and simulated hosts, with a
// fake clock: the loop runs when kicked or when the test advances time.
type testShard struct {
	t      *testing.T
	e      *Engine
	sim    *sim.Plugin
	clk    *clock.Fake
	cancel context.CancelFunc
	done   chan error
}

func newTestShard(t *testing.T, hosts []sim.HostSpec) *testShard {
	t.Helper()
	return newTestShardOn(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), hosts)
}

// newTestShardOn starts an engine on a given store and clock, as a leader
// taking over a region would.
func newTestShardOn(t *testing.T, st store.Store, clk *clock.Fake, hosts []sim.HostSpec) *testShard {
	t.Helper()
	return newTestShardWith(t, st, clk, hosts, nil)
}

// newTestShardWith is newTestShardOn with the engine's config changed by
// tune first.
func newTestShardWith(t *testing.T, st store.Store, clk *clock.Fake, hosts []sim.HostSpec, tune func(*Config)) *testShard {
	t.Helper()
	p, err := sim.New(sim.Config{Cluster: "sim", Hosts: hosts, Clock: clk, DefaultDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Stores expire events by the wall clock, ttl after their time: the
	// fake clock starts in the past, so the retention covers the gap.
	cfg := Config{Region: "test", Store: st, Plugins: []hostmgr.Plugin{p}, Clock: clk,
		EventRetention: 10 * 365 * 24 * time.Hour}
	if tune != nil {
		tune(&cfg)
	}
	e := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	s := &testShard{t: t, e: e, sim: p, clk: clk, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- e.Run(ctx) }()
	t.Cleanup(s.stop)
	<-e.Ready()
	return s
}

// stop ends the engine's run (once).
func (s *testShard) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	if err := <-s.done; err != nil {
		s.t.Errorf("engine: %v", err)
	}
	// No call may leave an engine lock held: once the loop stopped, every
	// lock is free.
	if !s.e.mu.TryLock() {
		s.t.Errorf("the engine's lock is held after its loop stopped, taken at %s", *s.e.mu.site.Load())
		return
	}
	s.e.mu.Unlock()
}

// tick advances the clock by one loop interval, running a pass.
func (s *testShard) tick() { s.clk.Advance(s.e.cfg.Interval) }

// until ticks until cond holds, failing after many passes.
func (s *testShard) until(what string, cond func() bool) {
	s.t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		s.tick()
		time.Sleep(time.Millisecond)
	}
	s.t.Fatalf("never reached: %s", what)
}

func (s *testShard) count(job model.JobID, state model.TaskState) int {
	ts, err := s.e.Reads().ListTasks(job, []model.TaskState{state})
	if err != nil {
		s.t.Fatal(err)
	}
	return len(ts)
}

func (s *testShard) create(spec model.JobSpec) model.JobID {
	s.t.Helper()
	if spec.Pool == "" {
		spec.Pool = core.RootPool
	}
	if spec.MaxAttempts == 0 {
		spec.MaxAttempts = 3
	}
	spec.Type = model.JobBatch
	j, err := Do(context.Background(), s.e, CreateJob{Spec: spec})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.ID
}

func oneCore(n uint32) model.JobSpec {
	return model.JobSpec{Name: "work", Instances: n, Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 1000, MemMB: 10}}}
}

// Revocable tasks run on what is allocated but unused, and are evicted
// (most recently started first) when a host's slack shrinks.
func TestRevocableRunsOnSlackAndIsEvicted(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 10000, MemMB: 1000}}})
	host := model.HostID("sim/h1")
	prod := s.create(oneCore(8))
	s.until("8 ordinary tasks running", func() bool { return s.count(prod, model.TaskRunning) == 8 })

	rev := oneCore(4)
	rev.Revocable, rev.Preemptible = true, true
	r := s.create(rev)
	for i := 0; i < 20; i++ {
		s.tick()
	}
	if n := s.count(r, model.TaskRunning); n != 0 {
		t.Fatalf("%d revocable tasks run with no usage measured (no slack)", n)
	}
	// The 8 allocated cores use 2: slack is 6, enough for the 4.
	if err := s.sim.SetUsage(host, model.Resources{MilliCPU: 2000, MemMB: 10}); err != nil {
		t.Fatal(err)
	}
	s.until("4 revocable tasks running on slack", func() bool { return s.count(r, model.TaskRunning) == 4 })
	// Usage rises to 6: slack is 2, so 2 revocable tasks must go.
	if err := s.sim.SetUsage(host, model.Resources{MilliCPU: 6000, MemMB: 10}); err != nil {
		t.Fatal(err)
	}
	s.until("revocable work back within slack", func() bool { return s.count(r, model.TaskRunning) == 2 })
	for i := 0; i < 20; i++ {
		s.tick()
	}
	if n := s.count(r, model.TaskRunning); n != 2 {
		t.Fatalf("%d revocable tasks running with slack for 2", n)
	}
	if n := s.count(prod, model.TaskRunning); n != 8 {
		t.Fatalf("ordinary tasks disturbed: %d running", n)
	}
	evicted := 0
	ts, _ := s.e.Reads().ListTasks(r, nil)
	for _, tk := range ts {
		if tk.Run > 1 {
			evicted++
			if tk.Reason != model.ReasonPreempted {
				t.Errorf("evicted task %s has reason %q", tk.ID, tk.Reason)
			}
		}
	}
	if evicted != 2 {
		t.Fatalf("%d revocable tasks evicted, want 2", evicted)
	}
}

// A gang member that fails restarts the whole gang when the job asks for it;
// otherwise it fails the gang.
func TestGangFailure(t *testing.T) {
	for _, restart := range []bool{true, false} {
		s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
		spec := oneCore(4)
		spec.GangSize, spec.GangRestart, spec.MaxAttempts = 4, restart, 2
		spec.Task.Env = map[string]string{sim.EnvExitCode: "1", sim.EnvDuration: "1m"}
		j := s.create(spec)
		s.until("gang running", func() bool { return s.count(j, model.TaskRunning) == 4 })
		s.clk.Advance(time.Minute)
		if restart {
			s.until("gang restarted", func() bool {
				ts, _ := s.e.Reads().ListTasks(j, nil)
				for _, tk := range ts {
					if tk.Run < 2 {
						return false
					}
				}
				return true
			})
		}
		s.clk.Advance(time.Hour)
		s.until("job failed", func() bool {
			job, _ := s.e.Reads().GetJob(j)
			return job.Status.State == model.JobFailed
		})
	}
}

// A finished job's tasks leave memory and are read from the store; what
// the API shows does not change.
func TestFinishedJobsLeaveMemory(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	spec := oneCore(4)
	spec.Task.Env = map[string]string{sim.EnvDuration: "1m"}
	j := s.create(spec)
	s.until("running", func() bool { return s.count(j, model.TaskRunning) == 4 })
	s.clk.Advance(time.Minute)
	s.until("succeeded", func() bool {
		job, _ := s.e.Reads().GetJob(j)
		return job.Status.State == model.JobSucceeded
	})
	s.tick()
	s.e.lock()
	evicted, inMemory := s.e.c.Jobs[j].Evicted, len(s.e.c.Jobs[j].Tasks)
	s.e.mu.Unlock()
	if !evicted || inMemory != 0 {
		t.Fatalf("finished job still holds %d tasks in memory (evicted=%v)", inMemory, evicted)
	}
	if n := s.count(j, model.TaskSucceeded); n != 4 {
		t.Fatalf("%d succeeded tasks read back, want 4", n)
	}
	if tk, err := s.e.Reads().GetTask(model.TaskID{Job: j, Instance: 2}); err != nil || tk.State != model.TaskSucceeded {
		t.Fatalf("GetTask of a finished job: %+v %v", tk, err)
	}
	job, _ := s.e.Reads().GetJob(j)
	if job.Status.TaskStates[model.TaskSucceeded] != 4 {
		t.Fatalf("counts of a finished job: %v", job.Status.TaskStates)
	}
}

func TestNewJobIDsAreTimeOrdered(t *testing.T) {
	first := NewJobID()
	if len(first) != 36 || first[14] != '7' {
		t.Fatalf("%s is not a UUID of version 7", first)
	}
	seen := map[model.JobID]bool{first: true}
	prev := first
	for range 1000 {
		id := NewJobID()
		if seen[id] {
			t.Fatalf("%s made twice", id)
		}
		seen[id] = true
		// Within one millisecond the order is random; the time prefix
		// never goes back.
		if id[:13] < prev[:13] {
			t.Fatalf("%s made after %s sorts before it", id, prev)
		}
		prev = id
	}
}

// A job stored after the engine loaded the region's jobs (a previous
// leader's late write) is taken in by the retried create that finds it
// stored: answered Existing, it is listed, gets its tasks and runs.
func TestRetriedCreateTakesInAJobStoredLate(t *testing.T) {
	st := memstore.New()
	s := newTestShardOn(t, st, clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		[]sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	spec := oneCore(3)
	spec.Pool, spec.MaxAttempts, spec.Type = core.RootPool, 3, model.JobBatch
	late := &model.Job{ID: NewJobID(), Spec: spec, ConfigVersion: 1,
		Status: model.JobStatus{State: model.JobInitialized, CreateTime: s.clk.Now(), Region: "test"}}
	if err := st.CreateJob(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	if _, err := s.e.Reads().GetJob(late.ID); err == nil {
		t.Fatal("the engine knows a job it never loaded")
	}
	for range 2 { // the second retry finds it in the state
		out, err := Do(context.Background(), s.e, CreateJobs{Jobs: []NewJob{{ID: late.ID, Spec: spec}}})
		if err != nil || out[0].Err != nil || !out[0].Existing {
			t.Fatalf("retried create: %+v %v, want Existing", out, err)
		}
	}
	if job, err := s.e.Reads().GetJob(late.ID); err != nil || job.Spec.Instances != 3 {
		t.Fatalf("the job taken in: %+v %v", job, err)
	}
	s.until("its tasks running", func() bool { return s.count(late.ID, model.TaskRunning) == 3 })
	n := 0
	for _, j := range s.e.Reads().ListJobs(JobFilter{}) {
		if j.ID == late.ID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the job is listed %d times, want once", n)
	}
}
