package jobmgr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Reasons of runs a host drain stopped.
const (
	ReasonHostDrained = goalstate.ReasonHostDrained
)

// ErrHostState: the host is not in a state the operation needs.
var ErrHostState = fmt.Errorf("host state: %w", ErrInvalid)

// drainEvery bounds how often the drain step scans running tasks.
const drainEvery = 250 * time.Millisecond

// drainStep moves what runs on draining hosts, as goalstate.Drain decides:
// revocable runs and runs past the drain's deadline are killed at once;
// long-running instances are restarted elsewhere as their job's SLA
// allows; a gang is taken down whole.
func (e *Engine) drainStep(now time.Time) {
	if now.Sub(e.lastDrain) < drainEvery {
		return
	}
	e.lastDrain = now
	hosts, busy := e.drainingHosts()
	if !busy {
		return
	}
	for _, a := range goalstate.Drain(e.drainInput(now, hosts)).Actions {
		je, t := e.task(model.TaskID{Job: a.Job, Instance: a.Instance})
		if t == nil {
			continue
		}
		switch a.Kind {
		case goalstate.DrainHold:
			e.noteWaiting(je, t, a.Message, now)
		case goalstate.DrainMove, goalstate.DrainKill:
			e.log.Info("drain stops a run", "task", t.ID, "host", t.Host, "why", a.Message)
			e.restartGang(je, gangOf(je, t.ID.Instance), a.Reason, a.Message, now)
		}
	}
}

// drainInput is the runs on the busy draining hosts, in job and instance
// order, with the SLA views of their long-running jobs.
func (e *Engine) drainInput(now time.Time, hosts []goalstate.DrainHost) goalstate.DrainInput {
	in := goalstate.DrainInput{Now: now, Hosts: hosts, SLA: map[model.JobID]*sla.Job{}}
	draining := make(map[model.HostID]bool, len(hosts))
	for _, h := range hosts {
		draining[h.ID] = h.Tasks > 0
	}
	for _, je := range e.sortedJobs() {
		if je.evicted || je.job.Status.State.IsTerminal() {
			continue
		}
		spec := &je.job.Spec
		for _, t := range je.tasks {
			if t == nil || isCold(t) || !t.State.HoldsResources() || !draining[t.Host] {
				continue
			}
			g := gangOf(je, t.ID.Instance)
			ids := gangIDs(je, g)
			in.Runs = append(in.Runs, goalstate.DrainRun{
				Job:        je.job.ID,
				Instance:   t.ID.Instance,
				Host:       t.Host,
				Type:       spec.Type,
				Revocable:  spec.Revocable,
				Gang:       ids,
				Restarting: e.restarting[g] != nil,
			})
			if _, ok := in.SLA[je.job.ID]; !ok && spec.LongRunning() {
				in.SLA[je.job.ID] = e.slaJob(je)
			}
		}
	}
	return in
}

// noteWaiting records on a task why a disruption of it waits.
func (e *Engine) noteWaiting(je *jobEntry, t *model.TaskRuntime, msg string, now time.Time) {
	if t.Message != msg {
		t.Message, t.UpdateTime = msg, now
		e.markDirty(je, t)
	}
}

// drainingHosts returns the hosts being drained (or marked down), with
// how many runs each still holds, and whether any holds one.
func (e *Engine) drainingHosts() ([]goalstate.DrainHost, bool) {
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	var out []goalstate.DrainHost
	busy := false
	for id, r := range e.hosts.recs {
		if !r.Draining {
			continue
		}
		h := goalstate.DrainHost{ID: id, Deadline: r.DrainDeadline, Down: r.Down}
		if v, ok := e.cfg.Hosts.View(id); ok {
			h.Tasks = v.Tasks
		}
		busy = busy || h.Tasks > 0
		out = append(out, h)
	}
	out, busy = withClusterDrains(out, busy, e.cfg.Hosts.ClusterDraining(), e.hosts.recs)
	slices.SortFunc(out, func(a, b goalstate.DrainHost) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out, busy
}

// withClusterDrains adds the hosts their cluster drains (a plugin reports
// them DRAINING, as Mesos maintenance does) to the hosts an operator
// drains: they drain the same way, up to the deadline their cluster gives
// (hostmgr.LabelDrainDeadline). An operator's drain of the same host wins.
func withClusterDrains(out []goalstate.DrainHost, busy bool, cluster []hostmgr.HostView, recs map[model.HostID]*model.HostRecord) ([]goalstate.DrainHost, bool) {
	for i := range cluster {
		v := &cluster[i]
		if r := recs[v.ID]; r != nil && r.Draining {
			continue
		}
		out = append(out, goalstate.DrainHost{ID: v.ID, Deadline: hostmgr.DrainDeadline(&v.Host), Tasks: v.Tasks})
		busy = busy || v.Tasks > 0
	}
	return out, busy
}

// markHostDown takes a drained host down for maintenance. A host that
// still runs something of the shard is refused, unless force, which kills
// what runs there.
func (e *Engine) markHostDown(ctx context.Context, id model.HostID, force bool) (*model.HostRecord, error) {
	v, known := e.cfg.Hosts.View(id)
	e.hosts.mu.Lock()
	rec := e.hosts.recs[id]
	e.hosts.mu.Unlock()
	switch {
	case rec == nil && !known:
		return nil, fmt.Errorf("host %s: %w", id, ErrNotFound)
	case rec == nil || !rec.Draining:
		if !force {
			return nil, fmt.Errorf("host %s is UP: drain it first (peloton host drain), or use force: %w", id, ErrHostState)
		}
	case known && v.Tasks > 0 && !force:
		return nil, fmt.Errorf("host %s is DRAINING and still runs %d tasks: wait for DRAINED, or use force: %w", id, v.Tasks, ErrHostState)
	}
	if rec == nil || !rec.Draining {
		if _, err := e.setDrain(ctx, id, true, "marked down", 0); err != nil {
			return nil, err
		}
	}
	e.hosts.writeMu.Lock() // take turns with the other writers of host records
	defer e.hosts.writeMu.Unlock()
	e.hosts.mu.Lock()
	cp := *e.hosts.recs[id]
	cp.Down = true
	e.hosts.mu.Unlock()
	if err := e.cfg.Store.PutHosts(ctx, []*model.HostRecord{&cp}); err != nil {
		return nil, fmt.Errorf("store host %s: %w", id, err)
	}
	e.hosts.mu.Lock()
	e.hosts.recs[id] = &cp
	e.hosts.mu.Unlock()
	e.log.Info("host marked down", "host", id, "force", force)
	e.wake()
	return e.hostRecord(&cp), nil
}
