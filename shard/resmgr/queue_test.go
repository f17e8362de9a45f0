package resmgr

import (
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func item(job string, inst uint32, prio int32, cpu float64) Item {
	return Item{Task: model.TaskID{Job: model.JobID(job), Instance: inst}, Priority: prio, Resources: model.Resources{CPU: cpu}}
}

func TestAdmitOrderAndFit(t *testing.T) {
	q := NewQueue()
	q.Push(item("low", 0, 1, 1))
	q.Push(item("high", 0, 5, 2))
	q.Push(item("high", 1, 5, 2))
	q.Push(item("mid", 0, 3, 4))
	all := func(Item) bool { return true }
	got := q.Admit(model.Resources{CPU: 5}, model.Resources{}, 0, all)
	var names []string
	for _, it := range got.Admitted {
		names = append(names, it.Task.String())
	}
	// high/0 and high/1 use 4; mid (4) does not fit, low (1) still does.
	want := []string{"high/0", "high/1", "low/0"}
	if len(names) != len(want) {
		t.Fatalf("admitted %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("admitted %v, want %v", names, want)
		}
	}
	if got.Allocation.CPU != 5 {
		t.Fatalf("allocation %v", got.Allocation)
	}
	if q.Len() != 1 {
		t.Fatalf("queue len %d, want 1 (mid stays)", q.Len())
	}
}

func TestAdmitDropsStaleAndHonoursLimit(t *testing.T) {
	q := NewQueue()
	for i := uint32(0); i < 10; i++ {
		q.Push(item("j", i, 0, 1))
	}
	live := func(it Item) bool { return it.Task.Instance%2 == 0 }
	got := q.Admit(model.Resources{CPU: 100}, model.Resources{}, 3, live)
	if len(got.Admitted) != 3 || got.Admitted[2].Task.Instance != 4 {
		t.Fatalf("admitted %+v", got.Admitted)
	}
	got = q.Admit(model.Resources{CPU: 100}, model.Resources{}, 0, live)
	if len(got.Admitted) != 2 || q.Len() != 0 {
		t.Fatalf("second pass admitted %d, left %d", len(got.Admitted), q.Len())
	}
}
