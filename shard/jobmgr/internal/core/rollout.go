package core

import (
	"fmt"
	"reflect"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
)

// rolloutBook holds the rolling update of each job that has one running,
// or one ended whose record is not written yet; its methods are the
// rolling updates' adapter on the core (shard/rollout holds their step).
type rolloutBook map[model.JobID]*rollout.Job

// rolloutDirty reports whether the job's update record waits for a write.
func (b rolloutBook) rolloutDirty(je *Job) bool {
	ro := b[je.Job.ID]
	return ro != nil && ro.Dirty
}

// runningUpdate is the job's update while it runs, nil otherwise.
func (b rolloutBook) runningUpdate(je *Job) *model.Update {
	if ro := b[je.Job.ID]; ro.Running() {
		return ro.Update
	}
	return nil
}

// rollUpdate moves a job's instances onto its new config, one step per
// pass: rollout.Step decides from how the gangs stand, this shell applies
// its plan. Gangs whose runs use an older config are restarted, at most
// BatchSize instances at a time and each only when the SLA allows; a
// restarted gang counts as in flight until it runs and is available (for
// MinHealthy, when set). Instances beyond a lowered instance count are
// stopped, highest first, under the same rules, and forgotten once ended.
// Instances that are not running just take the new config; instances that
// finished (a batch job's successes) are left alone.
func (b rolloutBook) rollUpdate(e *State, je *Job, now time.Time) {
	j := je.Job
	ro := b[j.ID]
	if !ro.Running() {
		if ro == nil && e.Migrations.Jobs[j.ID] == nil && uint32(len(je.Tasks)) > j.Spec.Instances && j.Spec.Type != model.JobDaemon && !j.Status.State.IsTerminal() {
			// Removed instances left by an update that ended early (aborted,
			// replaced) still go, under the SLA.
			b.applyUpdatePlan(e, je, nil, b.updateInput(e, je, nil, max(j.ConfigVersion, 1), now), now)
		}
		return
	}
	switch {
	case j.Status.Killed:
		b.EndUpdate(e, je, model.UpdateAborted, "the job was stopped", now)
		return
	case j.Status.State.IsTerminal():
		b.EndUpdate(e, je, model.UpdateAborted, "the job finished", now)
		return
	}
	if b.countFailures(e, je, ro, now) {
		return
	}
	b.SyncExtraCanaries(je, ro)
	target := ro.Target()
	plan := b.applyUpdatePlan(e, je, ro, b.updateInput(e, je, ro, target, now), now)
	if ro.AutoPromote(plan, now) {
		e.Log.Info("job update promoted", "job", j.ID, "update", ro.Update.ID, "by", ro.Update.PromotedBy)
	}
	ro.Report(plan, j.Spec.Instances)
	if plan.Complete {
		st, msg := ro.Outcome(plan)
		b.EndUpdate(e, je, st, msg, now)
		ro.Update.InstancesInFlight = 0
		je.dropOldConfigs()
	}
}

// updateInput describes the job's gangs to rollout.Step. With no update
// (ro nil) only removed gangs are of interest.
func (b rolloutBook) updateInput(e *State, je *Job, ro *rollout.Job, target uint64, now time.Time) rollout.Input {
	j := je.Job
	n := GangSize(&j.Spec)
	in := rollout.Input{Now: now, Instances: j.Spec.Instances}
	if ro != nil {
		ro.Configure(&in)
	}
	for first := uint32(0); first < uint32(len(je.Tasks)); first += n {
		g := GangOf(je, first)
		ms := je.members(g)
		if ms == nil {
			continue
		}
		if first >= j.Spec.Instances {
			in.Gangs = append(in.Gangs, b.removedGang(e, je, g, ms))
		} else if ro != nil {
			in.Gangs = append(in.Gangs, b.updateGang(e, je, ro, g, ms, target))
		}
	}
	// Long-running jobs never lose more instances at once than their SLA
	// allows, whatever else disrupts them.
	if j.Spec.LongRunning() {
		in.SLA, in.GangSize = disruptions{e}.slaJob(je), n
	}
	return in
}

// removedGang describes a gang beyond the job's instance count.
func (b rolloutBook) removedGang(e *State, je *Job, g resmgr.GangID, ms []*model.TaskRuntime) rollout.Gang {
	rg := rollout.Gang{Gang: g.Gang, Size: uint32(len(ms)), Removed: true, Ended: true, Stopping: e.Queue.Restarting[g] != nil}
	for _, t := range ms {
		if !t.State.IsTerminal() {
			rg.Ended = false
			rg.Stopping = rg.Stopping || t.Goal == model.TaskKilled
		}
	}
	return rg
}

// updateGang describes a gang of the job to the update's step.
func (b rolloutBook) updateGang(e *State, je *Job, ro *rollout.Job, g resmgr.GangID, ms []*model.TaskRuntime, target uint64) rollout.Gang {
	rg := rollout.Gang{Gang: g.Gang, Size: uint32(len(ms)), Restarting: e.Queue.Restarting[g] != nil}
	ro.Describe(&rg)
	for _, t := range ms {
		switch {
		case t.State.IsTerminal():
		case t.ConfigVersion != target:
			// A run whose task is the same under the target (only the
			// instance count, the SLA or another instance's override
			// changed) takes the new version without a restart.
			rg.Stale = true
			rg.Queued = rg.Queued || (t.State != model.TaskInitialized && !je.sameTask(t.ConfigVersion, target, t.ID.Instance))
		case !sla.Available(t):
			rg.Settling = true
		}
	}
	return rg
}

