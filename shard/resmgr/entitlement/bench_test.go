package entitlement

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// benchTree builds a tree of the root and levels levels of fanout children
// each, with reservations splitting each parent's evenly among half its
// children, limits above reservations, shares 1-4, and random leaf demands on
// every resource.
func benchTree(rng *rand.Rand, levels, fanout int) ([]PoolSpec, map[string]model.Resources) {
	var specs []PoolSpec
	demand := map[string]model.Resources{}
	var grow func(path string, reservation model.Resources, depth int)
	grow = func(path string, reservation model.Resources, depth int) {
		spec := PoolSpec{Path: path, Reservation: reservation}
		for k := range kinds {
			spec.Limit = spec.Limit.Set(k, reservation.Get(k)+rng.Int64N(5000))
			spec.Share = spec.Share.Set(k, float64(1+rng.IntN(4)))
		}
		specs = append(specs, spec)
		if depth == levels {
			var d model.Resources
			for k := range kinds {
				d = d.Set(k, rng.Int64N(20))
			}
			demand[path] = d
			return
		}
		prefix := path
		if path == RootPath {
			prefix = ""
		}
		for c := range fanout {
			var child model.Resources
			if c%2 == 0 {
				for k := range kinds {
					child = child.Set(k, reservation.Get(k)*2/int64(fanout+1))
				}
			}
			grow(prefix+"/p"+strconv.Itoa(c), child, depth+1)
		}
	}
	grow(RootPath, model.Resources{MilliCPU: 40000, MemMB: 40000, DiskMB: 40000, GPU: 40000}, 0)
	return specs, demand
}

// BenchmarkEntitlement10kPools times one pass (four resources, headroom on)
// over 11,111 pools in four levels below the root, with capacity below total
// demand so that every level water-fills. It reports ms/pass and, measured
// in the same run on the same tree, the naive reference's ms/pass and the
// speed-up over it.
func BenchmarkEntitlement10kPools(b *testing.B) {
	rng := rand.New(rand.NewPCG(10, 10))
	specs, demand := benchTree(rng, 4, 10)
	tree, err := NewTree(specs)
	if err != nil {
		b.Fatal(err)
	}
	capacity := model.Resources{MilliCPU: 60000, MemMB: 60000, DiskMB: 60000, GPU: 60000}
	d := demandSlice(tree, demand)
	solver := NewSolver(tree)
	opts := Options{Headroom: true}

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		solver.Compute(capacity, d, opts)
	}
	b.StopTimer()
	fast := b.Elapsed().Seconds() * 1e3 / float64(b.N)

	const naiveRuns = 3
	start := time.Now()
	for range naiveRuns {
		referenceCompute(specs, capacity, demand, true)
	}
	naive := time.Since(start).Seconds() * 1e3 / naiveRuns

	b.ReportMetric(float64(tree.Len()), "pools")
	b.ReportMetric(fast, "ms/pass")
	b.ReportMetric(naive, "naive-ms/pass")
	b.ReportMetric(naive/fast, "speedup")
}
