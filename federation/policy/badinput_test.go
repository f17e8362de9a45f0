package policy

import (
	"math"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// TestBadNumbersNeitherPanicNorLeak: extreme, unlimited and negative
// amounts anywhere in the inputs give no panic and no negative or
// unlimited reservation share, and routing and planning still answer.
func TestBadNumbersNeitherPanicNorLeak(t *testing.T) {
	low, inf := int64(math.MinInt64), model.Unlimited
	odd := []model.Resources{
		{MilliCPU: low, MemMB: -5, DiskMB: inf, GPU: 0},
		{MilliCPU: -1, MemMB: low, DiskMB: 10, GPU: inf},
		{MilliCPU: inf, MemMB: inf, DiskMB: -inf, GPU: low},
		{MilliCPU: inf - 1, MemMB: 1 << 62, DiskMB: 3, GPU: 1},
		{},
	}
	for i, a := range odd {
		for j, b := range odd {
			regions := []RegionState{
				{Name: "A", Capacity: a, Allocation: b, Pools: map[string]PoolUsage{"/p": {Demand: b, Allocation: a}}},
				{Name: "B", Capacity: b, Allocation: a, Pools: map[string]PoolUsage{"/p": {Demand: a, Allocation: b}}},
				{Name: "A", Capacity: a},
			}
			pools := []model.Pool{{Path: "/p", Reservation: a, Limit: b}, {Path: "/p/q", Reservation: b, Limit: a}, {Path: "bad"}, {Path: "/"}}
			shares := SplitPools(pools, regions, epoch, time.Minute)
			for region, m := range shares {
				for pool, s := range m {
					for k := range model.ResourceKinds {
						if r, l := s.Reservation.Get(k), s.Limit.Get(k); r < 0 || l < r || r == model.Unlimited {
							t.Fatalf("inputs %d/%d: %s %s: reservation %v limit %v", i, j, region, pool, r, l)
						}
					}
				}
			}
			req := JobRequest{Pool: "/p", PerTask: a, Instances: 3, Constraints: []model.Constraint{{Op: 99}, {}}}
			_, _ = ChooseRegion(req, regions, shares)
			req.Constraints = nil
			_, _ = ChooseRegion(req, regions, shares)
			jobs := []RelocatableJob{{ID: "j", Pool: "/p/q", PerTask: b, Remaining: math.MaxUint32}, {ID: "k", Pool: "/p", PerTask: a, Remaining: 1}}
			plan := PlanRelocation("B", jobs, regions, pools)
			if len(plan.Moves)+len(plan.Unplaced) != 2 {
				t.Fatalf("inputs %d/%d: plan %+v lost a job", i, j, plan)
			}
			_ = PlanAll(map[string][]RelocatableJob{"Z": jobs}, regions, pools)
		}
	}
}
