package jobmgr

import (
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Every task belongs to a gang: consecutive instances of a job grouped by
// its gang size, or a gang of one. The resource manager admits, and
// placement places, whole gangs; a gang is preempted or restarted whole.

// Reasons for gang-level transitions.
const (
	ReasonGangRestart = goalstate.ReasonGangRestart
	ReasonGangFailed  = "GANG_MEMBER_FAILED"
)

func gangSize(spec *model.JobSpec) uint32 {
	if spec.GangSize > 1 {
		return spec.GangSize
	}
	return 1
}

func gangOf(je *jobEntry, instance uint32) resmgr.GangID {
	return resmgr.GangID{Job: je.job.ID, Gang: instance / gangSize(&je.job.Spec)}
}

// members returns the tasks of a gang; the last gang of a job whose
// instances are not a multiple of the gang size is smaller. Nil while the
// gang's tasks are not all created yet.
func (je *jobEntry) members(g resmgr.GangID) []*model.TaskRuntime {
	n := gangSize(&je.job.Spec)
	first := g.Gang * n
	// Instances an update removed are members until they are forgotten.
	end := min(first+n, max(je.job.Spec.Instances, uint32(len(je.tasks))))
	if first >= end || int(end) > len(je.tasks) {
		return nil
	}
	return je.tasks[first:end]
}

// gangIDs returns the instances of a gang: what the SLA is asked about
// when the gang is to be taken down whole.
func gangIDs(je *jobEntry, g resmgr.GangID) []uint32 {
	return sla.Gang(gangSize(&je.job.Spec), g.Gang, uint32(len(je.members(g))))
}

// gangFor describes a gang to the resource manager with its members'
// current runs.
func (e *Engine) gangFor(je *jobEntry, g resmgr.GangID, tasks []*model.TaskRuntime) resmgr.Gang {
	spec := &je.job.Spec
	out := resmgr.Gang{
		ID:          g,
		Pool:        spec.Pool,
		Priority:    spec.Priority,
		Preemptible: spec.Preemptible,
		Revocable:   spec.Revocable,
		Members:     make([]resmgr.Member, len(tasks)),
	}
	// Members may differ by their overrides; the gang asks for the most
	// any member needs, per resource.
	for i, t := range tasks {
		out.Members[i] = resmgr.Member{Task: t.ID, Run: t.Run}
		r := je.taskResources(t)
		if i == 0 {
			out.PerTask = r
		} else {
			out.PerTask = out.PerTask.Max(r)
		}
	}
	return out
}

// enqueueGang hands a gang whose members are all PENDING to the resource
// manager. A gang the resource manager refuses (its pool is gone) fails.
func (e *Engine) enqueueGang(je *jobEntry, g resmgr.GangID, tasks []*model.TaskRuntime, now time.Time) {
	if err := e.sched.Enqueue(e.gangFor(je, g, tasks)); err != nil {
		e.log.Warn("gang refused by the resource manager", "gang", g, "err", err)
		for _, t := range tasks {
			t.Goal = model.TaskKilled
			t.Reason, t.Message = model.ReasonUnplaceable, err.Error()
			t.CompletionTime = now
			e.setState(je, t, model.TaskFailed, now)
		}
	}
}

// queueWaiting moves a job's waiting gangs to PENDING and the resource
// manager, whole gangs only, within maxRunning and after any backoff.
func (e *Engine) queueWaiting(je *jobEntry, now time.Time) {
	limit := je.job.Spec.MaxRunning
	kept := je.waiting[:0]
	seen := map[uint32]bool{}
	for _, inst := range je.waiting {
		t := je.tasks[inst]
		if t.State != model.TaskInitialized {
			continue
		}
		g := gangOf(je, inst)
		if seen[g.Gang] {
			kept = append(kept, inst)
			continue
		}
		// Members that already succeeded are not run again.
		var members []*model.TaskRuntime
		all := je.members(g)
		ready := len(all) > 0
		for _, m := range all {
			if m.State == model.TaskSucceeded {
				continue
			}
			members = append(members, m)
			if m.State != model.TaskInitialized || m.RetryAfter.After(now) {
				ready = false
			}
		}
		if _, _, known := e.sched.Lookup(g); known {
			ready = false // the previous incarnation is still being killed
		}
		if !ready || len(members) == 0 || (limit > 0 && je.counts.active()+uint32(len(members)) > limit) {
			seen[g.Gang] = true
			kept = append(kept, inst)
			continue
		}
		seen[g.Gang] = true
		for _, m := range members {
			e.setState(je, m, model.TaskPending, now)
			e.preferClusters(je, m)
		}
		e.enqueueGang(je, g, members, now)
	}
	// Instances of gangs that were queued are no longer waiting.
	out := kept[:0]
	for _, inst := range kept {
		if je.tasks[inst].State == model.TaskInitialized {
			out = append(out, inst)
		}
	}
	je.waiting = out
}

// admit runs a resource manager pass: admitted gangs go to placement,
// preempted ones are killed and will be queued again.
func (e *Engine) admit(now time.Time) {
	capacity, _ := e.cfg.Hosts.Capacity()
	var slack model.Resources
	if len(e.revocable) > 0 {
		slack = e.slack()
	}
	d := e.sched.Pass(resmgr.PassInput{Capacity: capacity, Slack: slack, Disruptable: e.preemptionRoom()})
	for _, g := range d.Admit {
		gang, _, ok := e.sched.Lookup(g)
		je := e.jobs[g.Job]
		if !ok || je == nil {
			continue
		}
		for _, m := range gang.Members {
			_, t := e.task(m.Task)
			if t != nil && t.Run == m.Run && t.State == model.TaskPending {
				e.stats.queued(je.job.Spec.Pool, now.Sub(t.UpdateTime))
				e.setState(je, t, model.TaskReady, now)
				e.ready = append(e.ready, t.ID)
			}
		}
	}
	for _, p := range d.Preempt {
		je := e.jobs[p.Gang.Job]
		if je == nil {
			e.sched.Remove(p.Gang)
			continue
		}
		e.log.Info("preempting gang", "gang", p.Gang, "pool", p.Pool, "reason", p.Reason)
		e.stats.preempted(preemptLabel(p.Reason))
		e.restartGang(je, p.Gang, model.ReasonPreempted, "preempted: "+string(p.Reason), now)
	}
}

// restartGang kills every live member of a gang; when the last one ended,
// the resource manager forgets the gang and its members start new runs.
// Preemption and gang restarts both come here; neither counts as a failure.
func (e *Engine) restartGang(je *jobEntry, g resmgr.GangID, reason, msg string, now time.Time) {
	if e.restarting[g] != nil {
		return
	}
	r := &gangRestart{reason: reason, message: msg}
	e.restarting[g] = r
	for _, t := range je.members(g) {
		switch {
		case t.State == model.TaskLaunching || t.State == model.TaskRunning:
			r.remaining++
			t.Reason, t.Message = reason, msg
			e.markDirty(je, t)
			e.sendKill(je, t, je.killGrace(t))
		case t.State.IsTerminal() && t.State != model.TaskSucceeded:
			// Ended already (the member whose failure restarts the gang).
		default:
			e.release(je, t)
			t.Reason, t.Message = reason, msg
			if t.State != model.TaskInitialized {
				e.newRun(je, t, now)
			}
		}
	}
	e.finishRestart(je, g, now)
}

// gangRestart tracks a gang whose members are being killed to run again.
type gangRestart struct {
	remaining int
	reason    string
	message   string
}

// finishRestart completes a restart once no member is still running.
func (e *Engine) finishRestart(je *jobEntry, g resmgr.GangID, now time.Time) {
	r := e.restarting[g]
	if r == nil || r.remaining > 0 {
		return
	}
	delete(e.restarting, g)
	e.sched.Remove(g)
	for _, t := range je.members(g) {
		if t.State.IsTerminal() && t.Goal != model.TaskKilled && (t.State != model.TaskFailed || t.Failures < je.job.Spec.MaxAttempts) {
			t.Reason, t.Message = r.reason, r.message
			e.newRun(je, t, now)
		}
	}
}

// sendKill asks the plugin to kill a launched run, once.
func (e *Engine) sendKill(je *jobEntry, t *model.TaskRuntime, grace time.Duration) {
	if je.killSent[t.RunID()] {
		return
	}
	je.killSent[t.RunID()] = true
	e.effects = append(e.effects, effect{kill: &hostmgr.RunRef{Run: t.RunID(), Host: t.Host}, grace: grace})
}

// slack is the allocated-but-unused total reported by plugins that measure
// usage; revocable work is admitted within it.
func (e *Engine) slack() model.Resources {
	var total model.Resources
	for _, s := range e.hostSlack(e.cfg.Hosts.Snapshot()) {
		total = total.Add(s)
	}
	return total
}

// recoverGangs hands a recovered job's gangs back to the resource manager:
// running ones are adopted with what they hold, queued ones queued again.
func (e *Engine) recoverGangs(je *jobEntry) {
	now := e.cfg.Clock.Now()
	n := gangSize(&je.job.Spec)
	for first := uint32(0); first < uint32(len(je.tasks)); first += n {
		g := gangOf(je, first)
		var holding, pending []*model.TaskRuntime
		for _, t := range je.members(g) {
			switch {
			case t.State.HoldsResources():
				holding = append(holding, t)
			case t.State == model.TaskPending:
				pending = append(pending, t)
			}
		}
		switch {
		case len(holding) > 0:
			if err := e.sched.Adopt(e.gangFor(je, g, holding)); err != nil {
				e.log.Warn("cannot adopt running gang", "gang", g, "err", err)
			}
			// Members still queued wait for the gang's next incarnation.
			for _, t := range pending {
				e.setState(je, t, model.TaskInitialized, now)
				je.waiting = append(je.waiting, t.ID.Instance)
			}
		case len(pending) > 0:
			e.enqueueGang(je, g, pending, now)
		}
	}
}

// poolFigures reports a pool's demand, allocation and entitlement from the
// resource manager's last pass.
func (e *Engine) poolFigures(path string) (demand, allocation, entitlement model.Resources) {
	f, ok := e.sched.PoolFigures(path)
	if !ok {
		return
	}
	return f.Demand, f.Allocation.Add(f.RevocableAllocation), f.Entitlement
}

func sortVictims[T any](vs []T, less func(a, b T) bool) {
	sort.Slice(vs, func(i, j int) bool { return less(vs[i], vs[j]) })
}
