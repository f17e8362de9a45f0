package mesos

import (
	"context"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/peloton-federated/peloton/shard/model"
)

// Failed agents. As a PARTITION_AWARE framework the plugin hears
// TASK_UNREACHABLE for the runs of an agent the master lost contact with
// (they may still run), TASK_GONE or TASK_GONE_BY_OPERATOR for those of
// an agent that is gone, and FAILURE for the agent in either case, in no
// guaranteed order. So:
//
//   - FAILURE makes the agent's host DOWN (nothing new is placed there)
//     and its live runs unreachable; a failed agent with no live run of
//     this framework is removed at once.
//   - An unreachable run is not lost yet: the shard keeps it RUNNING for
//     UnreachableWait. Its agent coming back (an offer from it) or any
//     status of it ends the wait; the plugin reconciles unreachable runs
//     when their agent is offered again and every unreachableReconcile.
//   - After UnreachableWait the run is reported LOST (HOST_LOST), and the
//     host is removed once none of its runs is live. A run reported LOST
//     this way that Mesos later reports running is killed.
//   - TASK_GONE, TASK_GONE_BY_OPERATOR and TASK_LOST report it LOST at once.

// unreachableReconcile bounds how often unreachable runs are reconciled.
const unreachableReconcile = 30 * time.Second

// unreachableLocked notes that a run's agent is unreachable.
func (p *Plugin) unreachableLocked(run model.RunID, agentID string, now time.Time) {
	r := p.runs[run]
	if r == nil || r.ended {
		return
	}
	if r.agentID == "" {
		r.agentID = agentID
	}
	if r.unreachableSince.IsZero() {
		r.unreachableSince = now
		p.partitioned = true
		p.log.Warn("run unreachable; waiting before it counts as lost", "run", run, "agent", r.agentID, "wait", p.cfg.UnreachableWait)
	}
}

// agentFailed makes a failed agent's host DOWN and its live runs
// unreachable; an agent with no live run is removed at once.
func (p *Plugin) agentFailed(agentID string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.agents[agentID]
	if a == nil {
		return
	}
	for id := range a.offers {
		delete(p.offers, id)
		delete(a.offers, id)
	}
	p.partitioned = true
	if a.failedAt.IsZero() {
		a.failedAt = now
		p.changed[a] = true
		p.wake()
	}
	// Launches not sent yet will not be: placement tries elsewhere.
	for _, pl := range a.waiting {
		delete(p.waiting, pl.launch.Run)
		p.reportLocked(p.status(pl.launch.Run, pl.launch.Host, model.TaskLost, model.ReasonHostLost,
			"mesos agent "+agentID+" failed before the launch was sent", now))
	}
	a.waiting = nil
	live := false
	for run, r := range p.runs {
		if r.agentID == agentID && !r.ended {
			live = true
			p.unreachableLocked(run, agentID, now)
		}
	}
	p.log.Warn("mesos agent failed", "agent", agentID, "host", a.host, "runs_waiting", live)
	if !live {
		p.removeAgentLocked(a)
	}
}

// removeAgentLocked forgets an agent and removes its host.
func (p *Plugin) removeAgentLocked(a *agentState) {
	for id := range a.offers {
		delete(p.offers, id)
	}
	delete(p.agents, a.id)
	delete(p.changed, a)
	if p.byHost[a.host] == a {
		delete(p.byHost, a.host)
		p.removed = append(p.removed, a.host)
	}
	p.log.Warn("mesos agent removed", "agent", a.id, "host", a.host)
}

// agentSeenLocked is called when an agent that failed, or a new one, is
// offered: it is up again, its runs' holdings count again, and the runs
// waiting on it, or reported lost while it was unreachable, are
// reconciled at the next tick.
func (p *Plugin) agentSeenLocked(a *agentState, fresh bool) {
	if !fresh {
		a.failedAt = time.Time{}
		p.changed[a] = true
	}
	waiting := false
	for _, r := range p.runs {
		if r.agentID != a.id || r.unreachableSince.IsZero() {
			continue
		}
		waiting = true
		if fresh && !r.ended {
			a.hold(r, 1)
		}
	}
	if waiting {
		p.lastUnreachableRecon = time.Time{}
	}
}

// expireUnreachableLocked reports runs unreachable for UnreachableWait
// LOST, removes failed agents none of whose runs is live any more, and
// returns the unreachable runs to reconcile now.
func (p *Plugin) expireUnreachableLocked(now time.Time) []scheduler.Call_Reconcile_Task {
	if !p.partitioned {
		return nil // nothing failed since the last scan found all well
	}
	live := map[string]bool{}
	unreachable := false
	var recon []scheduler.Call_Reconcile_Task
	due := p.conn != nil && now.Sub(p.lastUnreachableRecon) >= min(unreachableReconcile, p.cfg.UnreachableWait/4)
	for run, r := range p.runs {
		if r.unreachableSince.IsZero() {
			if !r.ended {
				live[r.agentID] = true
			}
			continue
		}
		unreachable = true
		if due && (!r.ended || p.agents[r.agentID] != nil) {
			recon = append(recon, reconcileTask(run, r.agentID))
		}
		if r.ended {
			continue
		}
		if waited := now.Sub(r.unreachableSince); waited >= p.cfg.UnreachableWait {
			p.endRunLocked(r, now)
			p.reportLocked(p.status(run, r.host, model.TaskLost, model.ReasonHostLost,
				"mesos agent "+r.agentID+" unreachable for "+waited.Truncate(time.Second).String(), now))
			continue
		}
		live[r.agentID] = true
	}
	failed := false
	for _, a := range p.agents {
		if !a.failedAt.IsZero() && !live[a.id] {
			p.removeAgentLocked(a)
			continue
		}
		failed = failed || !a.failedAt.IsZero()
	}
	p.partitioned = unreachable || failed
	if len(recon) > 0 {
		p.lastUnreachableRecon = now
	}
	return recon
}

// reconcileUnreachable asks about unreachable runs.
func (p *Plugin) reconcileUnreachable(ctx context.Context, c *conn, tasks []scheduler.Call_Reconcile_Task) {
	if c != nil && len(tasks) > 0 {
		p.sendReconcile(ctx, c, tasks)
	}
}
