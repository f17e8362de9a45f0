package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// A pool's job count is its jobs that have not ended, in ListPools and
// GetPool alike.
func TestPoolCountsActiveJobs(t *testing.T) {
	s := newTestShard(t, simHosts(1))
	ctx := context.Background()
	for _, p := range []string{"/a", "/b"} {
		pool := model.Pool{Path: p, Reservation: model.Resources{MilliCPU: 1000, MemMB: 100},
			Limit: model.Resources{MilliCPU: 8000, MemMB: 1000, DiskMB: 1000, GPU: 1}, Share: model.EqualShares(1)}
		if _, err := Do(ctx, s.e, CreatePool{Pool: pool}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []model.JobID
	for _, p := range []string{"/a", "/a", "/b"} {
		spec := oneCore(1)
		spec.Pool = p
		j, err := Do(ctx, s.e, CreateJob{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if _, err := Do(ctx, s.e, StopJob{ID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	s.until("the stopped job ended", func() bool {
		j, err := s.e.Reads().GetJob(ids[0])
		return err == nil && j.Status.State.IsTerminal()
	})
	want := map[string]int{core.RootPool: 0, "/a": 1, "/b": 1}
	listed := s.e.Reads().ListPools(false)
	if len(listed) != len(want) {
		t.Fatalf("ListPools: %d pools, want %d", len(listed), len(want))
	}
	for _, v := range listed {
		if v.Jobs != want[v.Pool.Path] {
			t.Errorf("ListPools: pool %s has %d jobs, want %d", v.Pool.Path, v.Jobs, want[v.Pool.Path])
		}
		got, err := s.e.Reads().GetPool(v.Pool.Path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Jobs != want[v.Pool.Path] {
			t.Errorf("GetPool: pool %s has %d jobs, want %d", v.Pool.Path, got.Jobs, want[v.Pool.Path])
		}
	}
}

// A pool's waiting and running tasks count its children's: the root's
// are the region's.
func TestPoolTasksCountTheSubtree(t *testing.T) {
	s := newTestShard(t, simHosts(1)) // one host of 8 cores
	ctx := context.Background()
	for _, p := range []string{"/a", "/a/x", "/b"} {
		pool := model.Pool{Path: p, Reservation: model.Resources{MilliCPU: 4000, MemMB: 100},
			Limit: model.Resources{MilliCPU: 8000, MemMB: 1000, DiskMB: 1000, GPU: 1}, Share: model.EqualShares(1)}
		if _, err := Do(ctx, s.e, CreatePool{Pool: pool}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pool string
		n    uint32
	}{{"/a/x", 6}, {"/b", 6}} {
		spec := oneCore(c.n)
		spec.Pool = c.pool
		if _, err := Do(ctx, s.e, CreateJob{Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() map[string][2]int {
		out := map[string][2]int{}
		for _, v := range s.e.Reads().ListPools(false) {
			out[v.Pool.Path] = [2]int{v.Pending, v.Running}
		}
		return out
	}
	s.until("8 running, 4 waiting", func() bool { c := counts(); return c[core.RootPool] == [2]int{4, 8} })
	c := counts()
	if c["/a"] != c["/a/x"] || c["/a"][0]+c["/b"][0] != 4 || c["/a"][1]+c["/b"][1] != 8 {
		t.Fatalf("pending and running by pool: %v", c)
	}
	if v, err := s.e.Reads().GetPool("/a"); err != nil || [2]int{v.Pending, v.Running} != c["/a"] || v.Jobs != 0 {
		t.Fatalf("GetPool /a: %+v %v", v, err)
	}
}
