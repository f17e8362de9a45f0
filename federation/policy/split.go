package policy

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// SplitPools divides every federated pool's global reservation and limit
// among the regions: the global entitlement pass, the local pass's max-min
// code one level up (entitlement.Split, with regions as the children).
//
// A region takes part when it is not failed and its state is fresh: Seen no
// older than maxAge before now (maxAge <= 0 disables aging). Every region
// given, taking part or not, gets an entry for every pool; a region that
// does not take part gets zero reservation and zero limit.
//
// Per pool and per resource, among the regions taking part:
//
//   - each region is weighted by its capacity of that resource, so what is
//     split beyond demand goes to regions in proportion to their size, and
//     a region without any of a resource gets none of it;
//   - reservation, demand first: the reservation is water-filled by weight
//     up to each region's demand for the pool (capped at its capacity);
//   - reservation, then idle: what no region demands is handed out by
//     weight, so the whole reservation is placed as long as the regions'
//     capacity holds it;
//   - limit: each region gets its reservation share, and the rest of the
//     limit is split the same two ways (demand first, then by weight), capped
//     at capacity. An unlimited resource stays unlimited in every region.
//
// A region's reservation shares never exceed its capacity, and pools nest as
// in the local pass: the reservation shares of a pool's children in a region
// add up to at most the pool's own share there (the top-level pools' to at
// most the region's capacity). Siblings are served in path order, each
// phase (demand, then idle) for all siblings before the next. So per
// resource, the shares of a group of siblings add up to their global
// reservations whenever the room they share (the regions' capacity for
// top-level pools, the parent's shares for children) holds them all, and to
// all of that room otherwise; demanded reservation is placed before idle
// reservation. The limit shares add up to at most the global limit, and
// each region's limit share is at least its reservation share. The root pool "/" stands for each region's own capacity and is not
// split; it gets no entry. A pool whose parent is not listed is budgeted
// like a top-level pool.
//
// The result depends only on the inputs, not on their order: regions are
// taken by name and pools by path (see sortedRegions, sortedPools for
// repeated names).
func SplitPools(pools []model.Pool, regions []RegionState, now time.Time, maxAge time.Duration) Shares {
	rs := sortedRegions(regions)
	ps := sortedPools(pools)
	ps = slices.DeleteFunc(ps, func(p model.Pool) bool { return p.Path == entitlement.RootPath })

	var taking []RegionState
	for _, r := range rs {
		if r.Health != HealthFailed && fresh(r.Seen, now, maxAge) {
			taking = append(taking, r)
		}
	}
	var g *globalSplit
	if len(taking) > 0 && len(ps) > 0 {
		g = newGlobalSplit(ps, taking)
		for _, group := range g.groups {
			g.splitReservations(group)
			for _, m := range group {
				g.splitLimit(m)
			}
		}
	}
	shares := make(Shares, len(rs))
	for _, r := range rs {
		shares[r.Name] = make(map[string]RegionShare, len(ps))
	}
	for _, r := range rs {
		out := shares[r.Name]
		j, ok := -1, false
		if g != nil {
			j, ok = slices.BinarySearchFunc(taking, r.Name, func(t RegionState, name string) int { return cmp.Compare(t.Name, name) })
		}
		for m, p := range ps {
			if !ok {
				out[p.Path] = RegionShare{}
				continue
			}
			at := m*g.n + j
			out[p.Path] = RegionShare{Reservation: g.reserved[at], Limit: g.limit[at]}
		}
	}
	return shares
}

// fresh reports whether state seen at seen is no older than maxAge at now.
func fresh(seen, now time.Time, maxAge time.Duration) bool {
	return maxAge <= 0 || now.Sub(seen) <= maxAge
}

// globalSplit is the state of one SplitPools pass over the regions taking
// part. Pools are indexed by their position in pools, regions by theirs
// in taking; what is kept per pool and region is at pool*n + region.
type globalSplit struct {
	n        int // regions taking part
	pools    []model.Pool
	capacity []model.Resources // by region
	weight   []model.Shares    // by region: its capacity as a share
	// groups are the pools by parent, in the order they are split (see
	// siblingGroups); parent is each pool's listed parent, -1 for none.
	groups [][]int
	parent []int
	// demand is each region's demand for each pool, capped at its
	// capacity; reserved and limit are the shares handed out.
	demand, reserved, limit []model.Resources
	// budget is what each pool's children may still reserve in each
	// region; rootBudget is the top-level pools' (the regions' capacity).
	budget, rootBudget []model.Resources

	claims []entitlement.Claim
	split  entitlement.Splitter
}

// newGlobalSplit indexes the pools (sorted by path, no root) and reads
// each taking region's demand for each pool once.
func newGlobalSplit(ps []model.Pool, taking []RegionState) *globalSplit {
	n := len(taking)
	g := &globalSplit{n: n, pools: ps, capacity: make([]model.Resources, n), weight: make([]model.Shares, n),
		demand: make([]model.Resources, len(ps)*n), reserved: make([]model.Resources, len(ps)*n),
		limit: make([]model.Resources, len(ps)*n), budget: make([]model.Resources, len(ps)*n),
		claims: make([]entitlement.Claim, n)}
	for j, r := range taking {
		g.capacity[j] = clampNonNegative(r.Capacity)
		g.weight[j] = model.SharesOf(g.capacity[j])
	}
	g.rootBudget = slices.Clone(g.capacity)
	for j, r := range taking {
		for m, p := range ps {
			g.demand[m*n+j] = clampNonNegative(r.Pools[p.Path].Demand).Min(g.capacity[j])
		}
	}
	g.groups, g.parent = siblingGroups(ps)
	return g
}

