package jobmgr

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// A drain through the engine: a service's instances leave the host no
// faster than their SLA allows, a batch run stays until the drain's
// deadline and is then killed and run elsewhere, and the host ends with
// nothing of the shard on it.
func TestDrainMovesUnderSLAAndKillsAtTheDeadline(t *testing.T) {
	ctx := context.Background()
	hosts := simHosts(1)
	s := newTestShard(t, hosts)
	spec := oneCore(3)
	spec.SLA = &model.SLA{MaxUnavailable: 1}
	svc := s.service(spec)
	s.until("3 running", s.allRunning(svc, 3))
	batch := s.create(oneCore(1))
	s.until("batch running", s.allRunning(batch, 1))
	if err := s.sim.AddHost(sim.HostSpec{Name: "h1", Capacity: hosts[0].Capacity}); err != nil {
		t.Fatal(err)
	}
	s.until("h1 reported", func() bool { return s.e.Hosts().Has("sim/h1") })

	w := s.watchAvailability(svc, 3)
	if _, err := Do(ctx, s.e, DrainHost{Host: "sim/h0", Reason: "maintenance", Deadline: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	s.until("the service moved to h1", func() bool {
		n := 0
		for _, tk := range s.tasks(svc) {
			if tk.State == model.TaskRunning && tk.Host == "sim/h1" {
				n++
			}
		}
		return n == 3
	})
	if maxDown, _ := w.stop(s, ""); maxDown > 1 {
		t.Fatalf("%d instances down at once, the SLA allows 1", maxDown)
	}
	for _, tk := range s.tasks(svc) {
		if tk.Run < 2 || tk.Reason != ReasonHostDrained {
			t.Errorf("instance %d: run %d, reason %s", tk.ID.Instance, tk.Run, tk.Reason)
		}
	}
	bt := s.tasks(batch)[0]
	if bt.Host != "sim/h0" || bt.Run != 1 || bt.State != model.TaskRunning {
		t.Fatalf("the batch run did not wait for the deadline: %+v", bt)
	}

	s.clk.Advance(10 * time.Minute)
	s.until("the batch run killed at the deadline runs on h1", func() bool {
		tk := s.tasks(batch)[0]
		return tk.Run == 2 && tk.State == model.TaskRunning && tk.Host == "sim/h1"
	})
	if tk := s.tasks(batch)[0]; tk.Reason != ReasonHostDrained || tk.Failures != 0 {
		t.Errorf("batch task after the deadline: reason %s, failures %d", tk.Reason, tk.Failures)
	}
	zero := uint32(0)
	s.until("the kill says why", func() bool {
		evs, err := s.e.Reads().ListEvents(ctx, store.EventQuery{Job: batch, Instance: &zero})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Task != nil && ev.Task.Run == 1 && ev.Task.Reason == ReasonHostDrained && strings.Contains(ev.Task.Message, "its deadline passed") {
				return true
			}
		}
		return false
	})
	s.until("h0 holds nothing", func() bool {
		v, ok := s.e.Hosts().View("sim/h0")
		return ok && v.Tasks == 0
	})
}

// A host its cluster reports DRAINING (Mesos maintenance) drains as an
// operator's drain with the cluster's deadline: the batch run there is
// killed at the deadline and runs elsewhere; the host ends holding
// nothing of the shard.
func TestClusterDrainMovesRunsByItsDeadline(t *testing.T) {
	s := newTestShard(t, simHosts(1))
	batch := s.create(oneCore(1))
	s.until("batch running", s.allRunning(batch, 1))
	if err := s.sim.AddHost(sim.HostSpec{Name: "h1", Capacity: simHosts(1)[0].Capacity}); err != nil {
		t.Fatal(err)
	}
	s.until("h1 reported", func() bool { return s.e.Hosts().Has("sim/h1") })
	v, _ := s.e.Hosts().View("sim/h0")
	h := v.Host
	h.State = model.HostDraining
	h.Labels = map[string]string{hostmgr.LabelDrainDeadline: s.clk.Now().Add(10 * time.Minute).Format(time.RFC3339)}
	(&sink{e: s.e, cluster: "sim"}).HostsUpdated([]model.Host{h})
	time.Sleep(50 * time.Millisecond)
	s.clk.Advance(time.Second)
	if tk := s.tasks(batch)[0]; tk.Run != 1 || tk.Host != "sim/h0" {
		t.Fatalf("batch run moved before the deadline: %+v", tk)
	}
	s.clk.Advance(10 * time.Minute)
	s.until("the batch run killed at the deadline runs on h1", func() bool {
		tk := s.tasks(batch)[0]
		return tk.Run == 2 && tk.State == model.TaskRunning && tk.Host == "sim/h1"
	})
	if tk := s.tasks(batch)[0]; tk.Reason != ReasonHostDrained {
		t.Errorf("reason %s", tk.Reason)
	}
	if recs, _ := s.e.Reads().ListHostRecords(context.Background()); len(recs) > 0 {
		for _, r := range recs {
			if r.Draining {
				t.Errorf("a cluster's drain was stored as an operator's: %+v", r)
			}
		}
	}
}
