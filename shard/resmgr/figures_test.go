package resmgr

import (
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// TestUncappedDemand: a pool whose work waits beyond its reservation and
// limit shows that work in UncappedDemand, while Demand stays capped for
// the entitlement pass; a parent sums its leaves.
func TestUncappedDemand(t *testing.T) {
	unlimited := model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited}
	tree, err := entitlement.NewTree([]entitlement.PoolSpec{
		{Path: "/", Reservation: model.Resources{MilliCPU: 1_000_000}, Limit: unlimited, Share: model.EqualShares(1)},
		{Path: "/team", Reservation: model.Resources{MilliCPU: 20_000}, Limit: unlimited, Share: model.EqualShares(1)},
		{Path: "/team/np", Reservation: model.Resources{MilliCPU: 10_000}, Limit: unlimited, Share: model.EqualShares(1)},
		{Path: "/team/capped", Limit: model.Resources{MilliCPU: 5_000, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited}, Share: model.EqualShares(1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := New(tree, Config{})
	// 400 non-preemptible tasks of 1 cpu against a reservation of 10.
	np := gangOf("np", "/team/np", 1, 1000)
	np.Preemptible = false
	for i := range 400 {
		g := np
		g.ID = GangID{Job: "np", Gang: uint32(i)}
		g.Members = []Member{{Task: model.TaskID{Job: "np", Instance: uint32(i)}}}
		if err := s.Enqueue(g); err != nil {
			t.Fatal(err)
		}
	}
	// A preemptible gang of 4 × 2 cpu above a limit of 5: parked, never fits.
	if err := s.Enqueue(gangOf("big", "/team/capped", 4, 2000)); err != nil {
		t.Fatal(err)
	}
	// One that fits the limit.
	if err := s.Enqueue(gangOf("small", "/team/capped", 1, 3000)); err != nil {
		t.Fatal(err)
	}
	s.Pass(PassInput{Capacity: model.Resources{MilliCPU: 1_000_000, MemMB: 1 << 20}})

	for _, tc := range []struct {
		path             string
		demand, uncapped int64
	}{
		{"/team/np", 10_000, 400_000},
		{"/team/capped", 3_000, 11_000},
		{"/team", 13_000, 411_000},
		{"/", 13_000, 411_000},
	} {
		f, ok := s.PoolFigures(tc.path)
		if !ok {
			t.Fatalf("no figures for %s", tc.path)
		}
		if f.Demand.MilliCPU != tc.demand || f.UncappedDemand.MilliCPU != tc.uncapped {
			t.Errorf("%s: demand %d, uncapped %d millicores; want %d and %d", tc.path, f.Demand.MilliCPU, f.UncappedDemand.MilliCPU, tc.demand, tc.uncapped)
		}
	}
}