// siblingGroups groups the pools (sorted by path) by parent, as indices
// into ps: groups ordered so that a parent's group comes before its
// children's (by depth, then parent path), members by path. Pools whose
// parent is not listed join the top-level group. parent holds each pool's
// listed parent, -1 for none.
func siblingGroups(ps []model.Pool) (groups [][]int, parent []int) {
	index := make(map[string]int, len(ps))
	for m, p := range ps {
		index[p.Path] = m
	}
	parent = make([]int, len(ps))
	byParent := make(map[int][]int)
	var parents []int
	for m, p := range ps {
		parent[m] = -1
		if pp, ok := entitlement.ParentPath(p.Path); ok {
			if i, ok := index[pp]; ok {
				parent[m] = i
			}
		}
		if _, ok := byParent[parent[m]]; !ok {
			parents = append(parents, parent[m])
		}
		byParent[parent[m]] = append(byParent[parent[m]], m)
	}
	pathOf := func(i int) string {
		if i < 0 {
			return entitlement.RootPath
		}
		return ps[i].Path
	}
	depth := func(path string) int {
		if path == entitlement.RootPath {
			return 0
		}
		return strings.Count(path, "/")
	}
	slices.SortFunc(parents, func(a, b int) int {
		pa, pb := pathOf(a), pathOf(b)
		if c := cmp.Compare(depth(pa), depth(pb)); c != 0 {
			return c
		}
		return cmp.Compare(pa, pb)
	})
	groups = make([][]int, len(parents))
	for i, pp := range parents {
		groups[i] = byParent[pp]
	}
	return groups, parent
}

// budgetOf returns the budget a pool's children may still reserve, by
// region: the pool's own, or the regions' capacity for the root (m < 0).
func (g *globalSplit) budgetOf(m int) []model.Resources {
	if m < 0 {
		return g.rootBudget
	}
	return g.budget[m*g.n : (m+1)*g.n]
}

// splitReservations divides the reservations of one group of siblings
// among the regions, demand first for all of them, then what is idle, and
// records each member's shares as its budget for its own children.
func (g *globalSplit) splitReservations(group []int) {
	n := g.n
	budget := g.budgetOf(g.parent[group[0]])
	for _, m := range group {
		for j := range n {
			g.claims[j] = entitlement.Claim{Demand: g.demand[m*n+j], Limit: budget[j], Share: g.weight[j]}
		}
		grants := g.split.Split(g.pools[m].Reservation, g.claims, entitlement.Options{})
		for j, gr := range grants {
			g.reserved[m*n+j] = gr.Entitlement
			budget[j] = clampNonNegative(budget[j].Sub(gr.Entitlement))
		}
	}
	for _, m := range group {
		reserved := g.reserved[m*n : (m+1)*n]
		given := model.Resources{}
		for j := range n {
			given = given.Add(reserved[j])
			g.claims[j] = entitlement.Claim{Limit: budget[j], Share: g.weight[j]}
		}
		idle := clampNonNegative(clampNonNegative(g.pools[m].Reservation).Sub(given))
		grants := g.split.Split(idle, g.claims, entitlement.Options{Headroom: true})
		for j, gr := range grants {
			reserved[j] = reserved[j].Add(gr.Headroom)
			budget[j] = clampNonNegative(budget[j].Sub(gr.Headroom))
		}
		copy(g.budgetOf(m), reserved)
	}
}

// splitLimit divides one pool's limit among the regions on top of their
// reservation shares: the part of the limit above the reservations handed
// out is split demand first, then by weight, capped at capacity.
func (g *globalSplit) splitLimit(m int) {
	n := g.n
	p := g.pools[m]
	reservations := g.reserved[m*n : (m+1)*n]
	var reserved model.Resources
	for _, r := range reservations {
		reserved = reserved.Add(r)
	}
	var extra model.Resources
	for k := range model.ResourceKinds {
		if l := p.Limit.Get(k); l != model.Unlimited {
			extra = extra.Set(k, l-reserved.Get(k)) // negative counts as zero
		}
	}
	for j := range n {
		g.claims[j] = entitlement.Claim{
			Demand: clampNonNegative(g.demand[m*n+j].Sub(reservations[j])),
			Limit:  clampNonNegative(g.capacity[j].Sub(reservations[j])),
			Share:  g.weight[j],
		}
	}
	grants := g.split.Split(extra, g.claims, entitlement.Options{Headroom: true})
	for j, gr := range grants {
		l := reservations[j].Add(gr.Entitlement).Add(gr.Headroom)
		for k := range model.ResourceKinds {
			if p.Limit.Get(k) == model.Unlimited {
				l = l.Set(k, model.Unlimited)
			}
		}
		g.limit[m*n+j] = l
	}
}
