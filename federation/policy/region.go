package policy

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Health is how the federation sees a region. The zero value is alive.
type Health uint8

const (
	// HealthAlive: some member of the region is reachable, or was recently.
	HealthAlive Health = iota
	// HealthSuspect: no member has been reachable for a while; the region
	// keeps its quota shares and its work but gets no new jobs.
	HealthSuspect
	// HealthFailed: no member has been reachable for long enough, or the
	// region is fenced; it gets no quota and its relocatable jobs move.
	HealthFailed
)

var healthNames = [...]string{"alive", "suspect", "failed"}

func (h Health) String() string {
	if int(h) < len(healthNames) {
		return healthNames[h]
	}
	return "unknown"
}

// RegionState is one region as the federation sees it, assembled by the
// shell from gossip and the region's shard.
type RegionState struct {
	Name string
	// Capacity is the total of the region's up hosts; Allocation is what
	// its running and launching tasks hold, across all pools.
	Capacity   model.Resources
	Allocation model.Resources
	// HostLabels maps each host label key to the distinct values it has on
	// the region's up hosts. It answers "could some host here satisfy this
	// constraint?" (see CouldSatisfy).
	HostLabels map[string][]string
	// Pools holds the region's usage of each pool, by pool path. A parent
	// pool's demand and allocation are the sums of its children's, as in
	// the local pass.
	Pools  map[string]PoolUsage
	Health Health
	// Seen is when the region last reported this state. SplitPools ignores
	// regions whose state is older than its maxAge.
	Seen time.Time
}

// PoolUsage is one region's use of one pool: what its queued and running
// work asks for, and what its running work holds.
type PoolUsage struct {
	Demand     model.Resources
	Allocation model.Resources
}

// RegionShare is a region's share of a federated pool: the reservation and
// limit its shard uses for the pool in its local entitlement pass.
type RegionShare struct {
	Reservation model.Resources
	Limit       model.Resources
}

// Shares holds every region's share of every pool: region → pool path →
// share, as SplitPools computes them.
type Shares map[string]map[string]RegionShare

// Get returns the share of pool in region, and whether there is one.
func (s Shares) Get(region, pool string) (RegionShare, bool) {
	sh, ok := s[region][pool]
	return sh, ok
}

// sortedRegions returns the regions ordered by name, one per name: of
// several states with the same name the most recently seen wins, and of
// those the one whose fields compare greatest, so the outcome never depends
// on the input order.
func sortedRegions(regions []RegionState) []RegionState {
	out := slices.Clone(regions)
	slices.SortStableFunc(out, func(a, b RegionState) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := b.Seen.Compare(a.Seen); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Health, a.Health); c != 0 {
			return c
		}
		if c := compareResources(b.Capacity, a.Capacity); c != 0 {
			return c
		}
		return compareResources(b.Allocation, a.Allocation)
	})
	return slices.CompactFunc(out, func(a, b RegionState) bool { return a.Name == b.Name })
}

// sortedPools returns the pools ordered by path, one per path (the one
// whose numbers compare greatest when a path repeats).
func sortedPools(pools []model.Pool) []model.Pool {
	out := slices.Clone(pools)
	slices.SortStableFunc(out, func(a, b model.Pool) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := compareResources(b.Reservation, a.Reservation); c != 0 {
			return c
		}
		if c := compareResources(b.Limit, a.Limit); c != 0 {
			return c
		}
		return compareShares(b.Share, a.Share)
	})
	return slices.CompactFunc(out, func(a, b model.Pool) bool { return a.Path == b.Path })
}

// compareResources orders amounts component by component, in the order of
// model.ResourceKinds.
func compareResources(a, b model.Resources) int {
	for k := range model.ResourceKinds {
		if c := cmp.Compare(a.Get(k), b.Get(k)); c != 0 {
			return c
		}
	}
	return 0
}

// compareShares orders shares component by component, in the order of
// model.ResourceKinds.
func compareShares(a, b model.Shares) int {
	for k := range model.ResourceKinds {
		if c := cmp.Compare(a.Get(k), b.Get(k)); c != 0 {
			return c
		}
	}
	return 0
}

// clampNonNegative maps negative components to zero.
func clampNonNegative(r model.Resources) model.Resources { return r.Max(model.Resources{}) }

// leftOf is what a limit leaves after used: limit - used, where an
// unlimited component stays unlimited.
func leftOf(limit, used model.Resources) model.Resources {
	left := limit.Sub(used)
	for k := range model.ResourceKinds {
		if limit.Get(k) == model.Unlimited {
			left = left.Set(k, model.Unlimited)
		}
	}
	return left
}

// tasksThatFit returns how many whole tasks of size perTask fit in room:
// the smallest room/perTask, rounded down, over the resources the task
// uses and room is not unlimited in; model.Unlimited when that leaves none;
// 0 when some room is not above zero for a resource it uses.
func tasksThatFit(room, perTask model.Resources) int64 {
	n := model.Unlimited
	for k := range model.ResourceKinds {
		need := perTask.Get(k)
		if need <= 0 {
			continue
		}
		have := room.Get(k)
		if have <= 0 {
			return 0
		}
		if have != model.Unlimited {
			n = min(n, have/need)
		}
	}
	return n
}

// scale multiplies per-task resources by an instance count.
func scale(perTask model.Resources, instances uint32) model.Resources {
	return clampNonNegative(perTask).Scale(int64(instances))
}

// formatResources renders the non-zero components compactly, as reasons
// show them: "cpu=4 mem=512"; "none" when all are zero.
func formatResources(r model.Resources) string {
	s := ""
	for k, name := range model.ResourceKinds {
		v := r.Get(k)
		if v == 0 {
			continue
		}
		if s != "" {
			s += " "
		}
		s += name + "=" + model.FormatAmount(k, v)
	}
	if s == "" {
		return "none"
	}
	return s
}

// formatTasks renders a task count for reasons: "1 task", "7 tasks",
// "unlimited tasks".
func formatTasks(n int64) string {
	switch n {
	case model.Unlimited:
		return "unlimited tasks"
	case 1:
		return "1 task"
	}
	return strconv.FormatInt(n, 10) + " tasks"
}
