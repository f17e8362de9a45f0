package core

import (
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Every task belongs to a gang: consecutive instances of a job grouped by
// its gang size, or a gang of one. The resource manager admits, and
// placement places, whole gangs; a gang is preempted or restarted whole.

// Reasons for gang-level transitions.
const (
	reasonGangRestart = goalstate.ReasonGangRestart
	reasonGangFailed  = "GANG_MEMBER_FAILED"
)

func GangSize(spec *model.JobSpec) uint32 {
	if spec.GangSize > 1 {
		return spec.GangSize
	}
	return 1
}

func GangOf(je *Job, instance uint32) resmgr.GangID {
	return resmgr.GangID{Job: je.Job.ID, Gang: instance / GangSize(&je.Job.Spec)}
}

// members returns the tasks of a gang; the last gang of a job whose
// instances are not a multiple of the gang size is smaller. Nil while the
// gang's tasks are not all created yet.
func (je *Job) members(g resmgr.GangID) []*model.TaskRuntime {
	n := GangSize(&je.Job.Spec)
	first := g.Gang * n
	// Instances an update removed are members until they are forgotten.
	end := min(first+n, max(je.Job.Spec.Instances, uint32(len(je.Tasks))))
	if first >= end || int(end) > len(je.Tasks) {
		return nil
	}
	return je.Tasks[first:end]
}

// gangIDs returns the instances of a gang: what the SLA is asked about
// when the gang is to be taken down whole.
func gangIDs(je *Job, g resmgr.GangID) []uint32 {
	return sla.Gang(GangSize(&je.Job.Spec), g.Gang, uint32(len(je.members(g))))
}

// queueBook is the queue's book: the resource manager's scheduler (its
// gangs waiting and admitted, per pool), the gangs being restarted whole,
// and the tasks admitted and ready for placement. Its methods queue a
// job's waiting tasks as gangs, admit them, and restart gangs.
type queueBook struct {
	Sched      *resmgr.Scheduler
	Restarting map[resmgr.GangID]*gangRestart
	Ready      []model.TaskID
}

// gangFor describes a gang to the resource manager with its members'
// current runs.
func (b *queueBook) gangFor(e *State, je *Job, g resmgr.GangID, tasks []*model.TaskRuntime) resmgr.Gang {
	spec := &je.Job.Spec
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
		r := je.TaskResources(t)
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
func (b *queueBook) enqueueGang(e *State, je *Job, g resmgr.GangID, tasks []*model.TaskRuntime, now time.Time) {
	if err := b.Sched.Enqueue(b.gangFor(e, je, g, tasks)); err != nil {
		e.Log.Warn("gang refused by the resource manager", "gang", g, "err", err)
		for _, t := range tasks {
			t.Goal = model.TaskKilled
			t.Reason, t.Message = model.ReasonUnplaceable, err.Error()
			t.CompletionTime = now
			runs{e}.setState(je, t, model.TaskFailed, now)
		}
	}
}

// queueWaiting moves a job's waiting gangs to PENDING and the resource
// manager, whole gangs only, within maxRunning and after any backoff.
func (b *queueBook) queueWaiting(e *State, je *Job, now time.Time) {
	limit := je.Job.Spec.MaxRunning
	kept := je.waiting[:0]
	seen := map[uint32]bool{}
	for _, inst := range je.waiting {
		if je.Tasks[inst].State != model.TaskInitialized {
			continue
		}
		g := GangOf(je, inst)
		first := !seen[g.Gang]
		seen[g.Gang] = true
		if !first {
			kept = append(kept, inst)
			continue
		}
		members, ready := b.readyMembers(je, g, now)
		if !ready || (limit > 0 && je.Counts.active()+uint32(len(members)) > limit) {
			kept = append(kept, inst)
			continue
		}
		for _, m := range members {
			runs{e}.setState(je, m, model.TaskPending, now)
			e.Clusters.preferClusters(e, je, m)
		}
		b.enqueueGang(e, je, g, members, now)
	}
	// Instances of gangs that were queued are no longer waiting.
	out := kept[:0]
	for _, inst := range kept {
		if je.Tasks[inst].State == model.TaskInitialized {
			out = append(out, inst)
		}
	}
	je.waiting = out
}

// readyMembers returns the members of gang g to run (those that already
// succeeded are not run again) and whether the gang may be queued: it has
// members to run, every one waits with its retry delay passed, and the
// scheduler no longer holds its previous incarnation (still being killed).
func (b *queueBook) readyMembers(je *Job, g resmgr.GangID, now time.Time) ([]*model.TaskRuntime, bool) {
	all := je.members(g)
	ready := len(all) > 0
	var members []*model.TaskRuntime
	for _, m := range all {
		if m.State == model.TaskSucceeded {
			continue
		}
		members = append(members, m)
		if m.State != model.TaskInitialized || m.RetryAfter.After(now) {
			ready = false
		}
	}
	if _, _, known := b.Sched.Lookup(g); known {
		ready = false
	}
	return members, ready && len(members) > 0
}

// admit runs a resource manager pass: admitted gangs go to placement,
// preempted ones are killed and will be queued again.
func (b *queueBook) admit(e *State, now time.Time) {
	capacity, _ := e.Settings.Hosts.Capacity()
	var slack model.Resources
	if len(e.Revocable.Jobs) > 0 {
		slack = e.slack()
	}
	d := b.Sched.Pass(resmgr.PassInput{Capacity: capacity, Slack: slack, Disruptable: disruptions{e}.preemptionRoom()})
	for _, g := range d.Admit {
		gang, _, ok := b.Sched.Lookup(g)
		je := e.Jobs[g.Job]
		if !ok || je == nil {
			continue
		}
		for _, m := range gang.Members {
			_, t := e.Task(m.Task)
			if t != nil && t.Run == m.Run && t.State == model.TaskPending {
				e.figures.QueueWaits = append(e.figures.QueueWaits, poolWait{je.Job.Spec.Pool, now.Sub(t.UpdateTime)})
				runs{e}.setState(je, t, model.TaskReady, now)
				b.Ready = append(b.Ready, t.ID)
			}
		}
	}
	for _, p := range d.Preempt {
		je := e.Jobs[p.Gang.Job]
		if je == nil {
			b.Sched.Remove(p.Gang)
			continue
		}
		e.Log.Info("preempting gang", "gang", p.Gang, "pool", p.Pool, "reason", p.Reason)
		e.figures.Preempted = append(e.figures.Preempted, preemptLabel(p.Reason))
		b.restartGang(e, je, p.Gang, model.ReasonPreempted, "preempted: "+string(p.Reason), now)
	}
}

// restartGang kills every live member of a gang; when the last one ended,
// the resource manager forgets the gang and its members start new runs.
// Preemption and gang restarts both come here; neither counts as a failure.
func (b *queueBook) restartGang(e *State, je *Job, g resmgr.GangID, reason, msg string, now time.Time) {
	if b.Restarting[g] != nil {
		return
	}
	r := &gangRestart{reason: reason, message: msg}
	b.Restarting[g] = r
	for _, t := range je.members(g) {
		switch {
		case t.State == model.TaskLaunching || t.State == model.TaskRunning:
			r.remaining++
			t.Reason, t.Message = reason, msg
			e.markDirty(je, t)
			runs{e}.sendKill(je, t, je.killGrace(t))
		case t.State.IsTerminal() && t.State != model.TaskSucceeded:
			// Ended already (the member whose failure restarts the gang).
		default:
			runs{e}.release(je, t)
			t.Reason, t.Message = reason, msg
			if t.State != model.TaskInitialized {
				runs{e}.newRun(je, t, now)
			}
		}
	}
	b.finishRestart(e, je, g, now)
}

// gangRestart tracks a gang whose members are being killed to run again.
type gangRestart struct {
	remaining int
	reason    string
	message   string
}

// finishRestart completes a restart once no member is still running.
func (b *queueBook) finishRestart(e *State, je *Job, g resmgr.GangID, now time.Time) {
	r := b.Restarting[g]
	if r == nil || r.remaining > 0 {
		return
	}
	delete(b.Restarting, g)
	b.Sched.Remove(g)
	for _, t := range je.members(g) {
		if t.State.IsTerminal() && t.Goal != model.TaskKilled && (t.State != model.TaskFailed || t.Failures < je.Job.Spec.MaxAttempts) {
			t.Reason, t.Message = r.reason, r.message
			runs{e}.newRun(je, t, now)
		}
	}
}

// slack is the allocated-but-unused total reported by plugins that measure
// usage; revocable work is admitted within it.
func (e *State) slack() model.Resources {
	var total model.Resources
	for _, s := range e.Revocable.hostSlack(e, e.Settings.Hosts.Snapshot()) {
		total = total.Add(s)
	}
	return total
}

// RecoverGangs hands a recovered job's gangs back to the resource manager:
// running ones are adopted with what they hold, queued ones queued again.
func (b *queueBook) RecoverGangs(e *State, je *Job) {
	now := e.Now
	n := GangSize(&je.Job.Spec)
	for first := uint32(0); first < uint32(len(je.Tasks)); first += n {
		g := GangOf(je, first)
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
			if err := b.Sched.Adopt(b.gangFor(e, je, g, holding)); err != nil {
				e.Log.Warn("cannot adopt running gang", "gang", g, "err", err)
			}
			// Members still queued wait for the gang's next incarnation.
			for _, t := range pending {
				runs{e}.setState(je, t, model.TaskInitialized, now)
				je.waiting = append(je.waiting, t.ID.Instance)
			}
		case len(pending) > 0:
			b.enqueueGang(e, je, g, pending, now)
		}
	}
}

// PoolFigures reports a pool's demand, allocation and entitlement from the
// resource manager's last pass.
func (b *poolBook) PoolFigures(e *State, path string) (demand, allocation, entitlement model.Resources) {
	f, ok := e.Queue.Sched.PoolFigures(path)
	if !ok {
		return
	}
	return f.Demand, f.Allocation.Add(f.RevocableAllocation), f.Entitlement
}

func sortVictims[T any](vs []T, less func(a, b T) bool) {
	sort.Slice(vs, func(i, j int) bool { return less(vs[i], vs[j]) })
}
