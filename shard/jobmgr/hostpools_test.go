package jobmgr

import (
	"context"
	"errors"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// reported waits until the sim plugin reported a host.
func (s *testShard) reported(id model.HostID) {
	s.t.Helper()
	s.until("host "+string(id)+" reported", func() bool {
		v, ok := s.e.Hosts().View(id)
		return ok && v.Hostname != ""
	})
}

// A host pool set by an operator is stored with the host's record, shown,
// recorded as a move and kept across a restart; bad names and unknown
// hosts change nothing.
func TestSetHostPool(t *testing.T) {
	st := memstore.New()
	s := newTestShardOn(t, st, clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), simHosts(2))
	ctx := context.Background()
	s.reported("sim/h0")
	if _, err := Do(ctx, s.e, SetHostPool{Host: "sim/h0", Pool: "Batch"}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("bad name: %v, want ErrInvalid", err)
	}
	if _, err := Do(ctx, s.e, SetHostPool{Host: "sim/nope", Pool: "batch"}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown host: %v, want ErrNotFound", err)
	}
	rec, err := Do(ctx, s.e, SetHostPool{Host: "sim/h0", Pool: "batch"})
	if err != nil || rec.Pool() != "batch" {
		t.Fatalf("SetHostPool: %+v, %v", rec, err)
	}
	rep := s.e.Reads().HostPools()
	var names []string
	for _, p := range rep.Pools {
		names = append(names, p.Name)
		if p.Name == "batch" && (len(p.Hosts) != 1 || p.Hosts[0] != "sim/h0" || p.InService != 1) {
			t.Errorf("batch: %+v", p)
		}
		if p.Name == model.DefaultHostPool && (len(p.Hosts) != 1 || p.Hosts[0] != "sim/h1") {
			t.Errorf("shared: %+v", p)
		}
	}
	if !slices.Equal(names, []string{"batch", "shared"}) {
		t.Errorf("host pools %v", names)
	}
	if len(rep.Recent) != 1 || rep.Recent[0].HostPoolMove.To != "batch" || rep.Recent[0].HostPoolMove.From != "shared" {
		t.Fatalf("recent moves %+v", rep.Recent)
	}
	s.until("the move stored as an event", func() bool {
		evs, err := st.ListEvents(ctx, store.EventQuery{Job: model.HostPoolEvents})
		return err == nil && len(evs) == 1
	})
	clk := s.clk
	s.stop()
	s = newTestShardOn(t, st, clk, simHosts(2))
	if got := s.e.c.HostPoolOf("sim/h0"); got != "batch" {
		t.Errorf("after a restart sim/h0 is in %q", got)
	}
	if rep := s.e.Reads().HostPools(); len(rep.Recent) != 1 {
		t.Errorf("after a restart %d recent moves", len(rep.Recent))
	}
}

// Tasks of a resource pool that names host pools wait for hosts of those
// (saying so); a pass of the policy moves the idle host of another host
// pool to theirs, and they run there. A child pool uses its parent's host
// pools.
func TestHostPoolPolicyMovesIdleHostToDemand(t *testing.T) {
	s := newTestShard(t, simHosts(2)) // 8 cores each
	ctx := context.Background()
	s.reported("sim/h0")
	s.reported("sim/h1")
	if _, err := Do(ctx, s.e, SetHostPool{Host: "sim/h0", Pool: "batch"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []model.Pool{
		{Path: "/b", Reservation: model.Resources{MilliCPU: 16000, MemMB: 1000}, Limit: core.Unlimited(), Share: model.EqualShares(1), HostPools: []string{"batch"}},
		{Path: "/b/c", Reservation: model.Resources{MilliCPU: 16000, MemMB: 1000}, Limit: core.Unlimited(), Share: model.EqualShares(1)},
	} {
		if _, err := Do(ctx, s.e, CreatePool{Pool: p}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.e.c.ResourceHostPools("/b/c"); !slices.Equal(got, []string{"batch"}) {
		t.Fatalf("/b/c uses host pools %v, want its parent's", got)
	}
	if got := s.e.c.ResourceHostPools("/"); got != nil {
		t.Fatalf("/ uses host pools %v, want any", got)
	}
	spec := oneCore(2)
	spec.Pool = "/b/c"
	spec.Task.Resources.MilliCPU = 8000
	job := s.createAs(model.JobBatch, spec)
	s.until("one running, one waiting outside its host pools", func() bool {
		if s.count(job, model.TaskRunning) != 1 {
			return false
		}
		for _, tk := range s.tasks(job) {
			if strings.Contains(tk.Message, "1 not in host pools [batch]") {
				return true
			}
		}
		return false
	})
	if d := s.e.hostPoolRun.demand(); d["batch"].MilliCPU != 8000 {
		t.Fatalf("demand %v, want 8 cores for batch", d)
	}
	s.e.hostPoolRun.pass(ctx)
	if got := s.e.c.HostPoolOf("sim/h1"); got != "batch" {
		t.Fatalf("sim/h1 is in %q after a pass, want batch", got)
	}
	s.until("both running", s.allRunning(job, 2))
	rep := s.e.Reads().HostPools()
	if len(rep.Recent) < 2 || rep.Recent[0].HostPoolMove.Host != "sim/h1" || rep.Recent[0].HostPoolMove.Phase != model.HostPoolMoveDone ||
		!strings.Contains(rep.Recent[0].HostPoolMove.Reason, "batch: ") {
		t.Fatalf("recent moves %+v", rep.Recent)
	}
}
