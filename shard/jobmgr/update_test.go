package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

func (s *testShard) service(spec model.JobSpec) model.JobID {
	s.t.Helper()
	spec.Pool, spec.MaxAttempts, spec.Type = core.RootPool, 3, model.JobService
	j, err := Do(context.Background(), s.e, CreateJob{Spec: spec})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.ID
}

func (s *testShard) tasks(j model.JobID) []*model.TaskRuntime {
	s.t.Helper()
	ts, err := s.e.Reads().ListTasks(j, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return ts
}

// A rolling update restarts instances on the new config a batch at a time:
// never more than the batch is down at once, every instance ends on the
// new config, and both configs stay readable.
func TestRollingUpdateMovesABatchAtATime(t *testing.T) {
	ctx := context.Background()
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}})
	spec := oneCore(6)
	spec.Task.Env = map[string]string{"V": "1"}
	j := s.service(spec)
	s.until("6 running", func() bool { return s.count(j, model.TaskRunning) == 6 })

	next := spec
	next.Pool, next.MaxAttempts, next.Type = core.RootPool, 3, model.JobService
	next.Task.Env = map[string]string{"V": "2"}
	u, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: next, Options: UpdateOptions{BatchSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if u.FromVersion != 1 || u.ToVersion != 2 || u.State != model.UpdateRollingForward || u.ID != model.MakeUpdateID(j, 2) {
		t.Fatalf("update: %+v", u)
	}
	maxDown := 0
	s.until("update succeeded", func() bool {
		down := 0
		for _, tk := range s.tasks(j) {
			if tk.State != model.TaskRunning {
				down++
			}
		}
		maxDown = max(maxDown, down)
		got, err := s.e.Reads().GetUpdate(ctx, u.ID)
		return err == nil && got.State == model.UpdateSucceeded
	})
	if maxDown > 2 {
		t.Errorf("%d instances down at once with a batch of 2", maxDown)
	}
	s.until("all running", func() bool { return s.count(j, model.TaskRunning) == 6 })
	for _, tk := range s.tasks(j) {
		if tk.ConfigVersion != 2 || tk.Run != 2 {
			t.Errorf("task %s: config %d run %d after the update, want config 2 run 2", tk.ID, tk.ConfigVersion, tk.Run)
		}
	}
	got, err := s.e.Reads().GetUpdate(ctx, u.ID)
	if err != nil || got.InstancesDone != 6 || got.InstancesTotal != 6 {
		t.Fatalf("finished update: %+v %v", got, err)
	}
	old, v, versions, err := s.e.Reads().GetJobConfig(ctx, j, 1)
	if err != nil || v != 1 || !reflect.DeepEqual(versions, []uint64{1, 2}) || old.Task.Env["V"] != "1" {
		t.Fatalf("config 1: %+v %d %v %v", old, v, versions, err)
	}
	cur, v, _, err := s.e.Reads().GetJobConfig(ctx, j, 0)
	if err != nil || v != 2 || cur.Task.Env["V"] != "2" {
		t.Fatalf("current config: %+v %d %v", cur, v, err)
	}
	job, _ := s.e.Reads().GetJob(j)
	if job.ConfigVersion != 2 || job.Status.Update != u.ID {
		t.Fatalf("job after update: version %d update %q", job.ConfigVersion, job.Status.Update)
	}
	us, err := s.e.Reads().ListUpdates(ctx, j)
	if err != nil || len(us) != 1 || us[0].State != model.UpdateSucceeded {
		t.Fatalf("ListUpdates: %+v %v", us, err)
	}
}

// A new update replaces one still rolling; an operator can abort one.
func TestUpdateReplacedAndAborted(t *testing.T) {
	ctx := context.Background()
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}})
	spec := oneCore(4)
	j := s.service(spec)
	s.until("4 running", func() bool { return s.count(j, model.TaskRunning) == 4 })
	spec.Pool, spec.MaxAttempts, spec.Type = core.RootPool, 3, model.JobService
	// Paused, so neither can finish before the next call.
	spec.Task.Env = map[string]string{"V": "1"}
	u1, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: spec, Options: UpdateOptions{BatchSize: 1, StartPaused: true}})
	if err != nil {
		t.Fatal(err)
	}
	spec.Task.Env = map[string]string{"V": "2"}
	u2, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: spec, Options: UpdateOptions{BatchSize: 1, StartPaused: true}})
	if err != nil {
		t.Fatal(err)
	}
	got1, _ := s.e.Reads().GetUpdate(ctx, u1.ID)
	if got1.State != model.UpdateAborted || !strings.Contains(got1.Message, string(u2.ID)) {
		t.Fatalf("replaced update: %+v", got1)
	}
	got2, err := Do(ctx, s.e, AbortUpdate{ID: u2.ID})
	if err != nil || got2.State != model.UpdateAborted {
		t.Fatalf("abort: %+v %v", got2, err)
	}
	for range 20 {
		s.tick()
	}
	if got, _ := s.e.Reads().GetUpdate(ctx, u2.ID); got.State != model.UpdateAborted {
		t.Fatalf("aborted update came back: %+v", got)
	}
	if _, err := Do(ctx, s.e, AbortUpdate{ID: u2.ID}); !errors.Is(err, ErrUpdateEnded) {
		t.Fatalf("abort of an ended update: %v", err)
	}
	if _, err := s.e.Reads().GetUpdate(ctx, "nope"); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("bad update id: %v", err)
	}
}

