package core

import (
	"slices"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/maintenance"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// drainEvery bounds how often the drain step scans running tasks.
const drainEvery = 250 * time.Millisecond

// drainBook is the host drains' adapter on the core (shard/maintenance
// holds their step): last is when the step last ran.
type drainBook struct{ last time.Time }

// drainStep moves what runs on draining hosts, as maintenance.Drain decides:
// revocable runs and runs past the drain's deadline are killed at once;
// long-running instances are restarted elsewhere as their job's SLA
// allows; a gang is taken down whole.
func (b *drainBook) drainStep(e *State, now time.Time) {
	if now.Sub(b.last) < drainEvery {
		return
	}
	b.last = now
	hosts, busy := b.drainingHosts(e)
	if !busy {
		return
	}
	for _, a := range maintenance.Drain(b.drainInput(e, now, hosts)).Actions {
		je, t := e.Task(model.TaskID{Job: a.Job, Instance: a.Instance})
		if t == nil {
			continue
		}
		switch a.Kind {
		case maintenance.DrainHold:
			b.noteWaiting(e, je, t, a.Message, now)
		case maintenance.DrainMove, maintenance.DrainKill:
			e.Log.Info("drain stops a run", "task", t.ID, "host", t.Host, "why", a.Message)
			e.Queue.restartGang(e, je, GangOf(je, t.ID.Instance), a.Reason, a.Message, now)
		}
	}
}

// drainInput is the runs on the busy draining hosts, in job and instance
// order, with the SLA views of their long-running jobs.
func (b *drainBook) drainInput(e *State, now time.Time, hosts []maintenance.DrainHost) maintenance.DrainInput {
	in := maintenance.DrainInput{Now: now, Hosts: hosts, SLA: map[model.JobID]*sla.Job{}}
	draining := make(map[model.HostID]bool, len(hosts))
	for _, h := range hosts {
		draining[h.ID] = h.Tasks > 0
	}
	for _, je := range e.sortedJobs() {
		if je.Evicted || je.Job.Status.State.IsTerminal() {
			continue
		}
		spec := &je.Job.Spec
		for _, t := range je.Tasks {
			if t == nil || IsCold(t) || !t.State.HoldsResources() || !draining[t.Host] {
				continue
			}
			g := GangOf(je, t.ID.Instance)
			ids := gangIDs(je, g)
			in.Runs = append(in.Runs, maintenance.DrainRun{
				Job:        je.Job.ID,
				Instance:   t.ID.Instance,
				Host:       t.Host,
				Type:       spec.Type,
				Revocable:  spec.Revocable,
				Gang:       ids,
				Restarting: e.Queue.Restarting[g] != nil,
			})
			if _, ok := in.SLA[je.Job.ID]; !ok && spec.LongRunning() {
				in.SLA[je.Job.ID] = disruptions{e}.slaJob(je)
			}
		}
	}
	return in
}

// noteWaiting records on a task why a disruption of it waits.
func (b *drainBook) noteWaiting(e *State, je *Job, t *model.TaskRuntime, msg string, now time.Time) {
	if t.Message != msg {
		t.Message, t.UpdateTime = msg, now
		e.markDirty(je, t)
	}
}

// drainingHosts returns the hosts being drained (or marked down), with
// how many runs each still holds, and whether any holds one.
func (b *drainBook) drainingHosts(e *State) ([]maintenance.DrainHost, bool) {
	var out []maintenance.DrainHost
	busy := false
	for id, r := range e.HostRecs {
		if !r.Draining {
			continue
		}
		h := maintenance.DrainHost{ID: id, Deadline: r.DrainDeadline, Down: r.Down}
		if v, ok := e.Settings.Hosts.View(id); ok {
			h.Tasks = v.Tasks
		}
		busy = busy || h.Tasks > 0
		out = append(out, h)
	}
	out, busy = withClusterDrains(out, busy, e.Settings.Hosts.ClusterDraining(), e.HostRecs)
	slices.SortFunc(out, func(a, b maintenance.DrainHost) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out, busy
}

// withClusterDrains adds the hosts their cluster drains (a plugin reports
// them DRAINING, as Mesos maintenance does) to the hosts an operator
// drains: they drain the same way, up to the deadline their cluster gives
// (hostmgr.LabelDrainDeadline). An operator's drain of the same host wins.
func withClusterDrains(out []maintenance.DrainHost, busy bool, cluster []hostmgr.HostView, recs map[model.HostID]*model.HostRecord) ([]maintenance.DrainHost, bool) {
	for i := range cluster {
		v := &cluster[i]
		if r := recs[v.ID]; r != nil && r.Draining {
			continue
		}
		out = append(out, maintenance.DrainHost{ID: v.ID, Deadline: hostmgr.DrainDeadline(&v.Host), Tasks: v.Tasks})
		busy = busy || v.Tasks > 0
	}
	return out, busy
}
