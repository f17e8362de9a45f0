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
		if t == nil || isCold(t) || t.Goal == model.TaskKilled || (t.State.IsTerminal() && t.State != model.TaskLost) {
			continue
		}
		out = append(out, sla.Instance{
			ID:        t.ID.Instance,
			Available: je.available(t),
			Disrupted: e.restarting[gangOf(je, t.ID.Instance)] != nil,
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
