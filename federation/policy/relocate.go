package policy

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// RelocatableJob is a job of a failed region that may be re-created
// elsewhere.
type RelocatableJob struct {
	ID      string
	Pool    string
	PerTask model.Resources
	// Remaining counts the instances not yet succeeded: only they move.
	Remaining   uint32
	Constraints []model.Constraint
	// Targets restricts where the job may go; empty means any region. It is
	// a set, not an order of preference.
	Targets []string
}

// Move re-creates a job in another region.
type Move struct {
	Job string
	To  string
	// Needs is what the moved instances hold: PerTask × Remaining.
	Needs model.Resources
}

// Unplaced is a job that no surviving region can take, and why.
type Unplaced struct {
	Job    string
	Reason string
}

// Plan is the outcome of planning a region's failover: moves in the order
// they were planned (biggest job first), then the jobs that fit nowhere.
type Plan struct {
	Moves    []Move
	Unplaced []Unplaced
}

// PlanRelocation plans where the relocatable jobs of the failed region go.
//
// Jobs are placed one at a time, biggest first (by the largest fraction of
// the survivors' total capacity of any resource they need), then by ID; a
// job with nothing remaining is left out. Each job moves whole, to a
// surviving region (alive and not the failed one) that is among its targets,
// whose hosts might satisfy its constraints (CouldSatisfy) and whose free
// capacity (capacity minus allocation minus earlier moves) holds all its
// remaining instances; of those, the one with room for the most of its
// tasks, then the first by name.
//
// Moves respect the global quotas: the job's pool and each of its listed
// ancestors must have enough of its global limit left, counting what the
// pool holds in every region but the failed one, plus earlier moves (a
// parent pool's allocation is the sum of its children's, as in the local
// pass). The region shares are not a bound here: they follow demand and are
// recomputed by SplitPools once the moved jobs demand in their new regions.
// A job whose pool is not among pools stays unplaced.
//
// Every job with remaining instances ends up in exactly one of Moves and
// Unplaced. The plan depends only on the inputs, not on their order.
func PlanRelocation(failed string, jobs []RelocatableJob, regions []RegionState, pools []model.Pool) Plan {
	rs := sortedRegions(regions)
	var survivors []int
	var total model.Resources
	free := make([]model.Resources, len(rs))
	for i, r := range rs {
		if r.Name == failed || r.Health != HealthAlive {
			continue
		}
		survivors = append(survivors, i)
		total = total.Add(clampNonNegative(r.Capacity))
		free[i] = clampNonNegative(r.Capacity.Sub(r.Allocation))
	}
	quota := newQuotaLeft(failed, rs, pools)

	order := make([]RelocatableJob, 0, len(jobs))
	for _, j := range jobs {
		if j.Remaining > 0 {
			order = append(order, j)
		}
	}
	size := func(j RelocatableJob) float64 { return dominantShare(scale(j.PerTask, j.Remaining), total) }
	slices.SortStableFunc(order, func(a, b RelocatableJob) int {
		if c := cmp.Compare(size(b), size(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return compareJobs(a, b)
	})

	var plan Plan
	for _, j := range order {
		needs := scale(j.PerTask, j.Remaining)
		if why := quota.check(j.Pool, needs); why != "" {
			plan.Unplaced = append(plan.Unplaced, Unplaced{Job: j.ID, Reason: why})
			continue
		}
		best, bestFit := -1, int64(0)
		var why []string
		for i, r := range rs {
			if r.Name == failed {
				continue
			}
			if reason := relocationExclusion(j, r, needs, free[i]); reason != "" {
				why = append(why, r.Name+": "+reason)
				continue
			}
			// Regions are in name order, so a tie keeps the first by name.
			if fit := tasksThatFit(free[i], j.PerTask); best < 0 || fit > bestFit {
				best, bestFit = i, fit
			}
		}
		if best < 0 {
			reason := "no surviving region can hold it"
			if len(why) > 0 {
				reason += ": " + strings.Join(why, "; ")
			}
			plan.Unplaced = append(plan.Unplaced, Unplaced{Job: j.ID, Reason: reason})
			continue
		}
		free[best] = clampNonNegative(free[best].Sub(needs))
		quota.take(j.Pool, needs)
		plan.Moves = append(plan.Moves, Move{Job: j.ID, To: rs[best].Name, Needs: needs})
	}
	return plan
}

// PlanAll answers "could the others absorb each region's relocatable
// work?": for every region named in regions or jobs (region → its
// relocatable jobs), the plan if that region failed now.
func PlanAll(jobs map[string][]RelocatableJob, regions []RegionState, pools []model.Pool) map[string]Plan {
	names := make(map[string]bool, len(regions)+len(jobs))
	for _, r := range regions {
		names[r.Name] = true
	}
	for name := range jobs {
		names[name] = true
	}
	out := make(map[string]Plan, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		out[name] = PlanRelocation(name, jobs[name], regions, pools)
	}
	return out
}

// relocationExclusion says why region r cannot take job j; empty if it can.
func relocationExclusion(j RelocatableJob, r RegionState, needs, free model.Resources) string {
	switch {
	case len(j.Targets) > 0 && !slices.Contains(j.Targets, r.Name):
		return "not a target"
	case r.Health != HealthAlive:
		return r.Health.String()
	}
	if c, bad := firstUnsatisfiable(j.Constraints, r.HostLabels); bad {
		return "no host can satisfy " + c.String()
	}
	if !needs.Fits(free) {
		return "needs " + formatResources(needs) + ", free " + formatResources(only(free, needs))
	}
	return ""
}

// dominantShare is the largest fraction of total that needs takes of any
// resource; +Inf when it needs a resource total has none of.
func dominantShare(needs, total model.Resources) float64 {
	share := 0.0
	for k := range model.ResourceKinds {
		n := needs.Get(k)
		if n <= 0 {
			continue
		}
		t := total.Get(k)
		if t <= 0 {
			return math.Inf(1)
		}
		share = max(share, float64(n)/float64(t))
	}
	return share
}

// compareJobs orders jobs with the same ID by their other fields, so that
// repeated IDs are planned in an order independent of the input's.
func compareJobs(a, b RelocatableJob) int {
	if c := cmp.Compare(a.Pool, b.Pool); c != 0 {
		return c
	}
	if c := compareResources(a.PerTask, b.PerTask); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Remaining, b.Remaining); c != 0 {
		return c
	}
	if c := slices.Compare(a.Targets, b.Targets); c != 0 {
		return c
	}
	return cmp.Compare(len(a.Constraints), len(b.Constraints))
}

// quotaLeft tracks, per listed pool, how much of its global limit is left.
type quotaLeft struct {
	left map[string]model.Resources
}

func newQuotaLeft(failed string, rs []RegionState, pools []model.Pool) quotaLeft {
	q := quotaLeft{left: make(map[string]model.Resources, len(pools))}
	for _, p := range sortedPools(pools) {
		l := clampNonNegative(p.Limit)
		for _, r := range rs {
			if r.Name != failed {
				l = leftOf(l, clampNonNegative(r.Pools[p.Path].Allocation))
			}
		}
		q.left[p.Path] = l
	}
	return q
}

// chain returns the pool and its listed ancestors, the pool first.
func (q quotaLeft) chain(pool string) []string {
	var out []string
	for p, ok := pool, true; ok; p, ok = entitlement.ParentPath(p) {
		if _, listed := q.left[p]; listed {
			out = append(out, p)
		}
	}
	return out
}

// check says why needs does not fit in the quota of pool; empty if it does.
func (q quotaLeft) check(pool string, needs model.Resources) string {
	if _, ok := q.left[pool]; !ok {
		return "pool " + pool + " is not a federated pool"
	}
	for _, p := range q.chain(pool) {
		if left := q.left[p]; !needs.Fits(left) {
			return "pool " + p + " global limit: needs " + formatResources(needs) + ", left " + formatResources(only(clampNonNegative(left), needs))
		}
	}
	return ""
}

func (q quotaLeft) take(pool string, needs model.Resources) {
	for _, p := range q.chain(pool) {
		q.left[p] = leftOf(q.left[p], needs)
	}
}

// only keeps the components of r that needs asks for, for reasons.
func only(r, needs model.Resources) model.Resources {
	var out model.Resources
	for k := range model.ResourceKinds {
		if needs.Get(k) > 0 {
			out = out.Set(k, r.Get(k))
		}
	}
	return out
}
