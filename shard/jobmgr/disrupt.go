package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Every operation that takes running instances down (a rolling update's
// batch, a migration's move, a host drain, preemption) asks shard/sla the
// same way: with an sla.Job built by slaJob, and waits when told "not
// now".

// slaLimit is how many of the job's instances may be unavailable at once.
func slaLimit(spec *model.JobSpec) uint32 {
	b := sla.DefaultServiceBudget
	if s := spec.SLA; s != nil {
		b = sla.Budget{Value: s.MaxUnavailable, Percent: s.Percent}
	}
	return b.Limit(spec.Instances)
}

// slaJob is the job as the SLA sees it: its limit, and its instances.
// Instances that ended for good (a batch job's successes, stopped
// instances) are not part of it; gangs being restarted count as
// disrupted.
func (e *Engine) slaJob(je *jobEntry) *sla.Job {
	return &sla.Job{Limit: slaLimit(&je.job.Spec), Instances: e.slaView(je)}
}

// slaView is the job's instances for slaJob.
func (e *Engine) slaView(je *jobEntry) []sla.Instance {
	out := make([]sla.Instance, 0, len(je.tasks))
	for _, t := range je.tasks {
		if t == nil || isCold(t) {
			continue
		}
		// An instance an update removes counts as disrupted until it ended.
		removing := t.Goal == model.TaskKilled && t.Reason == rollout.ReasonRemoved && !t.State.IsTerminal()
		if (t.Goal == model.TaskKilled && !removing) || (t.State.IsTerminal() && t.State != model.TaskLost) {
			continue
		}
		out = append(out, sla.Instance{
			ID:        t.ID.Instance,
			Available: sla.Available(t) && !removing,
			Disrupted: removing || e.restarting[gangOf(je, t.ID.Instance)] != nil,
		})
	}
	return out
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
		job := &sla.Job{Limit: slaLimit(spec)}
		for _, t := range je.tasks {
			if t == nil || isCold(t) || t.State.IsTerminal() && t.State != model.TaskLost {
				continue
			}
			// A queued instance holds nothing: it counts as up here.
			job.Instances = append(job.Instances, sla.Instance{ID: t.ID.Instance,
				Available: sla.Available(t) || !t.State.HoldsResources(),
				Disrupted: e.restarting[gangOf(je, t.ID.Instance)] != nil})
		}
		room[id] = job.Room()
	}
	return room
}
