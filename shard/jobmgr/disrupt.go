package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Every operation that takes running instances down (a rolling update's
// batch, a host drain moving instances off) asks the SLA evaluator first,
// through slaView and admitDisruption, and waits when told "not now".

// available reports whether an instance counts as up for its job's SLA:
// it runs and its readiness probe (else its health check) says healthy.
func (je *jobEntry) available(t *model.TaskRuntime) bool {
	if t == nil || t.State != model.TaskRunning {
		return false
	}
	switch {
	case t.Ready != model.HealthNone:
		return t.Ready == model.HealthHealthy
	case t.Health != model.HealthNone:
		return t.Health == model.HealthHealthy
	}
	return true
}

// slaLimit is how many of the job's instances may be unavailable at once.
func slaLimit(spec *model.JobSpec) uint32 {
	b := sla.DefaultServiceBudget
	if s := spec.SLA; s != nil {
		b = sla.Budget{Value: s.MaxUnavailable, Percent: s.Percent}
	}
	return b.Limit(spec.Instances)
}

// slaView is the job's instances as the evaluator sees them. Instances
// that ended for good (a batch job's successes, stopped instances) are
// not part of it; gangs being restarted count as disrupted.
func (e *Engine) slaView(je *jobEntry) []sla.Instance {
	out := make([]sla.Instance, 0, len(je.tasks))
	for _, t := range je.tasks {
		if t == nil || isCold(t) {
			continue
		}
		// An instance an update removes counts as disrupted until it ended.
		removing := t.Goal == model.TaskKilled && t.Reason == ReasonRemoved && !t.State.IsTerminal()
		if (t.Goal == model.TaskKilled && !removing) || (t.State.IsTerminal() && t.State != model.TaskLost) {
			continue
		}
		out = append(out, sla.Instance{
			ID:        t.ID.Instance,
			Available: je.available(t) && !removing,
			Disrupted: removing || e.restarting[gangOf(je, t.ID.Instance)] != nil,
		})
	}
	return out
}

// admitDisruption asks the evaluator whether gang g may be taken down now,
// given view; when it may, its members are marked disrupted in view, so
// later questions in the same pass see them down. The reason is "" when
// allowed.
func admitDisruption(je *jobEntry, g resmgr.GangID, limit uint32, view []sla.Instance) (bool, string) {
	members := je.members(g)
	ids := make([]uint32, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.ID.Instance)
	}
	d := sla.Evaluate(limit, view, ids)
	if len(d.Held) > 0 {
		return false, d.Reason()
	}
	for i := range view {
		for _, id := range ids {
			if view[i].ID == id {
				view[i].Disrupted = true
			}
		}
	}
	return true, ""
}

// preemptionRoom is, for every preemptible long-running job, how many
// more of its instances its SLA lets go down now: preemption takes no
// more than that in a pass, and waits for the rest. Instances waiting in
// the queue without resources do not count here: once preempted, an
// instance waits for its pool's entitlement, and counting it would let
// one preempted instance keep the pool that needs the room from ever
// getting its reservation. What preemption is paced by is the instances
// it is stopping and those that hold a host but are not yet available.
func (e *Engine) preemptionRoom() map[model.JobID]uint32 {
	var room map[model.JobID]uint32
	for id, je := range e.longRunning {
		spec := &je.job.Spec
		if !spec.Preemptible || !spec.LongRunning() || je.evicted || je.job.Status.State.IsTerminal() {
			continue
		}
		if room == nil {
			room = map[model.JobID]uint32{}
		}
		limit, down := slaLimit(spec), uint32(0)
		for _, t := range je.tasks {
			if t == nil || isCold(t) || t.State.IsTerminal() && t.State != model.TaskLost {
				continue
			}
			if e.restarting[gangOf(je, t.ID.Instance)] != nil || (t.State.HoldsResources() && !je.available(t)) {
				down++
			}
		}
		room[id] = limit - min(limit, down)
	}
	return room
}
