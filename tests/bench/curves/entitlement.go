package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement/placebench"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// entitlementCurve times the entitlement passes against the number of
// pools: the shard's pass (entitlement.Solver.Compute over the pool tree,
// four resources, headroom on, the Solver reused as the resource manager
// reuses it), building the tree when pools change (entitlement.NewTree),
// and the federation's global pass (policy.SplitPools: every pool's
// reservation and limit split among regions regions by their demand and
// capacity). Pools form a tree of fanout 10 filled breadth first; demands
// are drawn so that every level water-fills. Each figure is the fastest of
// repeated runs in rounds interleaved over the sizes: these are pure
// functions on one goroutine, and the fastest run is the one least
// disturbed by other work on the machine.
func entitlementCurve(sizes []int, regions, rounds int, log func(string, ...any)) (*Curve, error) {
	c := &Curve{
		Name:   "entitlement-vs-pools",
		Title:  "Entitlement pass time against pools",
		XLabel: "pools", YLabel: "CPU milliseconds per call", XName: "pools",
		What: fmt.Sprintf("one goroutine, pure functions, the least over %d rounds interleaved over the sizes (a round: the fastest of repeated calls, and the CPU time per call over them): the shard's pass (entitlement.Solver.Compute: "+
			"four resources, headroom, reused Solver), building the pool tree (entitlement.NewTree), and the federation's global "+
			"pass over %d regions (policy.SplitPools). Pools: a tree of fanout 10, filled breadth first; demand above capacity. "+
			"Plotted: the process's CPU time per call, garbage collection included (wall-clock times in the CSV too).", rounds, regions),
		Columns: []string{"pools", "shard_pass_ms", "tree_build_ms", "global_pass_ms", "shard_pass_cpu_ms", "tree_build_cpu_ms", "global_pass_cpu_ms"},
		Plots: []Plot{
			{Column: "shard_pass_cpu_ms", Label: "shard pass (Solver.Compute)", Growth: Cost,
				WhyNotLinear: "constant work per pool; its time per pool rises once the pass's arrays (a few hundred bytes per pool) outgrow the CPU caches"},
			{Column: "tree_build_cpu_ms", Label: "tree build (NewTree, when pools change)", Growth: Cost,
				WhyNotLinear: "constant work per pool, but each is a few lookups in maps keyed by path that outgrow the CPU caches, and garbage to collect"},
			{Column: "global_pass_cpu_ms", Label: fmt.Sprintf("federation global pass, %d regions (SplitPools)", regions), Growth: Cost,
				WhyNotLinear: "constant work per pool and region, but it is lookups in maps keyed by pool path (one per region, " +
					"and the budgets), which miss the CPU caches more often as they grow: most of its time is map probing"},
		},
	}
	// Everything is built first; then every size is timed once per round,
	// rounds interleaved over the sizes.
	type point struct {
		specs    []entitlement.PoolSpec
		demand   []model.Resources
		capacity model.Resources
		solver   *entitlement.Solver
		pools    []model.Pool
		states   []policy.RegionState
	}
	points := make([]point, len(sizes))
	for i, n := range sizes {
		specs, demand := poolTree(n, uint64(n))
		tree, err := entitlement.NewTree(specs)
		if err != nil {
			return nil, err
		}
		p := point{specs: specs, demand: make([]model.Resources, tree.Len()), solver: entitlement.NewSolver(tree)}
		for j := range p.demand {
			p.demand[j] = demand[tree.Path(j)]
			p.capacity = p.capacity.Add(p.demand[j])
		}
		for k := range model.ResourceKinds {
			p.capacity = p.capacity.Set(k, p.capacity.Get(k)/2)
		}
		p.pools, p.states = federated(specs, demand, regions)
		points[i] = p
	}
	opts := entitlement.Options{Headroom: true}
	now := time.Now()
	best := make([][6]time.Duration, len(sizes))
	for round := range rounds {
		for i := range points {
			p := &points[i]
			build, buildCPU, err := fastest(func() error { _, err := entitlement.NewTree(p.specs); return err })
			if err != nil {
				return nil, err
			}
			shard, shardCPU, _ := fastest(func() error { p.solver.Compute(p.capacity, p.demand, opts); return nil })
			var shares policy.Shares
			global, globalCPU, _ := fastest(func() error { shares = policy.SplitPools(p.pools, p.states, now, time.Minute); return nil })
			if len(shares) != regions {
				return nil, fmt.Errorf("global pass over %d pools gave shares for %d regions", sizes[i], len(shares))
			}
			for j, d := range [6]time.Duration{shard, build, global, shardCPU, buildCPU, globalCPU} {
				if round == 0 || d < best[i][j] {
					best[i][j] = d
				}
			}
			log("entitlement: %d pools: shard pass %.3fms, tree build %.3fms, global pass %.3fms", sizes[i], ms(shard), ms(build), ms(global))
		}
	}
	for i, n := range sizes {
		row := []float64{float64(n)}
		for _, d := range best[i] {
			row = append(row, ms(d))
		}
		c.Rows = append(c.Rows, row)
	}
	c.Notes = []string{
		slopeNote(c, "Wall-clock time per call (the fastest run; the columns without _cpu), which other work on the machine lengthens: ",
			Cost, [][2]string{{"shard pass", "shard_pass_ms"}, {"tree build", "tree_build_ms"}, {"global pass", "global_pass_ms"}}),
		"The shard's pass visits each pool once per resource and, at each parent, water-fills its children: sorting a " +
			"parent's children costs O(k log k), so the work of the whole pass is O(pools · log fanout), linear in pools.",
		"The global pass splits each pool among the regions, sibling group by sibling group, with per-region maps of " +
			"every pool's usage: its work is linear in pools × regions.",
	}
	return c, nil
}

