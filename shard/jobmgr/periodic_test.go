package jobmgr

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/periodic"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// periodicSpec is a one-task batch job on a schedule whose runs last d.
func periodicSpec(cron string, policy model.Concurrency, d time.Duration) model.JobSpec {
	spec := oneCore(1)
	spec.Name = "nightly"
	spec.Task.Env = map[string]string{sim.EnvDuration: d.String()}
	spec.Schedule = &model.Schedule{Cron: cron, Concurrency: policy, KeepRuns: 2}
	return spec
}

func (s *testShard) periodicStatus(id model.JobID) model.PeriodicStatus {
	s.t.Helper()
	j, err := s.e.Reads().GetJob(id)
	if err != nil {
		s.t.Fatal(err)
	}
	if j.Status.Periodic == nil {
		return model.PeriodicStatus{}
	}
	return *j.Status.Periodic
}

// advanceTo moves the clock to at in loop intervals, letting passes and
// the periodic look run on the way.
func (s *testShard) advanceTo(at time.Time) {
	for s.clk.Now().Before(at) {
		s.clk.Advance(min(time.Second, at.Sub(s.clk.Now())))
		time.Sleep(time.Millisecond)
	}
}

// A periodic job runs no task of its own and launches one run per tick,
// under the id RunID derives, linked both ways; Forbid skips a tick while
// a run goes on; the finished runs beyond the ones kept are deleted.
func TestPeriodicJobLaunchesEachTickOnce(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	start := s.clk.Now()
	id := s.create(periodicSpec("*/5 * * * *", model.ConcurrencyForbid, 7*time.Minute))
	s.advanceTo(start.Add(4 * time.Minute))
	if n := len(s.e.Reads().RunsOf(id)); n != 0 {
		t.Fatalf("%d runs before the first tick", n)
	}
	if j, _ := s.e.Reads().GetJob(id); j.Status.State != model.JobRunning || j.Status.TasksCreated != 0 {
		t.Fatalf("the periodic job: %s with %d tasks, want RUNNING with none", j.Status.State, j.Status.TasksCreated)
	}
	first := start.Add(5 * time.Minute)
	s.advanceTo(first)
	s.until("the first tick's run", func() bool { return s.periodicStatus(id).Launched == 1 })
	runs := s.e.Reads().RunsOf(id)
	if len(runs) != 1 || runs[0].ID != periodic.RunID(id, first) || !runs[0].Status.RunOf.Tick.Equal(first) ||
		runs[0].Status.RunOf.Parent != id || runs[0].Spec.Periodic() {
		t.Fatalf("runs after the first tick: %+v", runs)
	}
	if p := s.periodicStatus(id); p.LastRun != runs[0].ID || !p.LastTick.Equal(first) {
		t.Fatalf("status after the first tick: %+v", p)
	}
	s.until("the run running", func() bool { return s.count(runs[0].ID, model.TaskRunning) == 1 })
	// At 00:10 the first run (7 minutes) still runs: Forbid skips the tick.
	s.advanceTo(start.Add(10 * time.Minute))
	s.until("the second tick skipped", func() bool { return s.periodicStatus(id).Skipped == 1 })
	// At 00:15 it has ended: the tick launches; then 00:20, 00:25: the
	// runs that finished beyond the two kept go.
	for _, m := range []int{15, 20, 25, 30} {
		s.advanceTo(start.Add(time.Duration(m) * time.Minute))
		s.until("a later tick handled", func() bool { return s.periodicStatus(id).LastTick.Equal(start.Add(time.Duration(m) * time.Minute)) })
	}
	p := s.periodicStatus(id)
	if p.Launched+p.Skipped != 6 || p.Missed != 0 {
		t.Fatalf("after six ticks: %+v", p)
	}
	s.until("finished runs beyond two deleted", func() bool {
		done := 0
		for _, r := range s.e.Reads().RunsOf(id) {
			if r.Status.State.IsTerminal() {
				done++
			}
		}
		return done <= 2
	})
	// Stopping the job stops its run going and launches no more.
	if _, err := Do(context.Background(), s.e, StopJob{ID: id}); err != nil {
		t.Fatal(err)
	}
	s.until("the job killed and its runs ended", func() bool {
		j, _ := s.e.Reads().GetJob(id)
		return j.Status.State == model.JobKilled && s.e.Reads().ActiveRuns(id) == 0
	})
	launched := s.periodicStatus(id).Launched
	s.advanceTo(s.clk.Now().Add(11 * time.Minute))
	if got := s.periodicStatus(id).Launched; got != launched {
		t.Fatalf("a stopped job launched %d runs more", got-launched)
	}
}

