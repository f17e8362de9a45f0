package resmgr

import (
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// refScheduler is a plain reference for Scheduler: one flat list of gangs,
// every sum recomputed by scanning, every next gang found by scanning its
// pool. Property tests compare the two; the benchmark uses it as the naive
// baseline.
type refScheduler struct {
	cfg    Config
	tree   *entitlement.Tree
	gangs  []*refGang // in creation order
	seq    uint64
	over   map[string]int
	limits map[model.JobID]uint32
	last   []PoolFigures
}

type refGang struct {
	g       Gang
	kind    Kind
	state   GangState
	live    int
	done    []bool
	seq     uint64
	started uint64
}

func (r *refGang) size() model.Resources { return r.g.PerTask.Scale(int64(r.live)) }

func newRef(tree *entitlement.Tree, cfg Config) *refScheduler {
	r := &refScheduler{cfg: cfg, over: map[string]int{}, limits: map[model.JobID]uint32{}}
	r.SetTree(tree)
	return r
}

func (r *refScheduler) next() uint64 { r.seq++; return r.seq }

func (r *refScheduler) leafIndex(path string) (int, bool) {
	i, ok := r.tree.Index(path)
	return i, ok && r.tree.IsLeaf(i)
}

func (r *refScheduler) find(id GangID) *refGang {
	for _, g := range r.gangs {
		if g.g.ID == id {
			return g
		}
	}
	return nil
}

func (r *refScheduler) drop(x *refGang) {
	r.gangs = slices.DeleteFunc(r.gangs, func(g *refGang) bool { return g == x })
}

func (r *refScheduler) SetTree(tree *entitlement.Tree) []Gang {
	if tree == nil {
		tree, _ = entitlement.NewTree(nil)
	}
	r.tree = tree
	r.last = make([]PoolFigures, tree.Len())
	for i := range r.last {
		spec := tree.Spec(i)
		r.last[i] = PoolFigures{Path: spec.Path, Reservation: spec.Reservation, Limit: spec.Limit, Share: spec.Share}
	}
	for path := range r.over {
		if _, ok := r.leafIndex(path); !ok {
			delete(r.over, path)
		}
	}
	var gone []*refGang
	for _, g := range r.gangs {
		if _, ok := r.leafIndex(g.g.Pool); !ok {
			gone = append(gone, g)
		}
	}
	slices.SortFunc(gone, func(a, b *refGang) int { return cmpUint(a.seq, b.seq) })
	out := []Gang{}
	for _, g := range gone {
		r.drop(g)
		out = append(out, g.g)
	}
	return out
}

func (r *refScheduler) add(g Gang, admitted bool) bool {
	if len(g.Members) == 0 || g.PerTask.Invalid() >= 0 || r.find(g.ID) != nil {
		return false
	}
	if _, ok := r.leafIndex(g.Pool); !ok {
		return false
	}
	g.Members = slices.Clone(g.Members)
	x := &refGang{g: g, kind: KindOf(&g), live: len(g.Members), seq: r.next()}
	if admitted {
		x.state, x.started = Admitted, r.next()
	}
	r.gangs = append(r.gangs, x)
	return true
}

func (r *refScheduler) Enqueue(g Gang) bool { return r.add(g, false) }
func (r *refScheduler) Adopt(g Gang) bool   { return r.add(g, true) }

func (r *refScheduler) Remove(id GangID) bool {
	x := r.find(id)
	if x != nil {
		r.drop(x)
	}
	return x != nil
}

func (r *refScheduler) Finished(id GangID, task model.TaskID) bool {
	x := r.find(id)
	if x == nil || (x.state != Admitted && x.state != Preempting) {
		return false
	}
	for i, m := range x.g.Members {
		if m.Task == task && (x.done == nil || !x.done[i]) {
			if x.done == nil {
				x.done = make([]bool, len(x.g.Members))
			}
			x.done[i] = true
			x.live--
			if x.live == 0 {
				r.drop(x)
			}
			return true
		}
	}
	return false
}

func (r *refScheduler) Started(id GangID) bool {
	x := r.find(id)
	if x == nil || (x.state != Admitted && x.state != Preempting) {
		return false
	}
	x.started = r.next()
	return true
}

func (r *refScheduler) SetJobLimit(job model.JobID, max uint32) {
	if max == 0 {
		delete(r.limits, job)
		return
	}
	r.limits[job] = max
}

func (r *refScheduler) jobFull(x *refGang) bool {
	lim, ok := r.limits[x.g.ID.Job]
	if !ok {
		return false
	}
	n := 0
	for _, g := range r.gangs {
		if g.g.ID.Job == x.g.ID.Job && (g.state == Admitted || g.state == Preempting) {
			n += g.live
		}
	}
	return n+x.live > int(lim)
}

// parked reports whether a waiting gang can never fit its pool.
func (r *refScheduler) parked(x *refGang) bool {
	i, _ := r.tree.Index(x.g.Pool)
	if x.kind == NonPreemptible {
		return !x.size().Fits(r.tree.Spec(i).Reservation)
	}
	return !x.size().Fits(limitBound(r.tree, i))
}

// sums is what one pool's gangs of each kind hold or wait with.
type sums struct {
	queued, alloc, releasing [kindCount]model.Resources
}

func (r *refScheduler) poolSums(pool []*refGang) sums {
	var s sums
	for _, g := range pool {
		switch {
		case g.state == Queued && !r.parked(g):
			s.queued[g.kind] = s.queued[g.kind].Add(g.size())
		case g.state == Admitted || g.state == Preempting:
			s.alloc[g.kind] = s.alloc[g.kind].Add(g.size())
			if g.state == Preempting {
				s.releasing[g.kind] = s.releasing[g.kind].Add(g.size())
			}
		}
	}
	return s
}

func (r *refScheduler) clusterSums() sums {
	return r.poolSums(r.gangs)
}

func victimsOf(pool []*refGang, k Kind, below int64) []*refGang {
	var out []*refGang
	for _, g := range pool {
		if g.kind == k && g.state == Admitted && int64(g.g.Priority) < below {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *refGang) int {
		if a.g.Priority != b.g.Priority {
			return int(a.g.Priority) - int(b.g.Priority)
		}
		return cmpUint(b.started, a.started)
	})
	return out
}

func (r *refScheduler) Pass(in PassInput) Decision {
	var d Decision
	capacity, slack := clampResources(in.Capacity), clampResources(in.Slack)
	n := r.tree.Len()
	byPool := make([][]*refGang, n)
	for _, g := range r.gangs {
		i, _ := r.tree.Index(g.g.Pool)
		byPool[i] = append(byPool[i], g)
	}
	var leaves []int
	for i := range n {
		if r.tree.IsLeaf(i) {
			leaves = append(leaves, i)
		}
	}
	demand, slackDemand := make([]model.Resources, n), make([]model.Resources, n)
	for _, i := range leaves {
		s := r.poolSums(byPool[i])
		np := s.queued[NonPreemptible].Add(s.alloc[NonPreemptible]).Min(r.tree.Spec(i).Reservation).Max(s.alloc[NonPreemptible])
		demand[i] = np.Add(s.queued[Preemptible]).Add(s.alloc[Preemptible])
		slackDemand[i] = s.queued[Revocable].Add(s.alloc[Revocable])
	}
	res := entitlement.Compute(r.tree, capacity, demand, entitlement.Options{})
	slackRes := entitlement.Compute(r.tree, slack, slackDemand, entitlement.Options{})
	preempt := func(g *refGang, reason PreemptReason) {
		g.state = Preempting
		d.Preempt = append(d.Preempt, Preemption{Gang: g.g.ID, Pool: g.g.Pool, Reason: reason})
	}
	giveBack := func(held, target model.Resources, victims []*refGang, reason PreemptReason) {
		for _, v := range victims {
			if held.Fits(target) {
				return
			}
			if lowersExcess(v.size(), held, target) {
				preempt(v, reason)
				held = held.Sub(v.size())
			}
		}
	}

	// Slack eviction.
	c := r.clusterSums()
	if !c.alloc[Revocable].Sub(c.releasing[Revocable]).Fits(slack) {
		for _, i := range leaves {
			s := r.poolSums(byPool[i])
			giveBack(s.alloc[Revocable].Sub(s.releasing[Revocable]), slackRes.Entitlement[i],
				victimsOf(byPool[i], Revocable, anyPriority), ReasonSlackShrank)
		}
	}

	// Cross-pool preemption.
	var wanted [len(model.ResourceKinds)]bool
	for _, i := range leaves {
		s := r.poolSums(byPool[i])
		alloc := s.alloc[NonPreemptible].Add(s.alloc[Preemptible])
		for k := range wanted {
			wanted[k] = wanted[k] || res.Entitlement[i].Get(k) > alloc.Get(k)
		}
	}
	for _, i := range leaves {
		path := r.tree.Path(i)
		s := r.poolSums(byPool[i])
		held := s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Sub(s.releasing[Preemptible])
		ent := res.Entitlement[i]
		victims := victimsOf(byPool[i], Preemptible, anyPriority)
		if held.Fits(ent) || len(victims) == 0 || !overAndWanted(held, ent, limitBound(r.tree, i), wanted) {
			delete(r.over, path)
			continue
		}
		r.over[path]++
		if r.over[path] >= max(r.cfg.PreemptAfterPasses, 1) {
			giveBack(held, ent, victims, ReasonOverEntitlement)
		}
	}

	// Admission and priority preemption; c keeps the cluster's sums.
	c = r.clusterSums()
	for _, i := range leaves {
		pool := byPool[i]
		reservation := r.tree.Spec(i).Reservation
		ent, slackEnt := res.Entitlement[i], slackRes.Entitlement[i]
		var blocked [kindCount]*refGang
		for k := range kindCount {
			skipped := map[*refGang]bool{}
			for {
				var best *refGang
				for _, g := range pool {
					if g.kind != k || g.state != Queued || skipped[g] || r.parked(g) {
						continue
					}
					if best == nil || g.g.Priority > best.g.Priority || (g.g.Priority == best.g.Priority && g.seq < best.seq) {
						best = g
					}
				}
				if best == nil {
					break
				}
				if r.jobFull(best) {
					skipped[best] = true
					continue
				}
				s := r.poolSums(pool)
				size := best.size()
				var fits bool
				bound := capacity
				if k == Revocable {
					bound = slack
					fits = s.alloc[Revocable].Add(size).Fits(slackEnt) && c.alloc[Revocable].Add(size).Fits(slack)
				} else {
					fits = (k != NonPreemptible || s.alloc[NonPreemptible].Add(size).Fits(reservation)) &&
						s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Add(size).Fits(ent) &&
						c.alloc[NonPreemptible].Add(c.alloc[Preemptible]).Add(size).Fits(capacity)
				}
				if !fits {
					if !size.Fits(bound) {
						skipped[best] = true
						continue
					}
					blocked[k] = best
					break
				}
				best.state, best.started = Admitted, r.next()
				c.alloc[k] = c.alloc[k].Add(size)
				d.Admit = append(d.Admit, best.g.ID)
			}
		}
		for _, k := range [...]Kind{NonPreemptible, Preemptible} {
			g := blocked[k]
			if g == nil {
				continue
			}
			s := r.poolSums(pool)
			if k == NonPreemptible && !s.alloc[NonPreemptible].Add(g.size()).Fits(reservation) {
				continue
			}
			held := s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Sub(s.releasing[Preemptible]).Add(g.size())
			all := c.alloc[NonPreemptible].Add(c.alloc[Preemptible]).Sub(c.releasing[Preemptible]).Add(g.size())
			if held.Fits(ent) && all.Fits(capacity) {
				continue
			}
			var chosen []*refGang
			for _, v := range victimsOf(pool, Preemptible, int64(g.g.Priority)) {
				if held.Fits(ent) && all.Fits(capacity) {
					break
				}
				if lowersExcess(v.size(), held, ent) || lowersExcess(v.size(), all, capacity) {
					chosen = append(chosen, v)
					held, all = held.Sub(v.size()), all.Sub(v.size())
				}
			}
			if held.Fits(ent) && all.Fits(capacity) {
				for _, v := range chosen {
					preempt(v, ReasonPriority)
					c.releasing[Preemptible] = c.releasing[Preemptible].Add(v.size())
				}
			}
		}
	}
	r.figures(byPool, res, slackRes)
	return d
}

func (r *refScheduler) figures(byPool [][]*refGang, res, slackRes entitlement.Result) {
	for i := range r.last {
		spec := r.tree.Spec(i)
		r.last[i] = PoolFigures{Path: spec.Path, Reservation: spec.Reservation, Limit: spec.Limit, Share: spec.Share,
			Demand: res.Demand[i], Entitlement: res.Entitlement[i], SlackEntitlement: slackRes.Entitlement[i],
			OverPasses: r.over[spec.Path]}
	}
	for _, g := range r.gangs {
		leaf, _ := r.tree.Index(g.g.Pool)
		parked := g.state == Queued && r.parked(g)
		for j := leaf; j >= 0; j = r.tree.Parent(j) {
			f := &r.last[j]
			if g.kind != Revocable {
				f.UncappedDemand = f.UncappedDemand.Add(g.size())
			}
			switch g.state {
			case Queued:
				if parked {
					f.Parked++
				} else {
					f.Queued++
				}
			case Admitted, Preempting:
				f.Admitted++
				if g.state == Preempting {
					f.Preempting++
				}
				if g.kind == Revocable {
					f.RevocableAllocation = f.RevocableAllocation.Add(g.size())
				} else {
					f.Allocation = f.Allocation.Add(g.size())
				}
			}
		}
	}
}