// Updates that would change what a job is are refused, naming the field,
// and change nothing.
func TestUpdateRefusals(t *testing.T) {
	ctx := context.Background()
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}})
	spec := oneCore(4)
	j := s.service(spec)
	base := spec
	base.Pool, base.MaxAttempts, base.Type = core.RootPool, 3, model.JobService
	for field, mutate := range map[string]func(*model.JobSpec){
		"type":      func(s *model.JobSpec) { s.Type = model.JobBatch },
		"gang_size": func(s *model.JobSpec) { s.GangSize = 2 },
		"revocable": func(s *model.JobSpec) { s.Revocable = true },
	} {
		next := base
		mutate(&next)
		_, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: next, Options: UpdateOptions{}})
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	versions, err := s.e.cfg.Store.ListJobConfigVersions(ctx, j)
	if err != nil || !reflect.DeepEqual(versions, []uint64{1}) {
		t.Fatalf("refused updates stored configs: %v %v", versions, err)
	}
	if _, err := Do(ctx, s.e, UpdateJob{Job: "missing", Spec: base, Options: UpdateOptions{}}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("update of a missing job: %v", err)
	}
}

// Overrides give single instances other resources and env.
func TestOverridesApplyPerInstance(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 7000, MemMB: 1000}}})
	spec := oneCore(4)
	spec.Task.Env = map[string]string{sim.EnvDuration: "1m"}
	spec.Overrides = []model.InstanceOverride{
		{Instances: []model.InstanceRange{{From: 2, To: 2}}, Task: model.TaskSpec{Resources: model.Resources{MilliCPU: 4000}}},
		{Instances: []model.InstanceRange{{From: 3, To: 3}}, Task: model.TaskSpec{Env: map[string]string{sim.EnvExitCode: "3"}}},
	}
	spec.MaxAttempts = 1
	j := s.create(spec)
	s.until("4 running", func() bool { return s.count(j, model.TaskRunning) == 4 })
	v, _ := s.e.Hosts().View("sim/h1")
	if v.Allocated.MilliCPU != 7000 || v.Allocated.MemMB != 40 {
		t.Fatalf("allocated %+v, want 7 cpus (1+1+4+1) and 40 MB", v.Allocated)
	}
	s.clk.Advance(time.Minute)
	s.until("job failed", func() bool {
		job, _ := s.e.Reads().GetJob(j)
		return job.Status.State == model.JobFailed
	})
	for _, tk := range s.tasks(j) {
		want := model.TaskSucceeded
		if tk.ID.Instance == 3 {
			want = model.TaskFailed
		}
		if tk.State != want {
			t.Errorf("task %s is %s, want %s (exit %d)", tk.ID, tk.State, want, tk.ExitCode)
		}
	}
}

// A drained host takes no new work, survives a restart of the engine, and
// takes work again once undrained.
func TestDrainedHostTakesNoWork(t *testing.T) {
	ctx := context.Background()
	s := newTestShard(t, []sim.HostSpec{
		{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}},
		{Name: "h2", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}},
	})
	s.until("hosts reported", func() bool { return s.e.Hosts().Has("sim/h1") && s.e.Hosts().Has("sim/h2") })
	rec, err := Do(ctx, s.e, DrainHost{Host: "sim/h1", Reason: "kernel upgrade", Deadline: 0})
	if err != nil || !rec.Draining || rec.DrainReason != "kernel upgrade" || rec.Host.State != model.HostDraining {
		t.Fatalf("drain: %+v %v", rec, err)
	}
	if _, err := Do(ctx, s.e, DrainHost{Host: "sim/nope", Reason: "", Deadline: 0}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("drain of an unknown host: %v", err)
	}
	j := s.create(oneCore(6))
	s.until("6 running", func() bool { return s.count(j, model.TaskRunning) == 6 })
	for _, tk := range s.tasks(j) {
		if tk.Host != "sim/h2" {
			t.Fatalf("task %s placed on drained %s", tk.ID, tk.Host)
		}
	}
	stored, err := kinds.Hosts.Get(ctx, s.e.cfg.Store, "sim/h1")
	if err != nil || !stored.Draining {
		t.Fatalf("stored drain: %+v %v", stored, err)
	}
	recs, err := s.e.Reads().ListHostRecords(ctx)
	if err != nil || len(recs) != 2 || !recs[0].Draining || recs[1].Draining {
		t.Fatalf("host records: %+v %v", recs, err)
	}
	if _, err := Do(ctx, s.e, UndrainHost{Host: "sim/h1"}); err != nil {
		t.Fatal(err)
	}
	j2 := s.create(oneCore(4))
	s.until("4 more running", func() bool { return s.count(j2, model.TaskRunning) == 4 })
	on := map[model.HostID]int{}
	for _, tk := range s.tasks(j2) {
		on[tk.Host]++
	}
	if on["sim/h1"] == 0 {
		t.Fatalf("undrained host took no work: %v", on)
	}
}

