package entitlement

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// Options tunes a pass.
type Options struct {
	// Headroom also divides the capacity left unclaimed by the max-min pass
	// among pools by share, capped at each pool's limit, into
	// Result.Headroom. Without it Headroom is all zero.
	Headroom bool
}

// Result is the outcome of a pass, indexed by pool number.
type Result struct {
	// Demand is the pool's demand capped by its limit; for a pool with
	// children, the sum of its children's demands, capped by its limit.
	Demand []model.Resources
	// Entitlement is the pool's max-min fair share: never above Demand.
	Entitlement []model.Resources
	// Headroom is unclaimed capacity the pool may use above its
	// Entitlement (Options.Headroom); Entitlement+Headroom never exceeds
	// the limit, and siblings' sums never exceed their parent's.
	Headroom []model.Resources
}

// ElasticCap returns the most pool i may use: its entitlement plus headroom.
func (r *Result) ElasticCap(i int) model.Resources {
	return r.Entitlement[i].Add(r.Headroom[i])
}

// Solver runs passes over one tree, reusing its buffers: a pass allocates
// nothing. A Solver is not safe for concurrent use.
type Solver struct {
	tree   *Tree
	dem    [kinds][]int64 // by layout position
	ent    [kinds][]int64
	head   [kinds][]int64
	split  splitter
	result Result
	inc    incremental // for Update
}

// NewSolver returns a Solver for the tree.
func NewSolver(tree *Tree) *Solver {
	n := tree.Len()
	s := &Solver{tree: tree}
	for k := range kinds {
		s.dem[k] = make([]int64, n)
		s.ent[k] = make([]int64, n)
		s.head[k] = make([]int64, n)
	}
	s.result = Result{
		Demand:      make([]model.Resources, n),
		Entitlement: make([]model.Resources, n),
		Headroom:    make([]model.Resources, n),
	}
	s.initIncremental()
	return s
}

// Tree returns the tree the Solver works on.
func (s *Solver) Tree() *Tree { return s.tree }

// Compute runs one pass. capacity is what the root may hand out (the
// cluster's capacity, or the shard's share of a global pass). demand is
// indexed by pool number; only leaves' demands count, missing entries count
// as zero, and negative amounts count as zero. The returned Result
// belongs to the Solver and is overwritten by the next pass.
func (s *Solver) Compute(capacity model.Resources, demand []model.Resources, opts Options) *Result {
	t := s.tree
	n := len(t.order)
	for k := range kinds {
		s.aggregateDemand(k, demand)
		if n == 0 {
			continue
		}
		dem, ent, head := s.dem[k], s.ent[k], s.head[k]
		res, lim, share := t.res[k], t.lim[k], t.share[k]
		c := nonNegative(capacity.Get(k))
		// The root is the one child of a virtual parent holding the capacity.
		s.split.divide(c, c, res[:1], lim[:1], share[:1], dem[:1], ent[:1], head[:1], opts.Headroom)
		for p := range n {
			cnt := int(t.count[p])
			if cnt == 0 {
				continue
			}
			a, b := int(t.first[p]), int(t.first[p])+cnt
			s.split.divide(ent[p], ent[p]+head[p], res[a:b], lim[a:b], share[a:b], dem[a:b], ent[a:b], head[a:b], opts.Headroom)
		}
	}
	for pos, ext := range t.order {
		s.result.Demand[ext] = s.vector(&s.dem, pos)
		s.result.Entitlement[ext] = s.vector(&s.ent, pos)
		s.result.Headroom[ext] = s.vector(&s.head, pos)
	}
	s.inc.valid, s.inc.capacity, s.inc.opts = true, capacity, opts
	return &s.result
}

// aggregateDemand fills s.dem[k]: leaves' reported demand, parents' sums of
// their children's, each capped by the pool's limit. Children sit after
// their parent in the layout, so one backwards sweep suffices.
func (s *Solver) aggregateDemand(k int, demand []model.Resources) {
	t := s.tree
	dem, lim := s.dem[k], t.lim[k]
	for pos, ext := range t.order {
		dem[pos] = 0
		if t.count[pos] == 0 && int(ext) < len(demand) {
			dem[pos] = nonNegative(demand[ext].Get(k))
		}
	}
	for pos := len(t.order) - 1; pos >= 0; pos-- {
		dem[pos] = min(dem[pos], lim[pos])
		if p := t.parent[pos]; p >= 0 {
			dem[p] = addCapped(dem[p], dem[pos])
		}
	}
}

func (s *Solver) vector(v *[kinds][]int64, pos int) model.Resources {
	var r model.Resources
	for k := range kinds {
		r = r.Set(k, v[k][pos])
	}
	return r
}

// nonNegative maps negative amounts to zero.
func nonNegative(v int64) int64 {
	if v > 0 {
		return v
	}
	return 0
}

// Compute runs one pass over tree with a fresh Solver; see Solver.Compute.
// Callers that run passes repeatedly should keep a Solver instead.
func Compute(tree *Tree, capacity model.Resources, demand []model.Resources, opts Options) Result {
	return *NewSolver(tree).Compute(capacity, demand, opts)
}
