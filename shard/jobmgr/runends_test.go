package jobmgr

import (
	"context"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// A run that ends and is replaced by a new run in the same pass still has
// its end in the event history: a reader never sees a task's next run
// start while its previous run seems to be running.
func TestEveryRunEndIsAnEventBeforeTheNextRun(t *testing.T) {
	ctx := context.Background()
	hosts := simHosts(1)
	s := newTestShard(t, hosts)
	job := s.create(oneCore(3))
	s.until("3 running", s.allRunning(job, 3))
	if err := s.sim.AddHost(sim.HostSpec{Name: "h1", Capacity: hosts[0].Capacity}); err != nil {
		t.Fatal(err)
	}
	s.until("h1 reported", func() bool { return s.e.Hosts().Has("sim/h1") })
	if err := s.sim.RemoveHost("sim/h0"); err != nil {
		t.Fatal(err)
	}
	s.until("the runs lost with h0 run again on h1", func() bool {
		for _, tk := range s.tasks(job) {
			if tk.Run != 2 || tk.State != model.TaskRunning || tk.Host != "sim/h1" {
				return false
			}
		}
		return true
	})
	s.until("the events of the second runs stored", func() bool {
		evs, err := s.e.Reads().ListEvents(ctx, store.EventQuery{Job: job})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if ev.Task != nil && ev.Task.Run == 2 && ev.Task.State == model.TaskRunning {
				n++
			}
		}
		return n == 3
	})
	evs, err := s.e.Reads().ListEvents(ctx, store.EventQuery{Job: job})
	if err != nil {
		t.Fatal(err)
	}
	running := map[uint32]uint32{} // instance → the run last seen RUNNING and not ended
	for _, ev := range evs {
		tk := ev.Task
		if tk == nil {
			continue
		}
		i := tk.ID.Instance
		if r, ok := running[i]; ok && r != tk.Run {
			t.Errorf("instance %d: an event of run %d (%s) while run %d had no end", i, tk.Run, tk.State, r)
		}
		switch {
		case tk.State == model.TaskRunning:
			running[i] = tk.Run
		case tk.State.IsTerminal():
			if running[i] == tk.Run {
				delete(running, i)
			}
		}
	}
}
