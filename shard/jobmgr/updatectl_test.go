package jobmgr

import (
	"context"
	"errors"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
)

func healthyService(n uint32) model.JobSpec {
	spec := oneCore(n)
	spec.Type, spec.Pool, spec.MaxAttempts = model.JobService, core.RootPool, 3
	spec.SLA = &model.SLA{MaxUnavailable: 2}
	spec.Task.HealthCheck = &model.HealthCheck{Kind: model.ProbeCommand, Command: "true"}
	return spec
}

func (s *testShard) updateState(id model.UpdateID) *model.Update {
	s.t.Helper()
	u, err := s.e.Reads().GetUpdate(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return u
}

// An update to a config whose health check fails rolls back by itself:
// every instance ends on the old config, healthy.
func TestUpdateRollsBackOnFailure(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := healthyService(8)
	job := s.service(spec)
	s.until("8 healthy", func() bool { return countHealthy(s, job) == 8 })
	bad := spec
	bad.Task.Env = map[string]string{sim.EnvHealth: "unhealthy"}
	w := s.watchAvailability(job, 8) // from the pass that stores the update
	u, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: bad, Options: UpdateOptions{BatchSize: 2, MaxFailures: 1, RollbackOnFailure: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("rolled back", func() bool { return s.updateState(u.ID).State == model.UpdateRolledBack })
	maxDown, _ := w.stop(s, "")
	got := s.updateState(u.ID)
	if got.InstancesFailed < 2 {
		t.Errorf("rolled back after %d failures, want more than 1", got.InstancesFailed)
	}
	s.until("all healthy on config 1", func() bool {
		for _, tk := range s.tasks(job) {
			if tk.ConfigVersion != 1 || tk.State != model.TaskRunning || tk.Health != model.HealthHealthy {
				return false
			}
		}
		return true
	})
	if j, _ := s.e.Reads().GetJob(job); j.ConfigVersion != 1 {
		t.Fatalf("job on config %d after the rollback", j.ConfigVersion)
	}
	if maxDown > 2 {
		t.Fatalf("%d instances down at once during update and rollback, SLA allows 2", maxDown)
	}
}

// Without rollbackOnFailure the update fails and moves no more.
func TestUpdateFailsPastMaxFailures(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := healthyService(6)
	job := s.service(spec)
	s.until("6 healthy", func() bool { return countHealthy(s, job) == 6 })
	bad := spec
	bad.Task.Env = map[string]string{sim.EnvHealth: "unhealthy"}
	u, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: bad, Options: UpdateOptions{BatchSize: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("failed", func() bool { return s.updateState(u.ID).State == model.UpdateFailed })
	moved := 0
	for _, tk := range s.tasks(job) {
		if tk.ConfigVersion == 2 {
			moved++
		}
	}
	if moved != 1 {
		t.Fatalf("%d instances moved to the failing config, want 1 (batch 1, no failure allowed)", moved)
	}
}

// A paused update moves nothing until resumed; a manual rollback moves the
// instances already moved back; pause of an ended update is refused.
func TestPauseResumeAndRollback(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := healthyService(6)
	job := s.service(spec)
	s.until("6 healthy", func() bool { return countHealthy(s, job) == 6 })
	next := spec
	next.Task.Env = map[string]string{"V": "2"}
	u, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{BatchSize: 1, StartPaused: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("the update says it is paused", func() bool { return s.updateState(u.ID).Message == "paused" })
	passes := 0
	s.until("20 more passes", func() bool { passes++; return passes > 20 })
	if got := s.updateState(u.ID); got.InstancesDone != 0 || got.Message != "paused" {
		t.Fatalf("paused update: %+v", got)
	}
	// Pause it again, at the end of the pass that has moved two instances
	// (the simulated hosts move faster than a test can call).
	s.e.mu.Lock()
	s.e.afterStep = func() {
		if ro := s.e.c.Rollouts[job]; ro != nil && ro.Update.InstancesDone >= 2 {
			ro.Update.Paused = true
		}
	}
	s.e.mu.Unlock()
	if _, err := Do(context.Background(), s.e, ResumeUpdate{ID: u.ID}); err != nil {
		t.Fatal(err)
	}
	s.until("two moved, then paused", func() bool {
		got := s.updateState(u.ID)
		return got.InstancesDone >= 2 && got.Paused && got.Message == "paused"
	})
	s.e.mu.Lock()
	s.e.afterStep = nil
	s.e.mu.Unlock()
	if _, err := Do(context.Background(), s.e, PauseUpdate{ID: u.ID}); err != nil {
		t.Fatal(err)
	}
	onNew := 0
	for _, tk := range s.tasks(job) {
		if tk.ConfigVersion == 2 {
			onNew++
		}
	}
	if onNew < 2 || onNew == 6 {
		t.Fatalf("%d instances on config 2 when paused, want some but not all", onNew)
	}
	if _, err := Do(context.Background(), s.e, RollbackUpdate{ID: u.ID}); err != nil {
		t.Fatal(err)
	}
	s.until("rolled back", func() bool { return s.updateState(u.ID).State == model.UpdateRolledBack })
	for _, tk := range s.tasks(job) {
		if tk.ConfigVersion != 1 {
			t.Errorf("instance %d on config %d after rollback", tk.ID.Instance, tk.ConfigVersion)
		}
	}
	if _, err := Do(context.Background(), s.e, PauseUpdate{ID: u.ID}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("pause of an ended update: %v", err)
	}
	if _, err := Do(context.Background(), s.e, RollbackUpdate{ID: u.ID}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("rollback of an ended update: %v", err)
	}
}

func countHealthy(s *testShard, job model.JobID) int {
	n := 0
	for _, tk := range s.tasks(job) {
		if tk.State == model.TaskRunning && tk.Health == model.HealthHealthy {
			n++
		}
	}
	return n
}

// A canary update moves its canaries only, waits for the promotion, then
// moves the rest under the SLA; a canary whose health check fails reverts
// the update with the other instances never moved.
func TestCanaryWaitsForPromotionAndReverts(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := healthyService(6)
	job := s.service(spec)
	s.until("6 healthy", func() bool { return countHealthy(s, job) == 6 })
	next := spec
	next.Task.Env = map[string]string{"VERSION": "2"}
	u, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{BatchSize: 3, Canary: 2}})
	if err != nil {
		t.Fatal(err)
	}
	onConfig := func(v uint64) (n int) {
		for _, tk := range s.tasks(job) {
			if tk.ConfigVersion == v && tk.State == model.TaskRunning && tk.Health == model.HealthHealthy {
				n++
			}
		}
		return n
	}
	s.until("awaiting promotion", func() bool {
		got := s.updateState(u.ID)
		return onConfig(2) == 2 && got.InstancesDone == 2 && got.Message != ""
	})
	for range 20 {
		s.tick()
	}
	if n := onConfig(2); n != 2 {
		t.Fatalf("%d instances on the new config before the promotion, want the 2 canaries", n)
	}
	if got := s.updateState(u.ID); got.State != model.UpdateRollingForward || got.Promoted {
		t.Fatalf("before the promotion: %+v", got)
	}
	if _, err := Do(context.Background(), s.e, PromoteUpdate{ID: u.ID, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	s.until("succeeded", func() bool { return s.updateState(u.ID).State == model.UpdateSucceeded })
	if got := s.updateState(u.ID); !got.Promoted || got.PromotedBy != "alice" || onConfig(2) != 6 {
		t.Fatalf("after the promotion: %+v, %d on the new config", got, onConfig(2))
	}
	if _, err := Do(context.Background(), s.e, PromoteUpdate{ID: u.ID, By: "alice"}); !errors.Is(err, core.ErrUpdateState) {
		t.Fatalf("promoting an ended update: %v", err)
	}

	// A canary that fails its health check reverts the update.
	bad := next
	bad.Task.Env = map[string]string{sim.EnvHealth: "unhealthy"}
	runs := map[uint32]uint32{}
	for _, tk := range s.tasks(job) {
		runs[tk.ID.Instance] = tk.Run
	}
	w := s.watchAvailability(job, 6)
	u, err = Do(context.Background(), s.e, UpdateJob{Job: job, Spec: bad, Options: UpdateOptions{BatchSize: 2, Canary: 2, RollbackOnFailure: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("reverted", func() bool { return s.updateState(u.ID).State == model.UpdateRolledBack })
	maxDown, _ := w.stop(s, "")
	if maxDown > 2 {
		t.Errorf("%d instances down at once, SLA 2", maxDown)
	}
	for _, tk := range s.tasks(job) {
		if tk.ID.Instance >= 2 && (tk.Run != runs[tk.ID.Instance] || tk.ConfigVersion != 2) {
			t.Errorf("instance %d, not a canary, was restarted: run %d (was %d), config %d", tk.ID.Instance, tk.Run, runs[tk.ID.Instance], tk.ConfigVersion)
		}
	}
}

// Extra canaries start beside the job's instances, which all stay on
// their config and their runs until the promotion; promoted, the extra
// ones are stopped and the rest move. A failing extra canary reverts the
// update and is removed, no instance of the job restarted.
func TestExtraCanariesStartBesideTheJob(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := healthyService(6)
	job := s.service(spec)
	s.until("6 healthy", func() bool { return countHealthy(s, job) == 6 })
	runs := map[uint32]uint32{}
	for _, tk := range s.tasks(job) {
		runs[tk.ID.Instance] = tk.Run
	}
	next := spec
	next.Task.Env = map[string]string{"VERSION": "2"}
	u, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{BatchSize: 3, Canary: 2, CanaryExtra: true}})
	if err != nil {
		t.Fatal(err)
	}
	onConfig := func(v uint64) (ids []uint32) {
		for _, tk := range s.tasks(job) {
			if tk.ConfigVersion == v && tk.State == model.TaskRunning && tk.Health == model.HealthHealthy {
				ids = append(ids, tk.ID.Instance)
			}
		}
		return ids
	}
	s.until("two extra canaries awaiting promotion", func() bool {
		return slices.Equal(onConfig(2), []uint32{6, 7}) && strings.Contains(s.updateState(u.ID).Message, "waiting for promotion")
	})
	for range 20 {
		s.tick()
	}
	if j, _ := s.e.Reads().GetJob(job); j.Spec.Instances != 8 {
		t.Fatalf("the job runs %d instances while the canaries wait, want 6 + 2", j.Spec.Instances)
	}
	for _, tk := range s.tasks(job) {
		if tk.ID.Instance < 6 && (tk.Run != runs[tk.ID.Instance] || tk.ConfigVersion != 1) {
			t.Errorf("instance %d left its run or config before the promotion: run %d, config %d", tk.ID.Instance, tk.Run, tk.ConfigVersion)
		}
	}
	if _, err := Do(context.Background(), s.e, PromoteUpdate{ID: u.ID, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	s.until("succeeded", func() bool { return s.updateState(u.ID).State == model.UpdateSucceeded })
	s.until("the extra canaries gone", func() bool {
		return slices.Equal(onConfig(2), []uint32{0, 1, 2, 3, 4, 5})
	})
	if j, _ := s.e.Reads().GetJob(job); j.Spec.Instances != 6 {
		t.Fatalf("after the promotion the job runs %d instances, want 6", j.Spec.Instances)
	}

	// A failing extra canary reverts the update; no instance restarted.
	for _, tk := range s.tasks(job) {
		runs[tk.ID.Instance] = tk.Run
	}
	bad := next
	bad.Task.Env = map[string]string{sim.EnvHealth: "unhealthy"}
	w := s.watchAvailability(job, 6)
	u, err = Do(context.Background(), s.e, UpdateJob{Job: job, Spec: bad, Options: UpdateOptions{BatchSize: 2, Canary: 1, CanaryExtra: true, RollbackOnFailure: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("reverted", func() bool { return s.updateState(u.ID).State == model.UpdateRolledBack })
	s.until("the extra canary gone", func() bool {
		j, _ := s.e.Reads().GetJob(job)
		return j.Spec.Instances == 6 && len(onConfig(2)) == 6
	})
	if maxDown, _ := w.stop(s, ""); maxDown > 0 {
		t.Errorf("%d of the job's instances down during an extra canary's revert", maxDown)
	}
	for _, tk := range s.tasks(job) {
		if tk.ID.Instance < 6 && tk.Run != runs[tk.ID.Instance] {
			t.Errorf("instance %d was restarted by a reverted extra canary: run %d, was %d", tk.ID.Instance, tk.Run, runs[tk.ID.Instance])
		}
	}
	if _, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{CanaryExtra: true}}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("extra canaries without a count: %v", err)
	}
}
