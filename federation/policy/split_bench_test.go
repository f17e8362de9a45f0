package policy

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// benchTree is a pool tree of n pools below the root, breadth first with
// fanout 10, every other child reserving 2/11 of its parent.
func benchTree(n int, root model.Resources) []model.Pool {
	pools := []model.Pool{{Path: "/", Reservation: root}}
	for parent := 0; len(pools) <= n; parent++ {
		for c := 0; c < 10 && len(pools) <= n; c++ {
			var r model.Resources
			if c%2 == 0 {
				for k := range model.ResourceKinds {
					r = r.Set(k, pools[parent].Reservation.Get(k)*2/11)
				}
			}
			prefix := pools[parent].Path
			if prefix == "/" {
				prefix = ""
			}
			pools = append(pools, model.Pool{Path: prefix + "/p" + strconv.Itoa(c), Reservation: r,
				Limit: model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited},
				Share: model.EqualShares(float64(1 + c%4))})
		}
	}
	return pools
}

// benchRegions are n regions of 5,000 hosts of 16 cores and 64 GiB, each
// with some demand in every pool, as a gather reports them.
func benchRegions(n int, pools []model.Pool, now time.Time) []RegionState {
	out := make([]RegionState, n)
	for i := range out {
		st := RegionState{Name: fmt.Sprintf("r%02d", i), Seen: now,
			Capacity: model.Resources{MilliCPU: 5000 * 16000, MemMB: 5000 * 65536, DiskMB: 5000 * 100000},
			Pools:    make(map[string]PoolUsage, len(pools))}
		for j, p := range pools {
			d := model.Resources{MilliCPU: int64(10 * ((i + j) % 7)), MemMB: int64(16 * ((i * j) % 5))}
			st.Pools[p.Path] = PoolUsage{Demand: d, Allocation: d}
		}
		out[i] = st
	}
	return out
}

// BenchmarkSplitPools splits 10,000 pools among 1 and 10 regions: the
// cost should grow with pools × regions.
func BenchmarkSplitPools(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	pools := benchTree(10000, model.Resources{MilliCPU: 50000 * 16000 / 4, MemMB: 50000 * 65536 / 4, DiskMB: 50000 * 100000 / 4})
	for _, n := range []int{1, 10} {
		regions := benchRegions(n, pools, now)
		b.Run(fmt.Sprintf("regions=%d", n), func(b *testing.B) {
			for b.Loop() {
				SplitPools(pools, regions, now, time.Minute)
			}
		})
	}
}
