package policy

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// TestPlanRelocationProperties: every job with work left is either moved or
// unplaced, once; moves go to alive regions other than the failed one,
// within targets, where the constraints might hold; they fit the regions'
// free capacity and the pools' global limits (ancestors included) taken
// together; and the plan ignores input order.
func TestPlanRelocationProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 2000 {
		c := randomSplitCase(rng)
		for j := range c.regions {
			c.regions[j].Allocation = scaleBy(c.regions[j].Capacity, rng.Float64())
			c.regions[j].HostLabels = summarize(randomHosts(rng))
			for p, u := range c.regions[j].Pools {
				u.Allocation = scaleBy(u.Demand, rng.Float64()/4)
				c.regions[j].Pools[p] = u
			}
		}
		failed := c.regions[rng.IntN(len(c.regions))].Name
		jobs := make([]RelocatableJob, rng.IntN(12))
		for j := range jobs {
			jobs[j] = RelocatableJob{
				ID:        fmt.Sprintf("j%02d", j),
				Pool:      poolPaths[rng.IntN(len(poolPaths))],
				PerTask:   randomResources(rng, 30),
				Remaining: uint32(rng.IntN(8)),
			}
			if rng.IntN(3) == 0 {
				jobs[j].Constraints = []model.Constraint{randomConstraint(rng, 1)}
			}
			if rng.IntN(3) == 0 {
				jobs[j].Targets = []string{"r0", "r1"}
			}
		}
		plan := PlanRelocation(failed, jobs, c.regions, c.pools)
		if again := PlanRelocation(failed, shuffled(rng, jobs), shuffled(rng, c.regions), shuffled(rng, c.pools)); !reflect.DeepEqual(plan, again) {
			t.Fatalf("case %d: order changed the plan:\n%+v\n%+v", i, plan, again)
		}
		seen := map[string]int{}
		for _, m := range plan.Moves {
			seen[m.Job]++
		}
		for _, u := range plan.Unplaced {
			seen[u.Job]++
			if u.Reason == "" {
				t.Fatalf("case %d: %s unplaced without a reason", i, u.Job)
			}
		}
		for _, j := range jobs {
			if want := min(int(j.Remaining), 1); seen[j.ID] != want {
				t.Fatalf("case %d: %s (remaining %d) appears %d times in the plan", i, j.ID, j.Remaining, seen[j.ID])
			}
		}
		byID := map[string]RelocatableJob{}
		for _, j := range jobs {
			byID[j.ID] = j
		}
		used := map[string]model.Resources{}
		poolUsed := map[string]model.Resources{}
		for _, m := range plan.Moves {
			j := byID[m.Job]
			var to *RegionState
			for k := range c.regions {
				if c.regions[k].Name == m.To {
					to = &c.regions[k]
				}
			}
			if to == nil || to.Name == failed || to.Health != HealthAlive ||
				len(j.Targets) > 0 && !slices.Contains(j.Targets, to.Name) || !CouldSatisfy(j.Constraints, to.HostLabels) {
				t.Fatalf("case %d: %s moved to %s, which may not take it", i, j.ID, m.To)
			}
			if m.Needs != j.PerTask.Scale(int64(j.Remaining)) {
				t.Fatalf("case %d: %s needs %v", i, j.ID, m.Needs)
			}
			used[m.To] = used[m.To].Add(m.Needs)
			for p, ok := j.Pool, true; ok; p, ok = parentOf(p) {
				poolUsed[p] = poolUsed[p].Add(m.Needs)
			}
		}
		for _, r := range c.regions {
			if !used[r.Name].Fits(clampNonNegative(r.Capacity.Sub(r.Allocation))) {
				t.Fatalf("case %d: moves to %s need %v, free %v", i, r.Name, used[r.Name], r.Capacity.Sub(r.Allocation))
			}
		}
		for _, p := range c.pools {
			held := model.Resources{}
			for _, r := range c.regions {
				if r.Name != failed {
					held = held.Add(r.Pools[p.Path].Allocation)
				}
			}
			for k := range model.ResourceKinds {
				if n := poolUsed[p.Path].Get(k); n > 0 && held.Get(k)+n > p.Limit.Get(k) {
					t.Fatalf("case %d: pool %s: held %v plus moved %v above limit %v", i, p.Path, held, poolUsed[p.Path], p.Limit)
				}
			}
		}
	}
}

// parentOf is the reference's own parent-path rule: drop the last segment.
func parentOf(path string) (string, bool) {
	i := len(path) - 1
	for i > 0 && path[i] != '/' {
		i--
	}
	if path == "/" {
		return "", false
	}
	if i == 0 {
		return "/", true
	}
	return path[:i], true
}
