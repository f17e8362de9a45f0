package jobmgr

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
)

// rolloutOf and friends read the job's rolling update (shard/rollout);
// callers hold e.mu.

// rolloutDirty reports whether the job's update record waits for a write.
func (e *Engine) rolloutDirty(je *jobEntry) bool {
	ro := e.rollouts[je.job.ID]
	return ro != nil && ro.Dirty
}

// runningUpdate is the job's update while it runs, nil otherwise.
func (e *Engine) runningUpdate(je *jobEntry) *model.Update {
	if ro := e.rollouts[je.job.ID]; ro.Running() {
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
func (e *Engine) rollUpdate(je *jobEntry, now time.Time) {
	j := je.job
	ro := e.rollouts[j.ID]
	if !ro.Running() {
		if ro == nil && je.migration == nil && uint32(len(je.tasks)) > j.Spec.Instances && j.Spec.Type != model.JobDaemon && !j.Status.State.IsTerminal() {
			// Removed instances left by an update that ended early (aborted,
			// replaced) still go, under the SLA.
			e.applyUpdatePlan(je, nil, e.updateInput(je, nil, max(j.ConfigVersion, 1), now), now)
		}
		return
	}
	switch {
	case j.Status.Killed:
		e.endUpdate(je, model.UpdateAborted, "the job was stopped", now)
		return
	case j.Status.State.IsTerminal():
		e.endUpdate(je, model.UpdateAborted, "the job finished", now)
		return
	}
	if e.countFailures(je, ro, now) {
		return
	}
	e.syncExtraCanaries(je, ro)
	target := ro.Target()
	plan := e.applyUpdatePlan(je, ro, e.updateInput(je, ro, target, now), now)
	if ro.AutoPromote(plan, now) {
		e.log.Info("job update promoted", "job", j.ID, "update", ro.Update.ID, "by", ro.Update.PromotedBy)
	}
	ro.Report(plan, j.Spec.Instances)
	if plan.Complete {
		st, msg := ro.Outcome(plan)
		e.endUpdate(je, st, msg, now)
		ro.Update.InstancesInFlight = 0
		je.dropOldConfigs()
	}
}

// updateInput describes the job's gangs to rollout.Step. With no update
// (ro nil) only removed gangs are of interest.
func (e *Engine) updateInput(je *jobEntry, ro *rollout.Job, target uint64, now time.Time) rollout.Input {
	j := je.job
	n := gangSize(&j.Spec)
	in := rollout.Input{Now: now, Instances: j.Spec.Instances}
	if ro != nil {
		ro.Configure(&in)
	}
	for first := uint32(0); first < uint32(len(je.tasks)); first += n {
		g := gangOf(je, first)
		ms := je.members(g)
		if ms == nil {
			continue
		}
		if first >= j.Spec.Instances {
			in.Gangs = append(in.Gangs, e.removedGang(je, g, ms))
		} else if ro != nil {
			in.Gangs = append(in.Gangs, e.updateGang(je, ro, g, ms, target))
		}
	}
	// Long-running jobs never lose more instances at once than their SLA
	// allows, whatever else disrupts them.
	if j.Spec.LongRunning() {
		in.SLA, in.GangSize = e.slaJob(je), n
	}
	return in
}

// removedGang describes a gang beyond the job's instance count.
func (e *Engine) removedGang(je *jobEntry, g resmgr.GangID, ms []*model.TaskRuntime) rollout.Gang {
	rg := rollout.Gang{Gang: g.Gang, Size: uint32(len(ms)), Removed: true, Ended: true, Stopping: e.restarting[g] != nil}
	for _, t := range ms {
		if !t.State.IsTerminal() {
			rg.Ended = false
			rg.Stopping = rg.Stopping || t.Goal == model.TaskKilled
		}
	}
	return rg
}

// updateGang describes a gang of the job to the update's step.
func (e *Engine) updateGang(je *jobEntry, ro *rollout.Job, g resmgr.GangID, ms []*model.TaskRuntime, target uint64) rollout.Gang {
	rg := rollout.Gang{Gang: g.Gang, Size: uint32(len(ms)), Restarting: e.restarting[g] != nil}
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
func (e *Engine) applyUpdatePlan(je *jobEntry, ro *rollout.Job, in rollout.Input, now time.Time) rollout.Plan {
	plan := rollout.Step(in)
	j := je.job
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
		e.restartGang(je, g, rollout.ReasonUpdated, fmt.Sprintf("restarting on config %d (update %s)", j.ConfigVersion, u.ID), now)
		ro.Restarted(gang, je.members(g))
	}
	if plan.Complete || ro == nil {
		e.forgetRemoved(je)
	}
	return plan
}

// removeGang stops the members of a gang the job no longer has.
func (e *Engine) removeGang(je *jobEntry, g resmgr.GangID, now time.Time) {
	for _, t := range je.members(g) {
		if t.State.IsTerminal() || t.Goal == model.TaskKilled {
			continue
		}
		t.Goal = model.TaskKilled
		t.Reason, t.Message = rollout.ReasonRemoved, fmt.Sprintf("removed: the job has %d instances now", je.job.Spec.Instances)
		e.markDirty(je, t)
		e.killTask(je, t, je.killGrace(t), now)
	}
}

// forgetRemoved drops the ended instances beyond the job's instance count:
// the job's created count goes down with them, so a later update that
// adds instances makes them anew. Their last records stay in the store
// (as history) until the job is deleted, and are not listed.
func (e *Engine) forgetRemoved(je *jobEntry) {
	j := je.job
	n := j.Spec.Instances
	if uint32(len(je.tasks)) <= n || j.Spec.Type == model.JobDaemon {
		return
	}
	for _, t := range je.tasks[n:] {
		if !t.State.IsTerminal() {
			return
		}
	}
	// Ended tasks that left memory are read back for their last run.
	last := make([]*model.TaskRuntime, 0, len(je.tasks)-int(n))
	for i, t := range je.tasks[n:] {
		if isCold(t) {
			stored, err := e.cfg.Store.GetTask(context.Background(), model.TaskID{Job: j.ID, Instance: n + uint32(i)})
			if err != nil {
				e.log.Warn("reading a removed instance failed; will retry", "job", j.ID, "instance", n+uint32(i), "err", err)
				return
			}
			t = stored
		}
		last = append(last, t)
	}
	for i, t := range je.tasks[n:] {
		je.counts[t.State]--
		if isCold(t) {
			je.cold--
		}
		je.rememberRemoved(last[i])
	}
	clear(je.tasks[n:])
	je.tasks = je.tasks[:n]
	j.Status.TasksCreated = n
	je.dirty, je.record = true, true
	e.log.Info("removed instances forgotten", "job", j.ID, "instances", n)
}

// preferOwnHosts asks placement to put the gang's next runs on the hosts
// their current runs use, where they still fit (an in-place update).
func (e *Engine) preferOwnHosts(je *jobEntry, g resmgr.GangID) {
	for _, t := range je.members(g) {
		if t.Host != "" && (t.State == model.TaskRunning || t.State == model.TaskLaunching) {
			if je.prefer == nil {
				je.prefer = map[uint32]placementPref{}
			}
			je.prefer[t.ID.Instance] = placementPref{host: t.Host}
		}
	}
}

// slaHolds reports whether taking instance's gang down now would break
// the job's SLA, with the reason.
func (e *Engine) slaHolds(je *jobEntry, instance uint32) (bool, string) {
	if !je.job.Spec.LongRunning() {
		return false, ""
	}
	ok, why := e.slaJob(je).Disrupt(gangIDs(je, gangOf(je, instance)))
	return !ok, why
}

// sameTask reports whether an instance runs the same task under config
// versions a and b. Configs without overrides are compared once per pair.
func (je *jobEntry) sameTask(a, b uint64, instance uint32) bool {
	if a == b {
		return true
	}
	for _, v := range [2]uint64{a, b} {
		if je.configs[v] == nil && v != je.job.ConfigVersion {
			return false // not loaded: restart to be sure
		}
	}
	ca, cb := je.config(a), je.config(b)
	if len(ca.spec.Overrides) > 0 || len(cb.spec.Overrides) > 0 {
		return reflect.DeepEqual(ca.task(instance), cb.task(instance))
	}
	key := [2]uint64{a, b}
	if same, ok := je.sameTasks[key]; ok {
		return same
	}
	if je.sameTasks == nil {
		je.sameTasks = map[[2]uint64]bool{}
	}
	same := reflect.DeepEqual(ca.spec.Task, cb.spec.Task)
	je.sameTasks[key] = same
	return same
}

// removedTask is what is kept of an instance an update removed.
type removedTask struct {
	run      uint32
	revision uint64
}

func (je *jobEntry) rememberRemoved(t *model.TaskRuntime) {
	if je.removed == nil {
		je.removed = map[uint32]removedTask{}
	}
	je.removed[t.ID.Instance] = removedTask{run: t.Run, revision: t.Revision}
}

// reuseRemoved continues a new task from the instance an update removed
// before, if any: its next run follows the last one.
func (je *jobEntry) reuseRemoved(t *model.TaskRuntime) {
	if r, ok := je.removed[t.ID.Instance]; ok {
		delete(je.removed, t.ID.Instance)
		t.Run, t.Revision = r.run+1, r.revision
	}
}
