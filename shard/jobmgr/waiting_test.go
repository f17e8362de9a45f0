package jobmgr

import (
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
)

// Every waiting task says why: not admitted (the pool figure that holds it
// back and its place in the queue) or not placed (placement's reason); the
// job sums them up.
func TestWaitingTasksSayWhy(t *testing.T) {
	s := newTestShard(t, []sim.HostSpec{{Name: "h1", Capacity: model.Resources{MilliCPU: 4000, MemMB: 1000}}})
	big := oneCore(6)
	big.Preemptible = true
	a := s.create(big)
	s.until("4 running", func() bool { return s.count(a, model.TaskRunning) == 4 })
	edge := oneCore(2)
	edge.Preemptible = true
	edge.Task.Resources.MilliCPU, edge.Priority = 0, 1 // admitted ahead of job a
	edge.Task.Constraints = []model.Constraint{{Key: "role", Op: model.OpEquals, Values: []string{"edge"}}}
	b := s.create(edge)
	s.until("edge tasks unplaced", func() bool {
		g, _ := s.e.Reads().Waiting(b)
		return len(g) == 1 && strings.Contains(g[0].Reason, "role")
	})

	groups, err := s.e.Reads().Waiting(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Tasks != 2 || groups[0].Reason != "waiting for pool /'s entitlement (cpu 4/4)" {
		t.Fatalf("job a waits: %+v", groups)
	}
	last, err := s.e.Reads().GetTask(model.TaskID{Job: a, Instance: 5})
	if err != nil {
		t.Fatal(err)
	}
	if want := "not admitted: waiting for pool /'s entitlement (cpu 4/4), needs 1, behind a gang that waits for it; number 2 in pool /'s queue"; last.Message != want {
		t.Errorf("task 5: %q\n          want %q", last.Message, want)
	}
	listed, err := s.e.Reads().ListTasks(a, []model.TaskState{model.TaskPending})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range listed {
		if !strings.HasPrefix(task.Message, "not admitted: waiting for pool /'s entitlement") {
			t.Errorf("listed task %d: %q", task.ID.Instance, task.Message)
		}
	}
	groups, _ = s.e.Reads().Waiting(b)
	if groups[0].Tasks != 2 || !strings.HasPrefix(groups[0].Reason, "not placed: 0/1 hosts: 1 ") {
		t.Errorf("job b waits: %+v", groups)
	}
	if g, _ := s.e.Reads().Waiting(a); len(g) == 0 {
		t.Fatal("job a stopped waiting")
	}
	// Nothing is stored: the task record keeps no admission message.
	stored, err := s.e.cfg.Store.GetTask(t.Context(), model.TaskID{Job: a, Instance: 5})
	if err == nil && strings.HasPrefix(stored.Message, "not admitted") {
		t.Errorf("the reason was stored: %q", stored.Message)
	}
}
