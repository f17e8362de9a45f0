package mesos

import (
	"context"
	"sort"
	"sync"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Launch sends the runs to their agents: those that fit the agent's held
// offers in one ACCEPT per agent, the others wait up to LaunchWait for an
// offer (reviving offers) and are reported LOST if none comes. It returns
// once the master answered the ACCEPTs.
func (p *Plugin) Launch(ctx context.Context, runs []hostmgr.Launch) error {
	now := p.clock.Now()
	p.mu.Lock()
	p.lastDemand = now
	byAgent := map[*agentState][]hostmgr.Launch{}
	var order []*agentState
	for _, l := range runs {
		switch {
		case l.Task == nil:
			p.reportLocked(p.status(l.Run, l.Host, model.TaskFailed, model.ReasonLaunchError, "no task spec", now))
			continue
		case l.Task.Command == "":
			p.reportLocked(p.status(l.Run, l.Host, model.TaskFailed, model.ReasonLaunchError, "task has no command", now))
			continue
		}
		if r := p.runs[l.Run]; r != nil && !r.ended {
			continue // already launched: statuses will follow
		}
		a := p.byHost[l.Host]
		if a == nil {
			p.reportLocked(p.status(l.Run, l.Host, model.TaskLost, model.ReasonHostLost, "host "+string(l.Host)+" is not a known mesos agent", now))
			continue
		}
		if _, ok := byAgent[a]; !ok {
			order = append(order, a)
		}
		byAgent[a] = append(byAgent[a], l)
	}
	var accepts []acceptCall
	revive := false
	for _, a := range order {
		ac, rest := p.matchLocked(a, byAgent[a], now)
		if len(ac.tasks) > 0 {
			accepts = append(accepts, ac)
		}
		for _, l := range rest {
			p.parked = append(p.parked, parkedLaunch{launch: l, deadline: now.Add(p.cfg.LaunchWait)})
		}
		if len(rest) > 0 && len(a.offers) == 0 {
			revive = true
		}
	}
	c := p.conn
	if revive && c != nil {
		p.suppressed, p.lastRevive = false, now
	}
	p.mu.Unlock()
	if revive && c != nil {
		if err := p.call(ctx, c, calls.Revive()); err != nil {
			p.log.Warn("reviving offers", "err", err)
		}
	}
	var wg sync.WaitGroup
	for _, ac := range accepts {
		p.spawn(&wg, func() { p.sendAccept(ctx, c, ac) })
	}
	wg.Wait()
	return nil
}

// matchLocked carves launches out of an agent's held offers; all offers
// used go in one ACCEPT. Launches that do not fit are returned.
func (p *Plugin) matchLocked(a *agentState, launches []hostmgr.Launch, now time.Time) (acceptCall, []hostmgr.Launch) {
	ac := acceptCall{agent: a}
	if p.conn == nil || len(a.offers) == 0 {
		return ac, launches
	}
	offers := make([]*heldOffer, 0, len(a.offers))
	for _, o := range a.offers {
		offers = append(offers, o)
	}
	sort.Slice(offers, func(i, j int) bool { return offers[i].id < offers[j].id })
	pl := newPool(offers)
	var rest []hostmgr.Launch
	for _, l := range launches {
		res, ok := pl.take(l.Task.Resources)
		if !ok {
			rest = append(rest, l)
			continue
		}
		ac.tasks = append(ac.tasks, taskInfo(&l, a.id, res))
		ac.runs = append(ac.runs, l)
		p.runs[l.Run] = &runState{agentID: a.id, host: a.host, res: l.Task.Resources}
		a.ours = a.ours.Add(l.Task.Resources)
	}
	if len(ac.tasks) == 0 {
		return ac, rest
	}
	for _, o := range offers {
		ac.offerIDs = append(ac.offerIDs, mesoslib.OfferID{Value: o.id})
		delete(a.offers, o.id)
		delete(p.offers, o.id)
	}
	return ac, rest
}

// retryParkedLocked matches waiting launches against agents that just
// got offers.
func (p *Plugin) retryParkedLocked(touched map[*agentState]bool, now time.Time) []acceptCall {
	if len(p.parked) == 0 {
		return nil
	}
	byAgent := map[*agentState][]parkedLaunch{}
	kept := p.parked[:0]
	for _, pl := range p.parked {
		if a := p.byHost[pl.launch.Host]; a != nil && touched[a] {
			byAgent[a] = append(byAgent[a], pl)
			continue
		}
		kept = append(kept, pl)
	}
	p.parked = kept
	var out []acceptCall
	for a, pls := range byAgent {
		launches := make([]hostmgr.Launch, len(pls))
		deadline := map[model.RunID]time.Time{}
		for i, pl := range pls {
			launches[i] = pl.launch
			deadline[pl.launch.Run] = pl.deadline
		}
		ac, rest := p.matchLocked(a, launches, now)
		if len(ac.tasks) > 0 {
			out = append(out, ac)
		}
		for _, l := range rest {
			p.parked = append(p.parked, parkedLaunch{launch: l, deadline: deadline[l.Run]})
		}
	}
	return out
}

// sendAccept sends one ACCEPT; if the master refuses it, its runs are
// reported LOST so that they are placed again.
func (p *Plugin) sendAccept(ctx context.Context, c *conn, ac acceptCall) {
	call := calls.Accept(calls.OfferOperations{calls.OpLaunch(ac.tasks...)}.WithOffers(ac.offerIDs...)).
		With(calls.RefuseSeconds(0))
	err := p.call(ctx, c, call)
	if err == nil {
		return
	}
	p.log.Warn("accept failed; runs reported lost", "agent", ac.agent.id, "runs", len(ac.runs), "err", err)
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range ac.runs {
		if r := p.runs[l.Run]; r != nil {
			p.endRunLocked(r, now)
		}
		p.reportLocked(p.status(l.Run, l.Host, model.TaskLost, model.ReasonLaunchError, "mesos ACCEPT failed: "+err.Error(), now))
	}
}

// Kill asks Mesos to kill a run. A run still waiting for an offer ends
// KILLED at once; without a subscription the kill is sent after the next
// SUBSCRIBED.
func (p *Plugin) Kill(ctx context.Context, run model.RunID, host model.HostID, grace time.Duration) error {
	now := p.clock.Now()
	p.mu.Lock()
	for i, pl := range p.parked {
		if pl.launch.Run == run {
			p.parked = append(p.parked[:i], p.parked[i+1:]...)
			p.reportLocked(p.status(run, host, model.TaskKilled, model.ReasonKilled, "killed before it was launched", now))
			p.mu.Unlock()
			return nil
		}
	}
	k := killRequest{run: run, grace: grace}
	if r := p.runs[run]; r != nil {
		k.agentID = r.agentID
	} else if a := p.byHost[host]; a != nil {
		k.agentID = a.id
	}
	c := p.conn
	if c == nil {
		p.kills = append(p.kills, k)
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return p.sendKill(ctx, c, k)
}

func (p *Plugin) sendKill(ctx context.Context, c *conn, k killRequest) error {
	call := calls.Kill(string(k.run), k.agentID)
	if k.grace > 0 {
		call.Kill.KillPolicy = &mesoslib.KillPolicy{GracePeriod: &mesoslib.DurationInfo{Nanoseconds: k.grace.Nanoseconds()}}
	}
	err := p.call(ctx, c, call)
	if err != nil {
		p.log.Warn("kill failed", "run", k.run, "err", err)
	}
	return err
}

// Reconcile asks Mesos for the state of runs the shard believes launched.
// Without a subscription they are asked about after the next SUBSCRIBED.
func (p *Plugin) Reconcile(ctx context.Context, refs []hostmgr.RunRef) error {
	p.mu.Lock()
	tasks := make([]scheduler.Call_Reconcile_Task, 0, len(refs))
	for _, ref := range refs {
		r := p.runs[ref.Run]
		if r == nil {
			r = &runState{host: ref.Host}
			if a := p.byHost[ref.Host]; a != nil {
				r.agentID = a.id
			}
			p.runs[ref.Run] = r
		}
		r.ended = false // the shard believes it live: Mesos decides
		tasks = append(tasks, reconcileTask(ref.Run, r.agentID))
	}
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		p.sendReconcile(ctx, c, tasks)
	}
	return nil
}
