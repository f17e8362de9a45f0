package resmgr

import (
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// A pass costs in proportion to what changed since the last one, and
// decides exactly what a pass over every leaf would. The scheduler sees
// every change through its own methods, and each marks the leaf it
// changed as touched. A pass then:
//
//   - computes demand again only for touched leaves, and has the solvers
//     (entitlement.Solver.Update) divide again only where a demand or the
//     capacity moved; they report the pools whose figures moved;
//   - counts, per resource, the leaves that want more than they hold
//     (wantCount), updated for the touched leaves and those whose
//     entitlement moved, so cross-pool preemption needs no scan;
//   - looks for cross-pool preemption only at leaves held above their
//     entitlement or counting passes over it (over): any other leaf's
//     count is zero and stays so;
//   - gives back revocable work only from leaves holding some;
//   - admits only at the leaves in visit: touched ones, those whose
//     entitlement or slack entitlement moved, those whose last admission
//     looked at a gang of a job whose admitted count or limit changed
//     since (jobCount.watchers), and those whose last admission depended
//     on more than their own state (blocked by the cluster's capacity or
//     slack rather than by their own figures, or weighing a preemption
//     for priority: the cluster's sums and the SLA room of the pass move
//     with every other pool). Any other leaf with queued work stopped
//     last time at a gang that its own figures refuse, and they have not
//     moved; all leaves are visited when the capacity or slack changes;
//   - updates the figures of the pools whose solver output moved, and
//     adds the difference of each touched leaf's sums along its path.
//
// A new tree starts again from scratch (rebuild). Nothing here depends on
// time or on the order of maps.

// touch records that a leaf's queues, allocation or gangs changed.
func (s *Scheduler) touch(l *leaf) {
	if l.ord >= 0 {
		s.touched.add(l.ord)
		s.visit.add(l.ord)
	}
}

// markRevocable keeps the set of leaves holding revocable work.
func (s *Scheduler) markRevocable(l *leaf) {
	switch {
	case l.ord < 0:
	case l.alloc[Revocable] != model.Resources{}:
		s.revocable.add(l.ord)
	default:
		s.revocable.remove(l.ord)
	}
}

// watch records that a leaf's admission looked at a gang of job j against
// its limit.
func (j *jobCount) watch(l *leaf) {
	for _, w := range j.watchers {
		if w == l {
			return
		}
	}
	j.watchers = append(j.watchers, l)
}

// wake touches the leaves watching job j: its admitted count or limit
// changed.
func (s *Scheduler) wake(j *jobCount) {
	for _, l := range j.watchers {
		s.touch(l)
	}
	clear(j.watchers)
	j.watchers = j.watchers[:0]
}

// entitle brings demands and entitlements up to date (steps 1 and 2 of
// Pass) and returns the pools whose entitlement and whose slack
// entitlement moved (nil after a rebuild: all of them).
func (s *Scheduler) entitle(capacity, slack model.Resources) (res, slackRes *entitlement.Result, moved, slackMoved []int) {
	s.work = s.touched.drain(s.work[:0])
	if s.rebuild {
		for _, l := range s.leaves {
			s.demand[l.index] = l.demand()
			s.slackDemand[l.index] = l.queued[Revocable].Add(l.alloc[Revocable])
		}
		res = s.solver.Compute(capacity, s.demand, entitlement.Options{})
		slackRes = s.slackSolver.Compute(slack, s.slackDemand, entitlement.Options{})
		s.wantCount = [len(s.wantCount)]int{}
		s.over.clear()
		for _, l := range s.leaves {
			l.want = 0
			s.refresh(l, res.Entitlement[l.index])
			s.markRevocable(l)
		}
		return res, slackRes, nil, nil
	}
	var changed, slackChanged []int
	for _, o := range s.work {
		l := s.leaves[o]
		if d := l.demand(); d != s.demand[l.index] {
			s.demand[l.index] = d
			changed = append(changed, l.index)
		}
		if d := l.queued[Revocable].Add(l.alloc[Revocable]); d != s.slackDemand[l.index] {
			s.slackDemand[l.index] = d
			slackChanged = append(slackChanged, l.index)
		}
	}
	res, moved = s.solver.Update(capacity, s.demand, changed, entitlement.Options{})
	slackRes, slackMoved = s.slackSolver.Update(slack, s.slackDemand, slackChanged, entitlement.Options{})
	for _, i := range moved {
		if l := s.leafAt[i]; l != nil {
			s.visit.add(l.ord)
			s.refresh(l, res.Entitlement[i])
		}
	}
	for _, i := range slackMoved {
		if l := s.leafAt[i]; l != nil {
			s.visit.add(l.ord)
		}
	}
	for _, o := range s.work {
		l := s.leaves[o]
		s.refresh(l, res.Entitlement[l.index])
	}
	return res, slackRes, moved, slackMoved
}

// refresh counts again what a leaf wants and whether it is over its
// entitlement, after its allocation or entitlement moved.
func (s *Scheduler) refresh(l *leaf, ent model.Resources) {
	alloc := l.alloc[NonPreemptible].Add(l.alloc[Preemptible])
	var want uint8
	for k := range s.wantCount {
		if ent.Get(k) > alloc.Get(k) {
			want |= 1 << k
		}
	}
	for k := range s.wantCount {
		if bit := uint8(1) << k; want&bit != l.want&bit {
			if want&bit != 0 {
				s.wantCount[k]++
			} else {
				s.wantCount[k]--
			}
		}
	}
	l.want = want
	if l.overPasses > 0 || !l.held().Fits(ent) {
		s.over.add(l.ord)
	}
}

// leafSums is a leaf's part of its own and its ancestors' figures.
type leafSums struct {
	alloc, uncapped, revocable           model.Resources
	queued, parked, admitted, preempting int
}

func (l *leaf) figureSums() leafSums {
	queued := 0
	for k := range l.pending {
		queued += l.pending[k].len()
	}
	return leafSums{
		alloc:      l.alloc[NonPreemptible].Add(l.alloc[Preemptible]),
		uncapped:   l.uncappedDemand(),
		revocable:  l.alloc[Revocable],
		queued:     queued,
		parked:     len(l.parked),
		admitted:   len(l.admitted),
		preempting: l.preempting,
	}
}

// addSums adds sign times a leaf's sums to a pool's figures.
func (f *PoolFigures) addSums(x leafSums, sign int) {
	if sign < 0 {
		f.Allocation = f.Allocation.Sub(x.alloc)
		f.UncappedDemand = f.UncappedDemand.Sub(x.uncapped)
		f.RevocableAllocation = f.RevocableAllocation.Sub(x.revocable)
	} else {
		f.Allocation = f.Allocation.Add(x.alloc)
		f.UncappedDemand = f.UncappedDemand.Add(x.uncapped)
		f.RevocableAllocation = f.RevocableAllocation.Add(x.revocable)
	}
	f.Queued += sign * x.queued
	f.Parked += sign * x.parked
	f.Admitted += sign * x.admitted
	f.Preempting += sign * x.preempting
}

// updateFigures brings the figures up to date after an incremental pass:
// the solvers' outputs that moved, and the sums of the leaves touched
// before or during the pass. Cross-pool preemption set OverPasses.
func (s *Scheduler) updateFigures(res, slackRes *entitlement.Result, moved, slackMoved []int) {
	for _, i := range moved {
		f := &s.figures[i]
		f.Demand, f.Entitlement = res.Demand[i], res.Entitlement[i]
	}
	for _, i := range slackMoved {
		s.figures[i].SlackEntitlement = slackRes.Entitlement[i]
	}
	for _, o := range s.work {
		s.refigure(s.leaves[o])
	}
	for o := s.touched.next(0); o >= 0; o = s.touched.next(o + 1) {
		s.refigure(s.leaves[o])
	}
}

// refigure moves a leaf's sums in its own and its ancestors' figures from
// what was added last to what it holds now.
func (s *Scheduler) refigure(l *leaf) {
	now := l.figureSums()
	if now == l.sums {
		return
	}
	for i := l.index; i >= 0; i = s.tree.Parent(i) {
		f := &s.figures[i]
		f.addSums(l.sums, -1)
		f.addSums(now, 1)
	}
	l.sums = now
}