// Every task transition is kept in the store, in order, per instance.
func TestEventsAreStored(t *testing.T) {
	ctx := context.Background()
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}})
	spec := oneCore(3)
	spec.Task.Env = map[string]string{sim.EnvDuration: "1m"}
	j := s.create(spec)
	s.until("running", func() bool { return s.count(j, model.TaskRunning) == 3 })
	s.clk.Advance(time.Minute)
	s.until("succeeded", func() bool {
		job, _ := s.e.Reads().GetJob(j)
		return job.Status.State == model.JobSucceeded
	})
	one := uint32(1)
	var evs []model.Event
	s.until("events stored", func() bool {
		var err error
		evs, err = s.e.Reads().ListEvents(ctx, store.EventQuery{Job: j, Instance: &one})
		return err == nil && len(evs) > 0 && evs[len(evs)-1].Task.State == model.TaskSucceeded
	})
	var states []string
	for i, ev := range evs {
		if ev.Task == nil || ev.Task.ID.Instance != 1 {
			t.Fatalf("event %d is not of instance 1: %+v", i, ev)
		}
		if i > 0 && ev.Seq <= evs[i-1].Seq {
			t.Fatalf("events out of order: %d then %d", evs[i-1].Seq, ev.Seq)
		}
		states = append(states, ev.Task.State.String())
	}
	if states[len(states)-1] != "SUCCEEDED" || !strings.Contains(strings.Join(states, " "), "RUNNING") {
		t.Fatalf("instance 1 history: %v", states)
	}
	if evs[0].Seq < uint64(s.clk.Now().Add(-time.Hour).UnixMicro()) {
		t.Fatalf("sequence %d is below the event time in microseconds", evs[0].Seq)
	}
	all, err := s.e.Reads().ListEvents(ctx, store.EventQuery{Job: j})
	if err != nil || len(all) <= len(evs) || all[0].JobStatus == nil {
		t.Fatalf("job history: %d events, first %+v, %v", len(all), all[0], err)
	}
	if _, err := s.e.Reads().ListEvents(ctx, store.EventQuery{Job: "missing"}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("events of a missing job: %v", err)
	}
}

// Tasks that ended for good leave memory while their job runs on; the API
// shows them as before, read from the store.
func TestEndedTasksLeaveMemory(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}})
	spec := oneCore(10)
	spec.Overrides = []model.InstanceOverride{{
		Instances: []model.InstanceRange{{From: 0, To: 4}},
		Task:      model.TaskSpec{Env: map[string]string{sim.EnvDuration: "1m"}},
	}}
	j := s.create(spec)
	s.until("10 running", func() bool { return s.count(j, model.TaskRunning) == 10 })
	s.clk.Advance(time.Minute)
	s.until("5 succeeded", func() bool { return s.count(j, model.TaskSucceeded) == 5 })
	// They leave memory once the pass that ended them stored them.
	s.until("5 ended tasks left memory", func() bool {
		s.e.lock()
		defer s.e.mu.Unlock()
		return s.e.c.Jobs[j].Cold == 5
	})
	ts := s.tasks(j)
	if len(ts) != 10 {
		t.Fatalf("%d tasks listed", len(ts))
	}
	for i, tk := range ts {
		want := model.TaskRunning
		if i < 5 {
			want = model.TaskSucceeded
		}
		if tk.ID.Instance != uint32(i) || tk.ID.Job != j || tk.State != want || (i < 5 && tk.Host == "") {
			t.Fatalf("task %d read back as %+v", i, tk)
		}
	}
	tk, err := s.e.Reads().GetTask(model.TaskID{Job: j, Instance: 3})
	if err != nil || tk.ID.Instance != 3 || tk.State != model.TaskSucceeded {
		t.Fatalf("GetTask of an ended task: %+v %v", tk, err)
	}
	out, err := Do(context.Background(), s.e, StopTasks{Job: j, Instances: []uint32{2, 7}, Force: false})
	if err != nil || len(out) != 2 || out[0].ID.Instance != 2 || out[1].ID.Instance != 7 {
		t.Fatalf("StopTasks over a cold task: %+v %v", out, err)
	}
	if got := fmt.Sprint(out[0].State); got != "SUCCEEDED" {
		t.Fatalf("stopping an ended task changed it: %s", got)
	}
}