// A leader that stored a tick's run but died before it recorded the tick
// leaves it to the next leader, which finds the run and launches nothing
// more: the tick runs once.
func TestTickRunStoredBeforeALeaderChangeRunsOnce(t *testing.T) {
	st := memstore.New()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}}
	s := newTestShardOn(t, st, clk, hosts)
	start := clk.Now()
	id := s.create(periodicSpec("* * * * *", model.ConcurrencyAllow, time.Hour))
	s.stop()
	// The run of 00:01, stored as the old leader's launch left it.
	tick := start.Add(time.Minute)
	j, _ := s.e.Reads().GetJob(id)
	spec := j.Spec
	spec.Schedule = nil
	run := &model.Job{ID: periodic.RunID(id, tick), Spec: spec, ConfigVersion: 1,
		Status: model.JobStatus{State: model.JobInitialized, CreateTime: tick, Region: "test", RunOf: &model.RunOf{Parent: id, Tick: tick}}}
	if err := st.CreateJob(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute + 10*time.Second)
	s2 := newTestShardOn(t, st, clk, hosts)
	s2.advanceTo(clk.Now().Add(2 * time.Second))
	s2.until("the tick recorded", func() bool { return s2.periodicStatus(id).LastTick.Equal(tick) })
	if p := s2.periodicStatus(id); p.Launched != 1 || p.LastRun != run.ID {
		t.Fatalf("status: %+v, want the stored run taken for the tick", p)
	}
	if runs := s2.e.Reads().RunsOf(id); len(runs) != 1 {
		t.Fatalf("%d runs for one tick", len(runs))
	}
}

// Suspended, a periodic job launches nothing; resumed, it goes on from the
// next tick, not from the ones passed meanwhile. A run by hand launches at
// once whatever the schedule.
func TestSuspendResumeAndRunNow(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	start := s.clk.Now()
	id := s.create(periodicSpec("0 * * * *", model.ConcurrencyAllow, time.Minute))
	ctx := context.Background()
	if _, err := Do(ctx, s.e, SuspendJob{ID: id}); err != nil {
		t.Fatal(err)
	}
	s.advanceTo(start.Add(2*time.Hour + 30*time.Minute))
	if p := s.periodicStatus(id); p.Launched != 0 || !p.Suspended {
		t.Fatalf("suspended: %+v", p)
	}
	if _, err := Do(ctx, s.e, ResumeJob{ID: id}); err != nil {
		t.Fatal(err)
	}
	s.advanceTo(start.Add(3*time.Hour + 5*time.Second))
	s.until("the 03:00 tick", func() bool { return s.periodicStatus(id).Launched == 1 })
	if p := s.periodicStatus(id); !p.LastTick.Equal(start.Add(3*time.Hour)) || p.Missed != 0 {
		t.Fatalf("resumed: %+v", p)
	}
	run, err := Do(ctx, s.e, RunJob{ID: id})
	if err != nil || run.Status.RunOf == nil || run.Status.RunOf.Parent != id || !run.Status.RunOf.Tick.IsZero() {
		t.Fatalf("run by hand: %+v %v", run, err)
	}
	if p := s.periodicStatus(id); p.LastRun != run.ID {
		t.Fatalf("last run %s, want the run by hand %s", p.LastRun, run.ID)
	}
	plain := s.create(oneCore(1))
	if _, err := Do(ctx, s.e, RunJob{ID: plain}); err == nil {
		t.Fatal("a job without a schedule was run by hand")
	}
}
