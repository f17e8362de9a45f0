package policy

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// TestSplitPoolsMatchesReference compares SplitPools, which indexes pools
// and regions by position, with the plain form of the same rules below
// (maps keyed by pool path), on random federations: deeper trees, pools
// whose parent is not listed, the root listed, repeated paths, regions
// failed, stale or repeated.
func TestSplitPoolsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	paths := []string{"/", "/a", "/a/x", "/a/x/1", "/a/x/2", "/a/y", "/b", "/b/z", "/c/orphan", "/c/orphan/leaf", "/d"}
	for i := range 3000 {
		now := epoch.Add(time.Hour)
		var regions []RegionState
		for r := range rng.IntN(6) {
			st := RegionState{Name: fmt.Sprintf("r%d", rng.IntN(r+1)), Capacity: randomResources(rng, 2000),
				Seen: now.Add(-time.Duration(rng.IntN(90)) * time.Second), Health: Health(rng.IntN(4) / 3 * 2), Pools: map[string]PoolUsage{}}
			for _, p := range paths {
				if rng.IntN(3) > 0 {
					st.Pools[p] = PoolUsage{Demand: randomResources(rng, 700)}
				}
			}
			regions = append(regions, st)
		}
		var pools []model.Pool
		for _, path := range paths {
			for range rng.IntN(3) {
				p := model.Pool{Path: path, Reservation: randomResources(rng, 500), Share: model.EqualShares(float64(1 + rng.IntN(3)))}
				p.Limit = p.Reservation.Add(randomResources(rng, 900))
				for k := range model.ResourceKinds {
					if rng.IntN(3) == 0 {
						p.Limit = p.Limit.Set(k, model.Unlimited)
					}
				}
				pools = append(pools, p)
			}
		}
		maxAge := time.Duration(rng.IntN(2)) * time.Minute
		got := SplitPools(pools, regions, now, maxAge)
		want := referenceSplitPools(pools, regions, now, maxAge)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: pools %v, regions %v:\ngot  %v\nwant %v", i, pools, regions, got, want)
		}
	}
}

// referenceSplitPools is SplitPools as first written: the same rules,
// with each region's budgets and shares in maps keyed by pool path.
func referenceSplitPools(pools []model.Pool, regions []RegionState, now time.Time, maxAge time.Duration) Shares {
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
	g := refSplit{regions: taking, budget: make(map[string][]model.Resources)}
	g.capacity = make([]model.Resources, len(taking))
	for j, r := range taking {
		g.capacity[j] = clampNonNegative(r.Capacity)
	}
	g.budget[entitlement.RootPath] = slices.Clone(g.capacity)
	for _, group := range refSiblingGroups(ps) {
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

// refSplit is the state of one SplitPools pass over the regions taking
// part, indexed like regions.
type refSplit struct {
	regions  []RegionState
	capacity []model.Resources
	// budget maps a pool path to what its children may still reserve in
	// each region; the root's budget is the regions' capacity.
	budget map[string][]model.Resources
}

// refSiblingGroups groups pools by parent, groups ordered so that a parent's
// group comes before its children's (by depth, then parent path), members
// by path. Pools whose parent is not listed join the top-level group.
func refSiblingGroups(ps []model.Pool) [][]model.Pool {
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

// refParentBudget returns the budget the group's parent leaves its children.
func (g *refSplit) refParentBudget(path string) []model.Resources {
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
func (g *refSplit) splitReservations(group []model.Pool) [][]model.Resources {
	n := len(g.regions)
	budget := g.refParentBudget(group[0].Path)
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
func (g *refSplit) splitLimit(p model.Pool, reservations []model.Resources) []model.Resources {
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