// An update in flight when the leader goes carries on under the next one,
// which rebuilds it from the store.
func TestUpdateSurvivesANewLeader(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}}
	s := newTestShardOn(t, st, clk, hosts)
	spec := oneCore(4)
	j := s.service(spec)
	s.until("4 running", func() bool { return s.count(j, model.TaskRunning) == 4 })
	spec.Pool, spec.MaxAttempts, spec.Type = core.RootPool, 3, model.JobService
	spec.Task.Env = map[string]string{"V": "2"}
	u, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: spec, Options: UpdateOptions{BatchSize: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("first instance moved", func() bool {
		got, _ := s.e.Reads().GetUpdate(ctx, u.ID)
		return got.InstancesDone >= 1
	})
	s.stop()

	s2 := newTestShardOn(t, st, clk, hosts)
	s2.until("update succeeded under the new leader", func() bool {
		got, err := s2.e.Reads().GetUpdate(ctx, u.ID)
		return err == nil && got.State == model.UpdateSucceeded
	})
	s2.until("4 running", func() bool { return s2.count(j, model.TaskRunning) == 4 })
	for _, tk := range s2.tasks(j) {
		if tk.ConfigVersion != 2 {
			t.Errorf("task %s on config %d after the update", tk.ID, tk.ConfigVersion)
		}
	}
}

// A new leader taking up a running update holds the config it would roll
// back to, read while it recovered, though no run uses it any more: a
// rollback then reads nothing from the store under the engine's lock.
func TestRecoveredUpdateHoldsItsFromConfig(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 16000, MemMB: 1000}}}
	s := newTestShardOn(t, st, clk, hosts)
	spec := oneCore(2)
	j := s.service(spec)
	s.until("2 running", func() bool { return s.count(j, model.TaskRunning) == 2 })
	spec.Pool, spec.MaxAttempts, spec.Type = core.RootPool, 3, model.JobService
	spec.Task.Env = map[string]string{"V": "2"}
	// Every instance moves, and the update waits an hour for them to stay
	// healthy: no run uses config 1 any more.
	if _, err := Do(ctx, s.e, UpdateJob{Job: j, Spec: spec, Options: UpdateOptions{BatchSize: 2, MinHealthy: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	s.until("both instances running config 2", func() bool {
		n := 0
		for _, tk := range s.tasks(j) {
			if tk.ConfigVersion == 2 && tk.State == model.TaskRunning {
				n++
			}
		}
		return n == 2
	})
	s.stop()

	// The new leader's recovery alone, with no pass after it.
	e := New(Config{Region: "test", Store: st, Clock: clk, EventRetention: 10 * 365 * 24 * time.Hour})
	if err := e.recovery.run(ctx); err != nil {
		t.Fatal(err)
	}
	e.lock()
	defer e.mu.Unlock()
	je := e.c.Jobs[j]
	if je == nil || e.c.Rollouts[j] == nil || !e.c.Rollouts[j].Running() {
		t.Fatalf("the running update was not taken up: %+v", e.c.Rollouts[j])
	}
	if c := je.Configs[1]; c == nil || c.Spec.Task.Env["V"] != "" {
		t.Fatalf("config 1 not held after recovery: %+v", c)
	}
}

// A watcher of a job resuming after a leader change gets what it missed
// from the stored history: the new leader's backlog does not have it.
func TestWatchResumesFromStoredHistory(t *testing.T) {
	st := memstore.New()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 1000}}}
	s := newTestShardOn(t, st, clk, hosts)
	spec := oneCore(2)
	spec.Task.Env = map[string]string{sim.EnvDuration: "1m"}
	j := s.create(spec)
	s.until("running", func() bool { return s.count(j, model.TaskRunning) == 2 })
	var seen []model.Event
	s.until("events stored", func() bool {
		seen, _ = s.e.Reads().ListEvents(context.Background(), store.EventQuery{Job: j})
		return len(seen) >= 3
	})
	after := seen[0].Seq
	s.stop()

	s2 := newTestShardOn(t, st, clk, hosts)
	sub2, missed, err := s2.e.Reads().Watch(j, after)
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Cancel()
	if len(missed) < len(seen)-1 {
		t.Fatalf("resumed watch replayed %d events, want at least the %d stored after %d", len(missed), len(seen)-1, after)
	}
	for i, ev := range missed {
		if ev.Seq <= after || (i > 0 && ev.Seq <= missed[i-1].Seq) {
			t.Fatalf("replayed event %d has seq %d (after %d)", i, ev.Seq, after)
		}
	}
}
