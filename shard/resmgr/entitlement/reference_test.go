package entitlement

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// This file holds a slow, plainly written reference for the pass: pools are
// looked up by path in maps, demand is aggregated by recursion, and each
// division fills progressively in rounds (give every unsaturated claimant its
// weighted part of what is left; repeat while someone saturated) instead of
// sorting thresholds.

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
func (r *reference) divide(k int, amount, elasticCap float64, paths []string) {
	n := len(paths)
	demand := make([]float64, n)
	claims := make([]float64, n)
	reservations := make([]float64, n)
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

func (r *reference) limits(k int, paths []string) []float64 {
	out := make([]float64, len(paths))
	for i, p := range paths {
		out[i] = r.specs[p].Limit.Get(k)
	}
	return out
}

// referenceLevel is one level's division: reservation phase, elastic phase,
// headroom.
func referenceLevel(amount, elasticCap float64, claims, reservations, shares, demand, limits []float64, headroom bool) (ent, head []float64) {
	n := len(claims)
	grant := progressiveFill(amount, claims, reservations)
	left := amount
	rest := make([]float64, n)
	for i := range n {
		left -= grant[i]
		rest[i] = demand[i] - grant[i]
	}
	extra := progressiveFill(left, rest, shares)
	ent = make([]float64, n)
	unclaimed := elasticCap
	for i := range n {
		ent[i] = grant[i] + extra[i]
		unclaimed -= ent[i]
	}
	if !headroom {
		return ent, make([]float64, n)
	}
	room := make([]float64, n)
	for i := range n {
		room[i] = limits[i] - ent[i]
	}
	return ent, progressiveFill(unclaimed, room, shares)
}

// progressiveFill gives out amount in rounds: each round, every claimant
// that still wants more (and has a weight) gets its weighted part of what is
// left, or what it still wants if that is less. It stops when a round
// saturates nobody (everything left was given) or nobody wants more.
func progressiveFill(amount float64, caps, weights []float64) []float64 {
	out := make([]float64, len(caps))
	left := amount
	for round := 0; round <= len(caps) && left > 0; round++ {
		totalWeight := 0.0
		for i := range caps {
			if out[i] < caps[i] && weights[i] > 0 {
				totalWeight += weights[i]
			}
		}
		if totalWeight == 0 {
			break
		}
		perWeight := left / totalWeight
		saturated := false
		for i := range caps {
			if !(out[i] < caps[i] && weights[i] > 0) {
				continue
			}
			give := perWeight * weights[i]
			if want := caps[i] - out[i]; give >= want {
				give = want
				saturated = true
			}
			out[i] += give
			left -= give
		}
		if !saturated {
			break
		}
	}
	return out
}
