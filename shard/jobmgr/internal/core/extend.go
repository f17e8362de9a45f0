package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Extension points. A pass of the loop calls the capabilities registered
// in capabilities at fixed points, in order, on the core (under the
// engine's lock; a capability sees neither the lock, the store nor the
// clock):
//
//	startPass(now)               once, before the jobs are visited
//	beforeConverge(job, now)     for each job visited, before its tasks
//	                             converge (a daemon makes the instances
//	                             its hosts call for)
//	afterConverge(job, now)      for each job visited, after (a rolling
//	                             update takes its next batch)
//	disrupt(now)                 once, after the jobs and before admission:
//	                             the capabilities that take running
//	                             instances down propose it (revocable
//	                             eviction, host drains, migrations), each
//	                             asking shard/sla
//
// A capability is a package of its own (its decision functions and its
// per-job state, kept beside the job) and a thin adapter here that
// implements the points it needs. docs/extending.md walks through adding
// one.

// passStarter is called once at the start of a pass.
type passStarter interface {
	startPass(e *State, p *passView, now time.Time)
}

// convergeHook is called for each job a pass visits, before and after its
// tasks converge.
type convergeHook interface {
	beforeConverge(e *State, p *passView, je *Job, now time.Time)
	afterConverge(e *State, p *passView, je *Job, now time.Time)
}

// disrupter is called once a pass, after the jobs were visited, to take
// down what must come down.
type disrupter interface {
	Disrupt(e *State, now time.Time)
}

// passView is what a pass reads once and hands to every capability: the
// host views are snapshotted on first use.
type passView struct {
	Hosts []hostmgr.HostView
	taken bool
}

// hostViews returns the pass's snapshot of the hosts.
func (p *passView) hostViews(e *State) []hostmgr.HostView {
	if !p.taken {
		p.Hosts, p.taken = e.Settings.Hosts.Snapshot(), true
	}
	return p.Hosts
}

// capabilities are the registered capabilities, in the order each point
// calls them.
var capabilities = []any{daemons{}, rollouts{}, revocableEviction{}, hostMaintenance{}, migrations{}}

// daemons: a daemon job runs one instance on every host that matches its
// constraints (daemon.go).
type daemons struct{}

func (daemons) startPass(e *State, _ *passView, _ time.Time) { e.Daemons.visitDaemons(e) }

func (daemons) beforeConverge(e *State, p *passView, je *Job, now time.Time) {
	if je.Job.Spec.Type == model.JobDaemon && !je.Job.Status.Killed && !je.Job.Status.State.IsTerminal() {
		e.Daemons.convergeDaemon(e, je, p.hostViews(e), now)
	}
}

func (daemons) afterConverge(*State, *passView, *Job, time.Time) {}

// rollouts: rolling updates (shard/rollout, rollout.go).
type rollouts struct{}

func (rollouts) beforeConverge(*State, *passView, *Job, time.Time) {}

func (rollouts) afterConverge(e *State, _ *passView, je *Job, now time.Time) {
	e.Rollouts.rollUpdate(e, je, now)
}

// revocableEviction: revocable runs leave hosts whose slack shrank
// (place.go).
type revocableEviction struct{}

func (revocableEviction) Disrupt(e *State, now time.Time) { e.Revocable.evictRevocable(e, now) }

// hostMaintenance: host drains and hosts marked down (drain.go).
type hostMaintenance struct{}

func (hostMaintenance) Disrupt(e *State, now time.Time) { e.drains.drainStep(e, now) }

// migrations: moving jobs between clusters (shard/migration, migrate.go).
type migrations struct{}

func (migrations) Disrupt(e *State, now time.Time) { e.Migrations.migrateStep(e, now) }

// Every registered capability implements at least one point.
var (
	_ passStarter  = daemons{}
	_ convergeHook = daemons{}
	_ convergeHook = rollouts{}
	_ disrupter    = revocableEviction{}
	_ disrupter    = hostMaintenance{}
	_ disrupter    = migrations{}
)

// The points' callers, gathered once from capabilities.
var passStarters, convergeHooks, disrupters = points()

func points() (starters []passStarter, hooks []convergeHook, disrupters []disrupter) {
	for _, c := range capabilities {
		if s, ok := c.(passStarter); ok {
			starters = append(starters, s)
		}
		if h, ok := c.(convergeHook); ok {
			hooks = append(hooks, h)
		}
		if d, ok := c.(disrupter); ok {
			disrupters = append(disrupters, d)
		}
	}
	return starters, hooks, disrupters
}

// runPassStart, runConverge and runDisrupt call the registered
// capabilities at their points.
func (e *State) runPassStart(p *passView, now time.Time) {
	for _, s := range passStarters {
		s.startPass(e, p, now)
	}
}

func (e *State) runConverge(p *passView, je *Job, now time.Time) {
	for _, h := range convergeHooks {
		h.beforeConverge(e, p, je, now)
	}
	e.converge(je, now)
	for _, h := range convergeHooks {
		h.afterConverge(e, p, je, now)
	}
}

func (e *State) runDisrupt(now time.Time) {
	for _, d := range disrupters {
		d.Disrupt(e, now)
	}
}
