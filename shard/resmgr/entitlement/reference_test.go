package entitlement

import (
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// This file holds a slow, plainly written reference for the pass: pools are
// looked up by path in maps, demand is aggregated by recursion, and each
// division fills progressively in rounds (give every unsaturated claimant its
// weighted part of what is left; repeat while someone saturated) instead of
// sorting thresholds), then rounds what is left among the unsaturated by
// the largest remainder rule, written out plainly.

type referencePool struct {
	demand, entitlement, headroom model.Resources
}

type reference struct {
	specs    map[string]PoolSpec
	children map[string][]string
	demand   map[string]model.Resources
	headroom bool
	out      map[string]*referencePool
}

// referenceCompute runs the reference pass; demand is keyed by leaf path.
func referenceCompute(specs []PoolSpec, capacity model.Resources, demand map[string]model.Resources, headroom bool) map[string]*referencePool {
	r := &reference{
		specs:    map[string]PoolSpec{},
		children: map[string][]string{},
		demand:   demand,
		headroom: headroom,
		out:      map[string]*referencePool{},
	}
	for _, s := range specs {
		r.specs[s.Path] = s
		r.out[s.Path] = &referencePool{}
		if parent, ok := ParentPath(s.Path); ok {
			r.children[parent] = append(r.children[parent], s.Path)
		}
	}
	if _, ok := r.specs[RootPath]; !ok {
		return r.out
	}
	r.aggregate(RootPath)
	for k := range kinds {
		c := max(capacity.Get(k), 0)
		r.divide(k, c, c, []string{RootPath})
	}
	return r.out
}

func (r *reference) aggregate(path string) model.Resources {
	var d model.Resources
	if kids := r.children[path]; len(kids) > 0 {
		for _, c := range kids {
			d = d.Add(r.aggregate(c))
		}
	} else {
		d = r.demand[path].Max(model.Resources{})
	}
	d = d.Min(r.specs[path].Limit)
	r.out[path].demand = d
	return d
}

// divide splits resource k of a parent (amount as entitlement, elasticCap
// as entitlement plus headroom) among the pools at paths, then recurses.
func (r *reference) divide(k int, amount, elasticCap int64, paths []string) {
	n := len(paths)
	demand := make([]int64, n)
	claims := make([]int64, n)
	reservations := make([]int64, n)
	shares := make([]float64, n)
	for i, p := range paths {
		s := r.specs[p]
		demand[i] = r.out[p].demand.Get(k)
		reservations[i] = s.Reservation.Get(k)
		shares[i] = s.Share.Get(k)
		claims[i] = min(demand[i], reservations[i])
	}
	ent, head := referenceLevel(amount, elasticCap, claims, reservations, shares, demand, r.limits(k, paths), r.headroom)
	for i, p := range paths {
		o := r.out[p]
		o.entitlement = o.entitlement.Set(k, ent[i])
		o.headroom = o.headroom.Set(k, head[i])
		if kids := r.children[p]; len(kids) > 0 {
			r.divide(k, ent[i], ent[i]+head[i], kids)
		}
	}
}

func (r *reference) limits(k int, paths []string) []int64 {
	out := make([]int64, len(paths))
	for i, p := range paths {
		out[i] = r.specs[p].Limit.Get(k)
	}
	return out
}

// referenceLevel is one level's division: reservation phase, elastic phase,
// headroom.
func referenceLevel(amount, elasticCap int64, claims, reservations []int64, shares []float64, demand, limits []int64, headroom bool) (ent, head []int64) {
	n := len(claims)
	resWeights := make([]float64, n)
	for i, r := range reservations {
		resWeights[i] = float64(r)
	}
	grant := progressiveFill(amount, claims, resWeights)
	left := amount
	rest := make([]int64, n)
	for i := range n {
		left -= grant[i]
		rest[i] = demand[i] - grant[i]
	}
	extra := progressiveFill(left, rest, shares)
	ent = make([]int64, n)
	unclaimed := elasticCap
	for i := range n {
		ent[i] = grant[i] + extra[i]
		unclaimed -= ent[i]
	}
	if !headroom {
		return ent, make([]int64, n)
	}
	room := make([]int64, n)
	for i := range n {
		room[i] = limits[i] - ent[i]
	}
	return ent, progressiveFill(unclaimed, room, shares)
}

// progressiveFill saturates in rounds: each round, every claimant that
// still wants more (and has a weight) is offered its weighted part of what
// the saturated ones leave; whoever that covers takes its cap, and the
// round repeats. When a round saturates nobody, what is left is divided
// among the rest by the largest remainder rule: the floor of each exact
// part, then one unit each to the largest remainders, first claimant first
// on ties.
func progressiveFill(amount int64, caps []int64, weights []float64) []int64 {
	out := make([]int64, len(caps))
	saturated := make([]bool, len(caps))
	if amount <= 0 {
		return out
	}
	for {
		left := amount
		totalWeight := 0.0
		var open []int
		for i := range caps {
			switch {
			case saturated[i]:
				left -= caps[i]
			case caps[i] > 0 && weights[i] > 0:
				open = append(open, i)
				totalWeight += weights[i]
			}
		}
		if len(open) == 0 || left <= 0 {
			return out
		}
		per := float64(left) / totalWeight
		more := false
		for _, i := range open {
			if per*weights[i] >= float64(caps[i]) {
				saturated[i], out[i] = true, caps[i]
				more = true
			}
		}
		if more {
			continue
		}
		type part struct {
			i    int
			frac float64
		}
		parts := make([]part, len(open))
		for j, i := range open {
			exact := per * weights[i]
			out[i] = int64(exact)
			left -= out[i]
			parts[j] = part{i, exact - float64(out[i])}
		}
		slices.SortStableFunc(parts, func(a, b part) int {
			switch {
			case a.frac > b.frac:
				return -1
			case a.frac < b.frac:
				return 1
			}
			return 0
		})
		for j := 0; left > 0 && j < len(parts); j++ {
			out[parts[j].i]++
			left--
		}
		return out
	}
}
