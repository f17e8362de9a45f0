package jobmgr

import (
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A daemon job runs one instance on every host that matches its
// constraints. Its instances are made as hosts appear, each pinned to its
// host; an instance whose host is drained, goes down, leaves or stops
// matching is stopped. Instance numbers are never reused: a host that
// comes back gets a new instance.

// daemonHosts says, for every host, whether a daemon job with these
// constraints should run there: up, reported and matching.
func daemonHosts(views []hostmgr.HostView, cons []model.Constraint) map[model.HostID]bool {
	out := make(map[model.HostID]bool, len(views))
	for i := range views {
		v := &views[i]
		ok := v.State == model.HostUp && v.Hostname != ""
		for c := 0; ok && c < len(cons); c++ {
			ok = cons[c].Matches(v.Labels)
		}
		out[v.ID] = ok
	}
	return out
}

// convergeDaemon makes the instances a daemon job lacks and stops those
// whose host no longer wants one.
func (e *Engine) convergeDaemon(je *jobEntry, views []hostmgr.HostView, now time.Time) {
	j := je.job
	want := daemonHosts(views, j.Spec.Task.Constraints)
	has := map[model.HostID]bool{}
	for _, t := range je.tasks {
		if t == nil || isCold(t) || t.Goal == model.TaskKilled || t.State.IsTerminal() {
			continue
		}
		if pin := t.PinnedHost(); want[pin] && !has[pin] {
			has[pin] = true
			continue
		}
		// Its host was drained, went away or no longer matches (or a
		// second instance for one host, which recovery could leave).
		t.Goal = model.TaskKilled
		if t.State == model.TaskRunning || t.State == model.TaskLaunching {
			t.Reason, t.Message = model.ReasonHostGone, "host "+string(t.PinnedHost())+" no longer takes this daemon"
		}
		e.markDirty(je, t)
		e.killTask(je, t, je.killGrace(t), now)
		if t.State == model.TaskKilled {
			t.Reason, t.Message = model.ReasonHostGone, "host "+string(t.PinnedHost())+" no longer takes this daemon"
		}
	}
	for i := range views {
		id := views[i].ID
		if !want[id] || has[id] {
			continue
		}
		t := e.newTask(j, j.Status.TasksCreated)
		t.SetPinnedHost(id)
		je.tasks = append(je.tasks, t)
		je.counts[model.TaskInitialized]++
		e.markDirty(je, t)
		je.waiting = append(je.waiting, t.ID.Instance)
		j.Status.TasksCreated++
		je.dirty, je.record = true, true
	}
	j.Spec.Instances = j.Status.TasksCreated
}

// visitDaemons puts every daemon job in this pass's work when hosts
// changed since the last pass.
func (e *Engine) visitDaemons() {
	e.inboxMu.Lock()
	moved := e.hostsMoved
	e.hostsMoved = false
	e.inboxMu.Unlock()
	if !moved {
		return
	}
	for _, je := range e.jobs {
		if je.job.Spec.Type == model.JobDaemon && !je.job.Status.State.IsTerminal() {
			e.visit(je)
		}
	}
}
