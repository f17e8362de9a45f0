package jobmgr

import (
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Extension points. A pass of the loop calls the capabilities registered
// in capabilities at fixed points, in order, under the engine's lock:
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
	startPass(e *Engine, p *passView, now time.Time)
}

// convergeHook is called for each job a pass visits, before and after its
// tasks converge.
type convergeHook interface {
	beforeConverge(e *Engine, p *passView, je *jobEntry, now time.Time)
	afterConverge(e *Engine, p *passView, je *jobEntry, now time.Time)
}

// disrupter is called once a pass, after the jobs were visited, to take
// down what must come down.
type disrupter interface {
	disrupt(e *Engine, now time.Time)
}

// passView is what a pass reads once and hands to every capability: the
// host views are snapshotted on first use.
type passView struct {
	hosts []hostmgr.HostView
	taken bool
}

// hostViews returns the pass's snapshot of the hosts.
func (p *passView) hostViews(e *Engine) []hostmgr.HostView {
	if !p.taken {
		p.hosts, p.taken = e.cfg.Hosts.Snapshot(), true
	}
	return p.hosts
}

// capabilities are the registered capabilities, in the order each point
// calls them.
var capabilities = []any{daemons{}, rollouts{}, revocableEviction{}, maintenance{}, migrations{}}

// daemons: a daemon job runs one instance on every host that matches its
// constraints (daemon.go).
type daemons struct{}

func (daemons) startPass(e *Engine, _ *passView, _ time.Time) { e.visitDaemons() }

func (daemons) beforeConverge(e *Engine, p *passView, je *jobEntry, now time.Time) {
	if je.job.Spec.Type == model.JobDaemon && !je.job.Status.Killed && !je.job.Status.State.IsTerminal() {
		e.convergeDaemon(je, p.hostViews(e), now)
	}
}

func (daemons) afterConverge(*Engine, *passView, *jobEntry, time.Time) {}

// rollouts: rolling updates (shard/rollout, rollout.go).
type rollouts struct{}

func (rollouts) beforeConverge(*Engine, *passView, *jobEntry, time.Time) {}

func (rollouts) afterConverge(e *Engine, _ *passView, je *jobEntry, now time.Time) {
	e.rollUpdate(je, now)
}

// revocableEviction: revocable runs leave hosts whose slack shrank
// (place.go).
type revocableEviction struct{}

func (revocableEviction) disrupt(e *Engine, now time.Time) { e.evictRevocable(now) }

// maintenance: host drains and hosts marked down (drain.go).
type maintenance struct{}

func (maintenance) disrupt(e *Engine, now time.Time) { e.drainStep(now) }

// migrations: moving jobs between clusters (shard/migration, migrate.go).
type migrations struct{}

func (migrations) disrupt(e *Engine, now time.Time) { e.migrateStep(now) }

// Every registered capability implements at least one point.
var (
	_ passStarter  = daemons{}
	_ convergeHook = daemons{}
	_ convergeHook = rollouts{}
	_ disrupter    = revocableEviction{}
	_ disrupter    = maintenance{}
	_ disrupter    = migrations{}
)

// The points' callers, gathered once from capabilities.
var (
	passStarters  []passStarter
	convergeHooks []convergeHook
	disrupters    []disrupter
)

func init() {
	for _, c := range capabilities {
		if s, ok := c.(passStarter); ok {
			passStarters = append(passStarters, s)
		}
		if h, ok := c.(convergeHook); ok {
			convergeHooks = append(convergeHooks, h)
		}
		if d, ok := c.(disrupter); ok {
			disrupters = append(disrupters, d)
		}
	}
}

// runPassStart, runConverge and runDisrupt call the registered
// capabilities at their points.
func (e *Engine) runPassStart(p *passView, now time.Time) {
	for _, s := range passStarters {
		s.startPass(e, p, now)
	}
}

func (e *Engine) runConverge(p *passView, je *jobEntry, now time.Time) {
	for _, h := range convergeHooks {
		h.beforeConverge(e, p, je, now)
	}
	e.converge(je, now)
	for _, h := range convergeHooks {
		h.afterConverge(e, p, je, now)
	}
}

func (e *Engine) runDisrupt(now time.Time) {
	for _, d := range disrupters {
		d.disrupt(e, now)
	}
}