// poolTree makes n pools: the root, then children of fanout 10 in
// breadth-first order. Half of each parent's children reserve 2/11 of its
// reservation; limits lie above reservations; shares are 1 to 4; every leaf
// demands up to 20 units of each resource.
func poolTree(n int, seed uint64) ([]entitlement.PoolSpec, map[string]model.Resources) {
	const fanout = 10
	rng := rand.New(rand.NewPCG(seed, 19))
	specs := make([]entitlement.PoolSpec, 0, n)
	children := make([]int, 0, n)
	add := func(path string, reservation model.Resources) {
		s := entitlement.PoolSpec{Path: path, Reservation: reservation}
		for k := range model.ResourceKinds {
			s.Limit = s.Limit.Set(k, reservation.Get(k)+rng.Int64N(5000))
			s.Share = s.Share.Set(k, float64(1+rng.IntN(4)))
		}
		specs = append(specs, s)
		children = append(children, 0)
	}
	add(entitlement.RootPath, model.Resources{MilliCPU: 4_000_000, MemMB: 4_000_000, DiskMB: 4_000_000, GPU: 4_000_000})
	for parent := 0; len(specs) < n; parent++ {
		for c := 0; c < fanout && len(specs) < n; c++ {
			var r model.Resources
			if c%2 == 0 {
				for k := range model.ResourceKinds {
					r = r.Set(k, specs[parent].Reservation.Get(k)*2/(fanout+1))
				}
			}
			prefix := specs[parent].Path
			if prefix == entitlement.RootPath {
				prefix = ""
			}
			add(prefix+"/p"+strconv.Itoa(c), r)
			children[parent]++
		}
	}
	demand := map[string]model.Resources{}
	for i, s := range specs {
		if children[i] == 0 {
			var d model.Resources
			for k := range model.ResourceKinds {
				d = d.Set(k, rng.Int64N(20))
			}
			demand[s.Path] = d
		}
	}
	return specs, demand
}

// federated turns the tree into the global pass's input: every pool, and
// regions that each report a part of every leaf's demand (parents summing
// their children's) and a capacity.
func federated(specs []entitlement.PoolSpec, demand map[string]model.Resources, regions int) ([]model.Pool, []policy.RegionState) {
	pools := make([]model.Pool, len(specs))
	for i, s := range specs {
		pools[i] = model.Pool{Path: s.Path, Reservation: s.Reservation, Limit: s.Limit, Share: s.Share}
	}
	now := time.Now()
	states := make([]policy.RegionState, regions)
	var total model.Resources
	for _, d := range demand {
		total = total.Add(d)
	}
	for r := range states {
		usage := make(map[string]policy.PoolUsage, len(specs))
		// Leaves first (deepest paths last in breadth-first order), then
		// each parent sums its children.
		for i := len(specs) - 1; i >= 0; i-- {
			path := specs[i].Path
			u := usage[path]
			if d, ok := demand[path]; ok {
				for k := range model.ResourceKinds {
					u.Demand = u.Demand.Set(k, d.Get(k)*int64(1+(i+r)%3)/3)
				}
				usage[path] = u
			}
			if pp, ok := entitlement.ParentPath(path); ok {
				p := usage[pp]
				p.Demand = p.Demand.Add(u.Demand)
				usage[pp] = p
			}
		}
		var capacity model.Resources
		for k := range model.ResourceKinds {
			capacity = capacity.Set(k, total.Get(k)/int64(regions))
		}
		states[r] = policy.RegionState{Name: "region-" + strconv.Itoa(r), Capacity: capacity, Pools: usage,
			Health: policy.HealthAlive, Seen: now}
	}
	return pools, states
}

// fastest runs f once, and again until 20 ms have passed (at most 100
// times), and returns the shortest duration and the process's CPU time per
// call over those runs (the garbage collector's included). On a shared
// machine a long call is also descheduled: its wall time exceeds its CPU
// time.
func fastest(f func() error) (wall, cpu time.Duration, err error) {
	wall = time.Duration(1<<63 - 1)
	start, cpu0 := time.Now(), placebench.CPUTime()
	runs := 0
	for ; runs == 0 || (time.Since(start) < 20*time.Millisecond && runs < 100); runs++ {
		t := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		wall = min(wall, time.Since(t))
	}
	return wall, (placebench.CPUTime() - cpu0) / time.Duration(runs), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
