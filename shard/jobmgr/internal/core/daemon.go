package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/daemon"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A daemon job runs one instance on every host that takes it; what to
// start and stop is shard/daemon's decision. Its instances are made as
// hosts appear, each pinned to its host; instance numbers are never
// reused: a host that comes back gets a new instance.

// daemonHosts describes the reported hosts to shard/daemon.
func daemonHosts(views []hostmgr.HostView) []daemon.Host {
	out := make([]daemon.Host, len(views))
	for i := range views {
		v := &views[i]
		out[i] = daemon.Host{ID: v.ID, Up: v.State == model.HostUp && v.Hostname != "", Labels: v.Labels}
	}
	return out
}

// daemonBook is the daemon jobs' adapter on the core (shard/daemon holds
// their plan): HostsChanged says hosts came, went or changed state since
// the daemons were last visited.
type daemonBook struct{ HostsChanged bool }

// convergeDaemon makes the instances a daemon job lacks and stops those
// whose host no longer takes it.
func (b *daemonBook) convergeDaemon(e *State, je *Job, views []hostmgr.HostView, now time.Time) {
	j := je.Job
	var live []daemon.Instance
	for _, t := range je.Tasks {
		if t == nil || IsCold(t) || t.Goal == model.TaskKilled || t.State.IsTerminal() {
			continue
		}
		live = append(live, daemon.Instance{Instance: t.ID.Instance, Host: t.PinnedHost()})
	}
	d := daemon.Plan(daemonHosts(views), j.Spec.Task.Constraints, live)
	for _, i := range d.Stop {
		t := je.Tasks[i]
		why := "host " + string(t.PinnedHost()) + " no longer takes this daemon"
		t.Goal = model.TaskKilled
		if t.State == model.TaskRunning || t.State == model.TaskLaunching {
			t.Reason, t.Message = model.ReasonHostGone, why
		}
		e.markDirty(je, t)
		runs{e}.killTask(je, t, je.killGrace(t), now)
		if t.State == model.TaskKilled {
			t.Reason, t.Message = model.ReasonHostGone, why
		}
	}
	for _, id := range d.Start {
		t := e.newTask(j, j.Status.TasksCreated)
		t.SetPinnedHost(id)
		je.Tasks = append(je.Tasks, t)
		je.Counts[model.TaskInitialized]++
		e.markDirty(je, t)
		je.waiting = append(je.waiting, t.ID.Instance)
		j.Status.TasksCreated++
		je.Dirty, je.Record = true, true
	}
	j.Spec.Instances = j.Status.TasksCreated
}

// visitDaemons puts every daemon job in this pass's work when hosts
// changed since the last pass.
func (b *daemonBook) visitDaemons(e *State) {
	moved := b.HostsChanged
	b.HostsChanged = false
	if !moved {
		return
	}
	for _, je := range e.Jobs {
		if je.Job.Spec.Type == model.JobDaemon && !je.Job.Status.State.IsTerminal() {
			e.Visit(je)
		}
	}
}
