package core

import (
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
)

// disruptions asks whether taking instances down keeps their job's SLA:
// stops, restarts and preemption describe the job to shard/sla the same
// way (slaJob) and act on its answer.
type disruptions struct{ e *State }

// admitStops asks the SLA whether the live instances among instances may
// all be stopped now.
func (ds disruptions) admitStops(je *Job, instances []uint32) error {
	return ds.admitTakeDown(je, instances, "stopping", "stop")
}

// admitTakeDown asks the SLA whether the live instances among instances
// (their gangs whole) may all go down now, for what is being done to them
// (doing: "stopping", do: "stop").
func (ds disruptions) admitTakeDown(je *Job, instances []uint32, doing, do string) error {
	job := ds.slaJob(je)
	seen := map[uint32]bool{}
	for _, i := range instances {
		t := je.Tasks[i]
		g := GangOf(je, i)
		if seen[g.Gang] || t.State.IsTerminal() || t.Goal == model.TaskKilled {
			continue
		}
		seen[g.Gang] = true
		if ok, why := job.Disrupt(gangIDs(je, g)); !ok {
			return fmt.Errorf("%s instance %d of job %s now %w (%s); %s fewer at once, wait, or force it",
				doing, i, je.Job.ID, ErrSLA, why, do)
		}
	}
	return nil
}

// slaJob is the job as the SLA sees it: its limit, and its instances.
// Instances that ended for good (a batch job's successes, stopped
// instances) are not part of it; gangs being restarted count as
// disrupted.
func (ds disruptions) slaJob(je *Job) *sla.Job {
	return &sla.Job{Limit: SLALimit(&je.Job.Spec), Instances: ds.slaView(je)}
}

// slaView is the job's instances for slaJob.
func (ds disruptions) slaView(je *Job) []sla.Instance {
	out := make([]sla.Instance, 0, len(je.Tasks))
	for _, t := range je.Tasks {
		if t == nil || IsCold(t) {
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
			Disrupted: removing || ds.e.Queue.Restarting[GangOf(je, t.ID.Instance)] != nil,
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
func (ds disruptions) preemptionRoom() map[model.JobID]uint32 {
	var room map[model.JobID]uint32
	for id, je := range ds.e.LongRunning {
		spec := &je.Job.Spec
		if !spec.Preemptible || !spec.LongRunning() || je.Evicted || je.Job.Status.State.IsTerminal() {
			continue
		}
		if room == nil {
			room = map[model.JobID]uint32{}
		}
		job := &sla.Job{Limit: SLALimit(spec)}
		for _, t := range je.Tasks {
			if t == nil || IsCold(t) || t.State.IsTerminal() && t.State != model.TaskLost {
				continue
			}
			// A queued instance holds nothing: it counts as up here.
			job.Instances = append(job.Instances, sla.Instance{ID: t.ID.Instance,
				Available: sla.Available(t) || !t.State.HoldsResources(),
				Disrupted: ds.e.Queue.Restarting[GangOf(je, t.ID.Instance)] != nil})
		}
		room[id] = job.Room()
	}
	return room
}

// restarted now; callers hold e.mu.
func (ds disruptions) restartableGangs(id model.JobID, instances []uint32, force bool) ([]resmgr.GangID, error) {
	je := ds.e.Jobs[id]
	switch {
	case je == nil:
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	case je.Evicted || je.Job.Status.State.IsTerminal() || je.Job.Status.Killed:
		return nil, fmt.Errorf("job %s is %s: only a running job's tasks can be restarted: %w", id, je.Job.Status.State, ErrJobFinished)
	}
	var gangs []resmgr.GangID
	for _, i := range instances {
		if int(i) >= len(je.Tasks) || i >= je.Job.Spec.Instances {
			return nil, fmt.Errorf("instance %d of job %s: %w", i, id, ErrNotFound)
		}
		t := je.Tasks[i]
		if IsCold(t) || t.State.IsTerminal() || t.Goal == model.TaskKilled {
			return nil, fmt.Errorf("instances: instance %d of job %s is %s with goal %s: there is no run to restart: %w", i, id, t.State, t.Goal, ErrInvalid)
		}
		if g := GangOf(je, i); !slices.Contains(gangs, g) {
			gangs = append(gangs, g)
		}
	}
	if !force && je.Job.Spec.LongRunning() {
		if err := ds.admitTakeDown(je, instances, "restarting", "restart"); err != nil {
			return nil, err
		}
	}
	return gangs, nil
}

// Every operation that takes running instances down (a rolling update's
// batch, a migration's move, a host drain, preemption) asks shard/sla the
// same way: with an sla.Job built by slaJob, and waits when told "not
// now".

// SLALimit is how many of the job's instances may be unavailable at once.
func SLALimit(spec *model.JobSpec) uint32 {
	b := sla.DefaultServiceBudget
	if s := spec.SLA; s != nil {
		b = sla.Budget{Value: s.MaxUnavailable, Percent: s.Percent}
	}
	return b.Limit(spec.Instances)
}
