package resmgr

import (
	"math"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// Pass runs one scheduling pass:
//
//  1. demand per leaf pool: queued plus admitted non-revocable work (see
//     PoolFigures.Demand), and the same for revocable work;
//  2. entitlements: one max-min pass over the capacity, one over the slack;
//  3. slack eviction: when revocable work holds more than the slack, pools
//     above their slack entitlement give revocable gangs back at once;
//  4. cross-pool preemption: a pool over its entitlement for
//     PreemptAfterPasses consecutive passes, while another pool has unmet
//     demand within its own (or while it is over a limit), gives back
//     preemptible gangs until it is within;
//  5. admission, pool by pool, kind by kind (see admit);
//  6. priority preemption: the gang at which a pool's admission of a kind
//     stopped preempts lower-priority preemptible gangs of its pool, if that
//     makes it fit.
//
// Preempted gangs keep their allocation until Remove, and are never chosen
// twice. Negative or NaN amounts in the input count as zero.
//
// Each step looks only at what changed since the last pass, with the same
// decisions as a pass over every leaf (see incremental.go).
func (s *Scheduler) Pass(in PassInput) Decision {
	var d Decision
	p := &passRun{Scheduler: s, disrupted: map[model.JobID]uint32{}, disruptable: in.Disruptable}
	capacity, slack := clampResources(in.Capacity), clampResources(in.Slack)
	rebuild := s.rebuild
	if rebuild || capacity != s.passCapacity || slack != s.passSlack {
		s.visit.addAll(len(s.leaves)) // gangs larger than the whole may fit now, or no longer
	}
	s.passSeq, s.passCapacity, s.passSlack = s.seq, capacity, slack
	res, slackRes, moved, slackMoved := s.entitle(capacity, slack)

	p.evictRevocable(slack, slackRes, &d)
	p.preemptOverEntitlement(res, &d)
	for o := s.visit.next(0); o >= 0; o = s.visit.next(o + 1) {
		s.visit.remove(o)
		l := s.leaves[o]
		blocked, volatile := p.admit(l, res.Entitlement[l.index], slackRes.Entitlement[l.index], capacity, slack, &d)
		for _, k := range [...]Kind{NonPreemptible, Preemptible} {
			if blocked[k] != nil && p.preemptForPriority(l, blocked[k], res.Entitlement[l.index], capacity, &d) {
				volatile = true
			}
		}
		if volatile {
			s.visit.add(o) // again next pass
		}
	}
	if rebuild {
		s.rebuild = false
		s.fillFigures(res, slackRes)
	} else {
		s.updateFigures(res, slackRes, moved, slackMoved)
	}
	return d
}

// passRun is one pass's working state beside the scheduler it changes:
// the pass's SLA room per job (disruptable) and the instances it preempted
// so far (disrupted). The steps of a pass are its methods.
type passRun struct {
	*Scheduler
	disruptable map[model.JobID]uint32
	disrupted   map[model.JobID]uint32
}

// clampResources maps negative amounts to zero.
func clampResources(r model.Resources) model.Resources { return r.Max(model.Resources{}) }

// demand is what the leaf asks of the entitlement pass: all preemptible
// work, and non-preemptible work up to the reservation (or what it already
// holds, if more), since no more of it can be admitted.
func (l *leaf) demand() model.Resources {
	np := l.queued[NonPreemptible].Add(l.alloc[NonPreemptible]).Min(l.reservation).Max(l.alloc[NonPreemptible])
	return np.Add(l.queued[Preemptible]).Add(l.alloc[Preemptible])
}

// held is what the leaf's non-revocable work holds, not counting gangs
// already being preempted.
func (l *leaf) held() model.Resources {
	return l.alloc[NonPreemptible].Add(l.alloc[Preemptible]).Sub(l.releasing[Preemptible])
}

// victims returns the leaf's admitted gangs of a kind below a priority, not
// already being preempted, in the order they are preempted: lowest priority
// first, then the most recently started.
func (l *leaf) victims(k Kind, below int64) []*entry {
	var out []*entry
	for _, e := range l.admitted {
		if e.kind == k && e.state == Admitted && int64(e.priority) < below {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if a.priority != b.priority {
			return int(a.priority) - int(b.priority)
		}
		return cmpUint(b.started, a.started)
	})
	return out
}

// anyPriority admits every priority to victims.
const anyPriority = math.MaxInt32 + 1

// mayDisrupt reports whether the pass's SLA room lets gang e be
// preempted, counting the instances already taken this pass and those
// in extra (a choice not yet made).
func (s *passRun) mayDisrupt(e *entry, extra map[model.JobID]uint32) bool {
	room, bounded := s.disruptable[e.id.Job]
	if !bounded {
		return true
	}
	job := e.id.Job
	return uint64(s.disrupted[job])+uint64(extra[job])+uint64(e.memberCount()) <= uint64(room)
}

// preempt marks an admitted gang for preemption.
func (s *passRun) preempt(e *entry, reason PreemptReason, d *Decision) {
	s.disrupted[e.id.Job] += uint32(e.memberCount())
	l, k := e.leaf, e.kind
	e.state = Preempting
	l.preempting++
	l.releasing[k] = l.releasing[k].Add(e.size())
	s.releasing[k] = s.releasing[k].Add(e.size())
	s.touch(l)
	d.Preempt = append(d.Preempt, Preemption{Gang: e.id, Pool: l.path, Reason: reason})
}

// giveBack preempts gangs from victims, in order, while held is above
// target; a gang is taken only if it lowers a resource that is still above.
// It returns what is held afterwards.
func (s *passRun) giveBack(held, target model.Resources, victims []*entry, reason PreemptReason, d *Decision) model.Resources {
	for _, v := range victims {
		if held.Fits(target) {
			break
		}
		if !lowersExcess(v.size(), held, target) || !s.mayDisrupt(v, nil) {
			continue
		}
		s.preempt(v, reason, d)
		held = held.Sub(v.size())
	}
	return held
}

// lowersExcess reports whether taking size off held lowers some resource in
// which held is above target.
func lowersExcess(size, held, target model.Resources) bool {
	for k := range model.ResourceKinds {
		if size.Get(k) > 0 && held.Get(k) > target.Get(k) {
			return true
		}
	}
	return false
}

// evictRevocable gives back revocable work when it holds more than the
// slack: every pool above its slack entitlement returns to it. Slack
// shrinking means hosts run hot, so there is no hysteresis.
func (s *passRun) evictRevocable(slack model.Resources, slackRes *entitlement.Result, d *Decision) {
	if s.alloc[Revocable].Sub(s.releasing[Revocable]).Fits(slack) {
		return
	}
	for o := s.revocable.next(0); o >= 0; o = s.revocable.next(o + 1) { // the others hold none
		l := s.leaves[o]
		held := l.alloc[Revocable].Sub(l.releasing[Revocable])
		target := slackRes.Entitlement[l.index]
		if held.Fits(target) {
			continue
		}
		s.giveBack(held, target, l.victims(Revocable, anyPriority), ReasonSlackShrank, d)
	}
}

// preemptOverEntitlement counts, per leaf, the consecutive passes it has
// been over its entitlement while that was wanted elsewhere, and makes the
// leaves that reached Config.PreemptAfterPasses give preemptible work back.
// Only the leaves in s.over can be over or have a count to reset.
func (s *passRun) preemptOverEntitlement(res *entitlement.Result, d *Decision) {
	// wanted[k]: some leaf has unmet demand of resource k within its
	// entitlement. A leaf over its entitlement in k is not one of them.
	var wanted [len(model.ResourceKinds)]bool
	for k := range wanted {
		wanted[k] = s.wantCount[k] > 0
	}
	after := max(s.cfg.PreemptAfterPasses, 1)
	for o := s.over.next(0); o >= 0; o = s.over.next(o + 1) {
		l := s.leaves[o]
		ent := res.Entitlement[l.index]
		s.overEntitlement(l, ent, wanted, after, d)
		s.figures[l.index].OverPasses = l.overPasses
		if l.overPasses == 0 && l.held().Fits(ent) {
			s.over.remove(o)
		}
	}
}

// overEntitlement is preemptOverEntitlement for one leaf.
func (s *passRun) overEntitlement(l *leaf, ent model.Resources, wanted [len(model.ResourceKinds)]bool, after int, d *Decision) {
	held := l.held()
	if held.Fits(ent) || !overAndWanted(held, ent, l.limitBound, wanted) {
		l.overPasses = 0
		return
	}
	victims := l.victims(Preemptible, anyPriority)
	if len(victims) == 0 {
		l.overPasses = 0 // only non-preemptible work is above: nothing to give
		return
	}
	l.overPasses++
	if l.overPasses < after {
		return
	}
	s.giveBack(held, ent, victims, ReasonOverEntitlement, d)
}

// overAndWanted reports whether a leaf holding held is over its limit, or
// over its entitlement in a resource another leaf wants.
func overAndWanted(held, ent, limit model.Resources, wanted [len(model.ResourceKinds)]bool) bool {
	if !held.Fits(limit) {
		return true
	}
	for k, w := range wanted {
		if w && held.Get(k) > ent.Get(k) {
			return true
		}
	}
	return false
}

// admit admits a leaf's queued gangs, kind by kind, each kind from its
// highest priority, FIFO within a priority. A gang is admitted when, with
// it, the cluster's non-revocable allocation stays within capacity and:
//
//   - non-preemptible: the pool's non-preemptible allocation stays within
//     its reservation and the pool's allocation within its entitlement;
//   - preemptible: the pool's allocation stays within its entitlement;
//   - revocable: the pool's revocable allocation stays within its slack
//     entitlement and the cluster's within the slack.
//
// The first gang of a kind that does not fit stops that kind in this pool
// for this pass (so it is not starved by smaller gangs behind it) and is
// returned; other kinds go on. Gangs skipped without stopping: those whose
// job is at its maxRunning, and those larger than the whole capacity (or
// slack) of the pass.
//
// volatile reports that a kind stopped at a gang the pool's own figures
// let in but the cluster's sums did not: the leaf has to be looked at
// again in the next pass, whatever changes. Jobs with a limit record the
// leaf as watching them.
func (s *passRun) admit(l *leaf, ent, slackEnt, capacity, slack model.Resources, d *Decision) (blocked [kindCount]*entry, volatile bool) {
	for k := range kindCount {
		q := &l.pending[k]
		l.waits[k] = waitAt{}
		var watched *jobCount
		q.each(func(e *entry) bool {
			if j := s.jobs[e.id.Job]; j != nil && j.limit > 0 {
				if j != watched {
					j.watch(l)
					watched = j
				}
				if s.jobFull(e) {
					return true
				}
			}
			if poolFits := s.poolFits(l, e, ent, slackEnt); !poolFits || !s.clusterFits(e, capacity, slack) {
				bound := capacity
				if k == Revocable {
					bound = slack
				}
				if !e.size().Fits(bound) {
					return true
				}
				blocked[k] = e
				l.waits[k] = waitAt{e: e, why: s.whyNot(l, e, ent, slackEnt, capacity, slack)}
				volatile = volatile || poolFits
				return false
			}
			q.take(e)
			l.queued[k] = l.queued[k].Sub(e.size())
			s.hold(l, e)
			d.Admit = append(d.Admit, e.id)
			return true
		})
		q.tidy()
	}
	return blocked, volatile
}

// poolFits reports whether e fits what its pool may hold (see admit).
func (s *passRun) poolFits(l *leaf, e *entry, ent, slackEnt model.Resources) bool {
	size := e.size()
	if e.kind == Revocable {
		return l.alloc[Revocable].Add(size).Fits(slackEnt)
	}
	if e.kind == NonPreemptible && !l.alloc[NonPreemptible].Add(size).Fits(l.reservation) {
		return false
	}
	return l.alloc[NonPreemptible].Add(l.alloc[Preemptible]).Add(size).Fits(ent)
}

// clusterFits reports whether e fits what the cluster may hold: the
// capacity, or for revocable work the slack (see admit).
func (s *passRun) clusterFits(e *entry, capacity, slack model.Resources) bool {
	size := e.size()
	if e.kind == Revocable {
		return s.alloc[Revocable].Add(size).Fits(slack)
	}
	return s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Add(size).Fits(capacity)
}

// preemptForPriority makes room for g, the gang at which a leaf's admission
// stopped, by preempting preemptible gangs of the same leaf with a lower
// priority: lowest first, then the most recently started, only those that
// lower a resource g is short of, and only if g then fits. Gangs already
// being preempted count as released, so a pass that finds g would fit once
// they are gone preempts nothing more.
//
// It reports whether it weighed victims: what it decides then depends on
// the cluster's sums and the pass's SLA room, so the leaf is looked at
// again in the next pass.
func (s *passRun) preemptForPriority(l *leaf, g *entry, ent, capacity model.Resources, d *Decision) bool {
	if !l.hasPreemptibleBelow(g.priority) {
		return false
	}
	size := g.size()
	if g.kind == NonPreemptible && !l.alloc[NonPreemptible].Add(size).Fits(l.reservation) {
		return false // only the pool's own non-preemptible work ends could help
	}
	pool := l.held().Add(size)
	cluster := s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Sub(s.releasing[Preemptible]).Add(size)
	if pool.Fits(ent) && cluster.Fits(capacity) {
		if l.preempting > 0 {
			l.waits[g.kind].why = Wait{Code: WaitPreemption, Pool: l.path, Preempting: l.preempting}
		}
		return true
	}
	chosen, ok := s.priorityVictims(l, g, pool, ent, cluster, capacity)
	if !ok {
		return true
	}
	for _, v := range chosen {
		s.preempt(v, ReasonPriority, d)
	}
	l.waits[g.kind].why = Wait{Code: WaitPreemption, Pool: l.path, Preempting: l.preempting}
	return true
}

// priorityVictims chooses the pool's preemptible gangs below g's priority
// whose preemption would bring what the pool and the cluster would hold
// with g (pool, cluster) within the pool's entitlement and the capacity,
// in the order victims gives them, taking only gangs that lower an excess
// and that the pass's SLA room allows. ok says the choice is enough.
func (s *passRun) priorityVictims(l *leaf, g *entry, pool, ent, cluster, capacity model.Resources) (chosen []*entry, ok bool) {
	tentative := map[model.JobID]uint32{}
	for _, v := range l.victims(Preemptible, int64(g.priority)) {
		if pool.Fits(ent) && cluster.Fits(capacity) {
			break
		}
		vs := v.size()
		if !lowersExcess(vs, pool, ent) && !lowersExcess(vs, cluster, capacity) {
			continue
		}
		if !s.mayDisrupt(v, tentative) {
			continue
		}
		tentative[v.id.Job] += uint32(v.memberCount())
		chosen = append(chosen, v)
		pool, cluster = pool.Sub(vs), cluster.Sub(vs)
	}
	return chosen, pool.Fits(ent) && cluster.Fits(capacity)
}
