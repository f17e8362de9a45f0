package entitlement

import (
	"math/rand/v2"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// TestTalkExample checks the talk's worked example holds exactly, through
// both the tree pass and Split.
func TestTalkExample(t *testing.T) {
	tree, err := NewTree([]PoolSpec{
		cpuSpec("/", 100, 100, 1),
		cpuSpec("/p1", 20, 100, 1),
		cpuSpec("/p2", 20, 100, 1),
		cpuSpec("/p3", 20, 100, 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		p1Demand int64
		want     [3]int64
	}{
		{10, [3]int64{10, 45, 45}},
		{30, [3]int64{30, 35, 35}},
		// 100/3 each: the one unit left over goes to the first pool.
		{60, [3]int64{34, 33, 33}},
	} {
		demand := []model.Resources{{}, {MilliCPU: tt.p1Demand}, {MilliCPU: 80}, {MilliCPU: 80}}
		r := Compute(tree, model.Resources{MilliCPU: 100}, demand, Options{})
		claims := make([]Claim, 3)
		for i := range claims {
			claims[i] = Claim{Reservation: model.Resources{MilliCPU: 20}, Limit: model.Resources{MilliCPU: 100},
				Share: model.Shares{CPU: 1}, Demand: demand[i+1]}
		}
		grants := Split(model.Resources{MilliCPU: 100}, claims, Options{})
		for i, want := range tt.want {
			for _, got := range []int64{r.Entitlement[i+1].MilliCPU, grants[i].Entitlement.MilliCPU} {
				if got != want {
					t.Errorf("p1 demand %v: pool %d entitlement %v, want %v", tt.p1Demand, i+1, got, want)
				}
			}
		}
	}
}

// TestSolverReusesBuffers checks a pass allocates nothing and that reusing
// a Solver gives the same result as a fresh one.
func TestSolverReusesBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	specs, demand := randomTree(rng, 4, 5)
	tree, err := NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	d := demandSlice(tree, demand)
	capacity := model.Resources{MilliCPU: 150, MemMB: 150, DiskMB: 150, GPU: 150}
	solver := NewSolver(tree)
	solver.Compute(model.Resources{MilliCPU: 3}, d, Options{}) // a different pass first
	allocs := testing.AllocsPerRun(20, func() { solver.Compute(capacity, d, Options{Headroom: true}) })
	if allocs != 0 {
		t.Errorf("a pass allocates %v times", allocs)
	}
	got := solver.Compute(capacity, d, Options{Headroom: true})
	want := Compute(tree, capacity, d, Options{Headroom: true})
	for i := range tree.Len() {
		if got.Entitlement[i] != want.Entitlement[i] || got.Headroom[i] != want.Headroom[i] || got.Demand[i] != want.Demand[i] {
			t.Fatalf("%s: reused solver %v, fresh %v", tree.Path(i), got.Entitlement[i], want.Entitlement[i])
		}
	}
	if solver.Tree() != tree {
		t.Error("Tree() is not the solver's tree")
	}
}

// TestInfiniteCapacity: with unbounded capacity every pool gets its demand
// and, with headroom, room up to its limit.
func TestInfiniteCapacity(t *testing.T) {
	tree, err := NewTree([]PoolSpec{cpuSpec("/", 0, model.Unlimited, 1), cpuSpec("/a", 0, 50, 1), cpuSpec("/b", 0, model.Unlimited, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := Compute(tree, model.Resources{MilliCPU: model.Unlimited}, []model.Resources{{}, {MilliCPU: 10}, {MilliCPU: 20}}, Options{Headroom: true})
	if r.Entitlement[1].MilliCPU != 10 || r.Entitlement[2].MilliCPU != 20 {
		t.Errorf("entitlements %v %v, want the demands", r.Entitlement[1], r.Entitlement[2])
	}
	if got := r.ElasticCap(1).MilliCPU; got != 50 {
		t.Errorf("elastic cap of /a = %v, want its limit 50", got)
	}
}