// applyUpdatePlan runs one update step for the job and applies its plan.
func (b rolloutBook) applyUpdatePlan(e *State, je *Job, ro *rollout.Job, in rollout.Input, now time.Time) rollout.Plan {
	plan := rollout.Step(in)
	j := je.Job
	if ro != nil {
		ro.Settle(plan, now)
		for _, gang := range plan.Relabel {
			for _, t := range je.members(resmgr.GangID{Job: j.ID, Gang: gang}) {
				if !t.State.IsTerminal() && t.ConfigVersion != j.ConfigVersion {
					t.ConfigVersion = max(j.ConfigVersion, 1)
					e.markDirty(je, t)
				}
			}
		}
	}
	for _, gang := range plan.Remove {
		e.removeGang(je, resmgr.GangID{Job: j.ID, Gang: gang}, now)
	}
	for _, gang := range plan.Restart {
		g := resmgr.GangID{Job: j.ID, Gang: gang}
		u := ro.Update
		if u.InPlace {
			e.preferOwnHosts(je, g)
		}
		e.Queue.restartGang(e, je, g, rollout.ReasonUpdated, fmt.Sprintf("restarting on config %d (update %s)", j.ConfigVersion, u.ID), now)
		ro.Restarted(gang, je.members(g))
	}
	if plan.Complete || ro == nil {
		e.forgetRemoved(je)
	}
	return plan
}

// removeGang stops the members of a gang the job no longer has.
func (e *State) removeGang(je *Job, g resmgr.GangID, now time.Time) {
	for _, t := range je.members(g) {
		if t.State.IsTerminal() || t.Goal == model.TaskKilled {
			continue
		}
		t.Goal = model.TaskKilled
		t.Reason, t.Message = rollout.ReasonRemoved, fmt.Sprintf("removed: the job has %d instances now", je.Job.Spec.Instances)
		e.markDirty(je, t)
		runs{e}.killTask(je, t, je.killGrace(t), now)
	}
}

// forgetRemoved drops the ended instances beyond the job's instance count:
// the job's created count goes down with them, so a later update that
// adds instances makes them anew. Their last records stay in the store
// (as history) until the job is deleted, and are not listed.
func (e *State) forgetRemoved(je *Job) {
	j := je.Job
	n := j.Spec.Instances
	if uint32(len(je.Tasks)) <= n || j.Spec.Type == model.JobDaemon {
		return
	}
	for _, t := range je.Tasks[n:] {
		if !t.State.IsTerminal() {
			return
		}
	}
	// Ended tasks that left memory are read back for their last run: the
	// Engine reads what the core asks for after the pass (readBackTasks)
	// and the job is visited again once it has them.
	last := make([]*model.TaskRuntime, 0, len(je.Tasks)-int(n))
	missing := false
	for i, t := range je.Tasks[n:] {
		if IsCold(t) {
			id := model.TaskID{Job: j.ID, Instance: n + uint32(i)}
			if t = e.ReadBack[id]; t == nil {
				e.ToRead[id] = true
				missing = true
				continue
			}
		}
		last = append(last, t)
	}
	if missing {
		return
	}
	for i, t := range je.Tasks[n:] {
		delete(e.ReadBack, model.TaskID{Job: j.ID, Instance: n + uint32(i)})
		je.Counts[t.State]--
		if IsCold(t) {
			je.Cold--
		}
		je.RememberRemoved(last[i])
	}
	clear(je.Tasks[n:])
	je.Tasks = je.Tasks[:n]
	j.Status.TasksCreated = n
	je.Dirty, je.Record = true, true
	e.Log.Info("removed instances forgotten", "job", j.ID, "instances", n)
}

// preferOwnHosts asks placement to put the gang's next runs on the hosts
// their current runs use, where they still fit (an in-place update).
func (e *State) preferOwnHosts(je *Job, g resmgr.GangID) {
	for _, t := range je.members(g) {
		if t.Host != "" && (t.State == model.TaskRunning || t.State == model.TaskLaunching) {
			if je.prefer == nil {
				je.prefer = map[uint32]placementPref{}
			}
			je.prefer[t.ID.Instance] = placementPref{Host: t.Host}
		}
	}
}

// sameTask reports whether an instance runs the same task under config
// versions a and b. Configs without overrides are compared once per pair.
func (je *Job) sameTask(a, b uint64, instance uint32) bool {
	if a == b {
		return true
	}
	for _, v := range [2]uint64{a, b} {
		if je.Configs[v] == nil && v != je.Job.ConfigVersion {
			return false // not loaded: restart to be sure
		}
	}
	ca, cb := je.config(a), je.config(b)
	if len(ca.Spec.Overrides) > 0 || len(cb.Spec.Overrides) > 0 {
		return reflect.DeepEqual(ca.Task(instance), cb.Task(instance))
	}
	key := [2]uint64{a, b}
	if same, ok := je.sameTasks[key]; ok {
		return same
	}
	if je.sameTasks == nil {
		je.sameTasks = map[[2]uint64]bool{}
	}
	same := reflect.DeepEqual(ca.Spec.Task, cb.Spec.Task)
	je.sameTasks[key] = same
	return same
}

// removedTask is what is kept of an instance an update removed.
type removedTask struct {
	Run      uint32
	revision uint64
}

func (je *Job) RememberRemoved(t *model.TaskRuntime) {
	if je.Removed == nil {
		je.Removed = map[uint32]removedTask{}
	}
	je.Removed[t.ID.Instance] = removedTask{Run: t.Run, revision: t.Revision}
}

// reuseRemoved continues a new task from the instance an update removed
// before, if any: its next run follows the last one.
func (je *Job) reuseRemoved(t *model.TaskRuntime) {
	if r, ok := je.Removed[t.ID.Instance]; ok {
		delete(je.Removed, t.ID.Instance)
		t.Run, t.Revision = r.Run+1, r.revision
	}
}
