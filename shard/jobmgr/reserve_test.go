package jobmgr

import (
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// bigTaskOnChurn runs ten hosts of 8 cores, each 7/8 full of one-core
// tasks (at most 7 a host) that end after 5-14s and are replaced from a
// long queue, adds a task of 8 cores (the pool has room for it: 70 of 80
// cores are taken, one free on each host) and reports whether it ran
// within a minute, and the small tasks done.
func bigTaskOnChurn(t *testing.T, after time.Duration) (ran bool, msg string, small int) {
	hosts := make([]sim.HostSpec, 10)
	for i := range hosts {
		hosts[i] = sim.HostSpec{Name: fmt.Sprintf("h%d", i), Capacity: model.Resources{MilliCPU: 8000, MemMB: 8000}}
	}
	s := newTestShardWith(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), hosts,
		func(c *Config) { c.Reservation = core.ReservationConfig{After: after, PerPool: 1} })
	churn := oneCore(2000)
	churn.MaxPerHost, churn.MaxRunning = 7, 70
	churn.Task.Env = map[string]string{sim.EnvDuration: "10s"}
	// Runs last 5-14s, so that a few end at a time.
	for d := range 10 {
		var ranges []model.InstanceRange
		for i := uint32(d); i < churn.Instances; i += 10 {
			ranges = append(ranges, model.InstanceRange{From: i, To: i})
		}
		churn.Overrides = append(churn.Overrides, model.InstanceOverride{Instances: ranges,
			Task: model.TaskSpec{Env: map[string]string{sim.EnvDuration: fmt.Sprintf("%ds", 5+d)}}})
	}
	smallJob := s.create(churn)
	s.until("hosts 7/8 full of small tasks", func() bool { return s.count(smallJob, model.TaskRunning) == 70 })
	big := model.JobSpec{Name: "big", Instances: 1, Task: model.TaskSpec{Command: "sim",
		Env: map[string]string{sim.EnvDuration: "1h"}, Resources: model.Resources{MilliCPU: 8000, MemMB: 100}}}
	id := s.create(big)
	end := s.clk.Now().Add(time.Minute)
	for s.clk.Now().Before(end) && s.count(id, model.TaskRunning) == 0 {
		s.clk.Advance(time.Second)
		time.Sleep(2 * time.Millisecond)
	}
	tasks, _ := s.e.Reads().ListTasks(id, nil)
	perHost := map[model.HostID]int{}
	running, _ := s.e.Reads().ListTasks(smallJob, []model.TaskState{model.TaskRunning})
	for _, r := range running {
		perHost[r.Host]++
		if perHost[r.Host] > 7 {
			// The index must know what earlier passes placed.
			t.Errorf("more than 7 small tasks (max per host) on %s", r.Host)
		}
	}
	t.Logf("at %s: big task %s on %s %q; small per host %v", s.clk.Now().Format("15:04:05"), tasks[0].State, tasks[0].Host, tasks[0].Message, perHost)
	return s.count(id, model.TaskRunning) == 1, tasks[0].Message, s.count(smallJob, model.TaskSucceeded)
}

// A task as big as a host, behind a queue of small ones that fill every
// host as soon as anything frees: without a reservation it never runs;
// with one (after 5s), its host drains as its small tasks end and it runs,
// while the small tasks go on on the other hosts.
func TestBigTaskGetsAReservedHost(t *testing.T) {
	ran, msg, small := bigTaskOnChurn(t, -1)
	if ran {
		t.Fatalf("without reservations the big task ran (the churn does not starve it: the test shows nothing)")
	}
	t.Logf("without reservations, after a minute: %q; small tasks done %d", msg, small)
	ran, msg, smallWith := bigTaskOnChurn(t, 5*time.Second)
	if !ran {
		t.Fatalf("with reservations the big task did not run within a minute: %q", msg)
	}
	t.Logf("with reservations it ran; small tasks done %d (without: %d)", smallWith, small)
	if smallWith == 0 {
		t.Fatal("the small tasks stopped")
	}
}

// While it waits for its host, the task says which host and what is left
// to free.
func TestReservedTaskSaysWhatItWaitsFor(t *testing.T) {
	hosts := []sim.HostSpec{{Name: "h0", Capacity: model.Resources{MilliCPU: 8000, MemMB: 8000}},
		{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 8000}}}
	s := newTestShardWith(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), hosts,
		func(c *Config) { c.Reservation = core.ReservationConfig{After: 2 * time.Second} })
	long := oneCore(10)
	long.MaxPerHost = 5
	long.Task.Env = map[string]string{sim.EnvDuration: "1h"}
	small := s.create(long)
	s.until("10 running", func() bool { return s.count(small, model.TaskRunning) == 10 })
	id := s.create(model.JobSpec{Name: "big", Instances: 1, Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 6000, MemMB: 10}}})
	var msg string
	s.until("the big task waits for its reserved host", func() bool {
		tasks, _ := s.e.Reads().ListTasks(id, nil)
		if len(tasks) == 0 {
			return false
		}
		msg = tasks[0].Message
		return strings.Contains(msg, "waiting for reserved host sim/h") && strings.HasSuffix(msg, "(3 cpu to free)")
	})
	t.Log(msg)
	if _, err := s.e.Reads().GetJob(id); err != nil {
		t.Fatal(err)
	}
}
