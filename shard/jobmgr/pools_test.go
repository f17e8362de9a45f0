package jobmgr

import (
	"context"
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
		if _, err := s.e.CreatePool(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	var ids []model.JobID
	for _, p := range []string{"/a", "/a", "/b"} {
		spec := oneCore(1)
		spec.Pool = p
		j, err := s.e.CreateJob(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if _, err := s.e.StopJob(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	s.until("the stopped job ended", func() bool {
		j, err := s.e.GetJob(ids[0])
		return err == nil && j.Status.State.IsTerminal()
	})
	want := map[string]int{RootPool: 0, "/a": 1, "/b": 1}
	listed := s.e.ListPools(false)
	if len(listed) != len(want) {
		t.Fatalf("ListPools: %d pools, want %d", len(listed), len(want))
	}
	for _, v := range listed {
		if v.Jobs != want[v.Pool.Path] {
			t.Errorf("ListPools: pool %s has %d jobs, want %d", v.Pool.Path, v.Jobs, want[v.Pool.Path])
		}
		got, err := s.e.GetPool(v.Pool.Path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Jobs != want[v.Pool.Path] {
			t.Errorf("GetPool: pool %s has %d jobs, want %d", v.Pool.Path, got.Jobs, want[v.Pool.Path])
		}
	}
}
