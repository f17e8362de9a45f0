package resmgr

import (
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// configFigures returns pool i's figures with only its configuration set.
func (s *Scheduler) configFigures(i int) PoolFigures {
	spec := s.tree.Spec(i)
	return PoolFigures{Path: spec.Path, Reservation: spec.Reservation, Limit: spec.Limit, Share: spec.Share}
}

// fillFigures records the figures of every pool after a pass from
// scratch: a leaf's own, and for a parent the sums of its leaves'
// allocations and counts. Passes that do not start from scratch update
// them (updateFigures).
func (s *Scheduler) fillFigures(res, slackRes *entitlement.Result) {
	for i := range s.figures {
		f := s.configFigures(i)
		f.Demand = res.Demand[i]
		f.Entitlement = res.Entitlement[i]
		f.SlackEntitlement = slackRes.Entitlement[i]
		s.figures[i] = f
	}
	for _, l := range s.leaves {
		l.sums = l.figureSums()
		s.figures[l.index].OverPasses = l.overPasses
		for i := l.index; i >= 0; i = s.tree.Parent(i) {
			s.figures[i].addSums(l.sums, 1)
		}
	}
}

// uncappedDemand is the leaf's non-revocable work, queued, parked and
// admitted, with none of the caps of demand.
func (l *leaf) uncappedDemand() model.Resources {
	return l.queued[NonPreemptible].Add(l.queued[Preemptible]).Add(l.alloc[NonPreemptible]).Add(l.alloc[Preemptible]).Add(l.parkedSize)
}

// Figures returns every pool's figures after the last pass, in the order of
// the tree's specifications. Before the first pass (and after SetTree) only
// the configuration is set.
func (s *Scheduler) Figures() []PoolFigures {
	return append([]PoolFigures(nil), s.figures...)
}

// PoolFigures returns one pool's figures after the last pass.
func (s *Scheduler) PoolFigures(path string) (PoolFigures, bool) {
	i, ok := s.tree.Index(path)
	if !ok {
		return PoolFigures{}, false
	}
	return s.figures[i], true
}
