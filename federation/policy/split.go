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

	shares := make(Shares, len(rs))
	var taking []RegionState
	for _, r := range rs {
		m := make(map[string]RegionShare, len(ps))
		for _, p := range ps {
			m[p.Path] = RegionShare{}
		}
		shares[r.Name] = m
		if r.Health != HealthFailed && fresh(r.Seen, now, maxAge) {
			taking = append(taking, r)
		}
	}
	if len(taking) == 0 || len(ps) == 0 {
		return shares
	}
	g := globalSplit{regions: taking, budget: make(map[string][]model.Resources)}
	g.capacity = make([]model.Resources, len(taking))
	for j, r := range taking {
		g.capacity[j] = clampNonNegative(r.Capacity)
	}
	g.budget[entitlement.RootPath] = slices.Clone(g.capacity)
	for _, group := range siblingGroups(ps) {
		reservations := g.splitReservations(group)
		for m, p := range group {
			limits := g.splitLimit(p, reservations[m])
			for j, r := range taking {
				shares[r.Name][p.Path] = RegionShare{Reservation: reservations[m][j], Limit: limits[j]}
			}
		}
	}
	return shares
}

// fresh reports whether state seen at seen is no older than maxAge at now.
func fresh(seen, now time.Time, maxAge time.Duration) bool {
	return maxAge <= 0 || now.Sub(seen) <= maxAge
}

// globalSplit is the state of one SplitPools pass over the regions taking
// part, indexed like regions.
type globalSplit struct {
	regions  []RegionState
	capacity []model.Resources
	// budget maps a pool path to what its children may still reserve in
	// each region; the root's budget is the regions' capacity.
	budget map[string][]model.Resources
}

// siblingGroups groups pools by parent, groups ordered so that a parent's
// group comes before its children's (by depth, then parent path), members
// by path. Pools whose parent is not listed join the top-level group.
func siblingGroups(ps []model.Pool) [][]model.Pool {
	listed := make(map[string]bool, len(ps))
	for _, p := range ps {
		listed[p.Path] = true
	}
	parentOf := func(path string) string {
		if pp, ok := entitlement.ParentPath(path); ok && listed[pp] {
			return pp
		}
		return entitlement.RootPath
	}
	depth := func(path string) int {
		if path == entitlement.RootPath {
			return 0
		}
		return strings.Count(path, "/")
	}
	byParent := make(map[string][]model.Pool)
	var parents []string
	for _, p := range ps {
		pp := parentOf(p.Path)
		if _, ok := byParent[pp]; !ok {
			parents = append(parents, pp)
		}
		byParent[pp] = append(byParent[pp], p)
	}
	slices.SortFunc(parents, func(a, b string) int {
		if c := cmp.Compare(depth(a), depth(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	groups := make([][]model.Pool, len(parents))
	for i, pp := range parents {
		groups[i] = byParent[pp]
	}
	return groups
}

// parentBudget returns the budget the group's parent leaves its children.
func (g *globalSplit) parentBudget(path string) []model.Resources {
	if pp, ok := entitlement.ParentPath(path); ok {
		if b, ok := g.budget[pp]; ok {
			return b
		}
	}
	return g.budget[entitlement.RootPath]
}

// splitReservations divides the reservations of one group of siblings
// among the regions, demand first for all of them, then what is idle; it
// returns each member's shares by region and records them as the members'
// budgets for their own children.
func (g *globalSplit) splitReservations(group []model.Pool) [][]model.Resources {
	n := len(g.regions)
	budget := g.parentBudget(group[0].Path)
	out := make([][]model.Resources, len(group))
	claims := make([]entitlement.Claim, n)
	for m, p := range group {
		for j, r := range g.regions {
			claims[j] = entitlement.Claim{
				Demand: clampNonNegative(r.Pools[p.Path].Demand).Min(g.capacity[j]),
				Limit:  budget[j],
				Share:  model.SharesOf(g.capacity[j]),
			}
		}
		grants := entitlement.Split(p.Reservation, claims, entitlement.Options{})
		out[m] = make([]model.Resources, n)
		for j, gr := range grants {
			out[m][j] = gr.Entitlement
			budget[j] = clampNonNegative(budget[j].Sub(gr.Entitlement))
		}
	}
	for m, p := range group {
		given := model.Resources{}
		for j := range n {
			given = given.Add(out[m][j])
			claims[j] = entitlement.Claim{Limit: budget[j], Share: model.SharesOf(g.capacity[j])}
		}
		idle := clampNonNegative(clampNonNegative(p.Reservation).Sub(given))
		grants := entitlement.Split(idle, claims, entitlement.Options{Headroom: true})
		for j, gr := range grants {
			out[m][j] = out[m][j].Add(gr.Headroom)
			budget[j] = clampNonNegative(budget[j].Sub(gr.Headroom))
		}
		g.budget[p.Path] = slices.Clone(out[m])
	}
	return out
}

// splitLimit divides one pool's limit among the regions on top of their
// reservation shares: the part of the limit above the reservations handed
// out is split demand first, then by weight, capped at capacity.
func (g *globalSplit) splitLimit(p model.Pool, reservations []model.Resources) []model.Resources {
	n := len(g.regions)
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
	claims := make([]entitlement.Claim, n)
	for j, r := range g.regions {
		room := clampNonNegative(g.capacity[j].Sub(reservations[j]))
		claims[j] = entitlement.Claim{
			Demand: clampNonNegative(clampNonNegative(r.Pools[p.Path].Demand).Min(g.capacity[j]).Sub(reservations[j])),
			Limit:  room,
			Share:  model.SharesOf(g.capacity[j]),
		}
	}
	grants := entitlement.Split(extra, claims, entitlement.Options{Headroom: true})
	out := make([]model.Resources, n)
	for j, gr := range grants {
		l := reservations[j].Add(gr.Entitlement).Add(gr.Headroom)
		for k := range model.ResourceKinds {
			if p.Limit.Get(k) == model.Unlimited {
				l = l.Set(k, model.Unlimited)
			}
		}
		out[j] = l
	}
	return out
}
