package mesos

import (
	"context"
	"fmt"
	"strings"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/model"
)

// handle applies one event of the subscription stream.
func (p *Plugin) handle(ctx context.Context, c *conn, ev *scheduler.Event) error {
	now := p.clock.Now()
	p.mu.Lock()
	p.lastEvent = now
	p.mu.Unlock()
	switch ev.GetType() {
	case scheduler.Event_SUBSCRIBED:
		p.subscribed(ctx, c, ev.Subscribed, now)
	case scheduler.Event_OFFERS:
		if ev.Offers != nil {
			p.offered(ctx, ev.Offers.Offers, now)
		}
	case scheduler.Event_RESCIND:
		if ev.Rescind != nil {
			p.rescinded(ev.Rescind.OfferID.Value)
		}
	case scheduler.Event_UPDATE:
		if ev.Update != nil {
			p.updated(ctx, &ev.Update.Status, now)
		}
	case scheduler.Event_FAILURE:
		if f := ev.Failure; f != nil && f.AgentID != nil && f.ExecutorID == nil {
			p.agentFailed(f.AgentID.Value, now)
		}
	case scheduler.Event_INVERSE_OFFERS:
		if ev.InverseOffers != nil {
			p.inverseOffers(ctx, ev.InverseOffers.InverseOffers)
		}
	case scheduler.Event_RESCIND_INVERSE_OFFER:
		if ev.RescindInverseOffer != nil {
			p.rescindInverse(ev.RescindInverseOffer.InverseOfferID.Value)
		}
	case scheduler.Event_ERROR:
		return p.masterError(ctx, ev.Error.GetMessage())
	}
	return nil
}

// rescinded forgets an offer the master took back.
func (p *Plugin) rescinded(offerID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.offers[offerID]; o != nil {
		delete(p.offers, o.id)
		delete(o.agent.offers, o.id)
	}
}

// masterError ends the subscription for an ERROR event. When the master
// removed the framework, it forgets the framework id: the master will
// never take it again, so the next subscription starts a new framework.
func (p *Plugin) masterError(ctx context.Context, msg string) error {
	if strings.Contains(strings.ToLower(msg), "removed") {
		p.log.Error("framework removed by the master; subscribing as a new framework", "message", msg)
		p.mu.Lock()
		p.frameworkID = ""
		p.mu.Unlock()
		if err := p.cfg.FrameworkIDs.SaveFrameworkID(ctx, ""); err != nil {
			p.log.Warn("forgetting the framework id", "err", err)
		}
	}
	return fmt.Errorf("%w: %s", ErrMasterError, msg)
}

// subscribed records the framework id, reconciles every live run and
// sends kills that waited for a subscription.
func (p *Plugin) subscribed(ctx context.Context, c *conn, s *scheduler.Event_Subscribed, now time.Time) {
	if s == nil {
		return
	}
	id := s.FrameworkID.Value
	p.mu.Lock()
	old := p.frameworkID
	p.frameworkID = id
	c.frameworkID = id
	p.conn = c
	p.heartbeat = time.Duration(s.GetHeartbeatIntervalSeconds() * float64(time.Second))
	p.suppressed = false
	p.lastRecon = now
	var tasks []scheduler.Call_Reconcile_Task
	for run, r := range p.runs {
		if !r.ended {
			tasks = append(tasks, reconcileTask(run, r.agentID))
		}
	}
	kills := p.kills
	p.kills = nil
	p.mu.Unlock()
	p.log.Info("subscribed to mesos", "framework_id", id, "master", c.endpoint, "reconciling", len(tasks))
	if id != old {
		if err := p.cfg.FrameworkIDs.SaveFrameworkID(ctx, id); err != nil {
			p.log.Error("saving the framework id", "err", err)
		}
	}
	p.sendReconcile(ctx, c, tasks)
	for _, k := range kills {
		p.spawn(nil, func() { p.sendKill(ctx, c, k) })
	}
}

func reconcileTask(run model.RunID, agentID string) scheduler.Call_Reconcile_Task {
	t := scheduler.Call_Reconcile_Task{TaskID: mesoslib.TaskID{Value: string(run)}}
	if agentID != "" {
		t.AgentID = &mesoslib.AgentID{Value: agentID}
	}
	return t
}

// sendReconcile asks about tasks in batches; none asks about all.
func (p *Plugin) sendReconcile(ctx context.Context, c *conn, tasks []scheduler.Call_Reconcile_Task) {
	for start := 0; start < len(tasks); start += reconcileBatch {
		batch := tasks[start:min(start+reconcileBatch, len(tasks))]
		p.spawn(nil, func() {
			call := &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{Tasks: batch}}
			if err := p.call(ctx, c, call); err != nil {
				p.log.Warn("reconcile failed", "err", err)
			}
		})
	}
}

// offered adds offers to the agents they are for and retries launches
// waiting on those agents.
func (p *Plugin) offered(ctx context.Context, offers []mesoslib.Offer, now time.Time) {
	p.mu.Lock()
	touched := map[*agentState]bool{}
	for i := range offers {
		o := &offers[i]
		a := p.agentLocked(o.AgentID.Value, o.Hostname, o.Attributes)
		h := &heldOffer{id: o.ID.Value, agent: a, received: now, resources: o.Resources}
		a.offers[h.id] = h
		p.offers[h.id] = h
		touched[a] = true
		if a.learn(o.Resources) || a.noteUnavailability(o.Unavailability) {
			p.changed[a] = true
		}
	}
	var accepts []acceptCall
	for a := range touched {
		if a.refresh() {
			p.changed[a] = true
		}
		accepts = append(accepts, p.removalsLocked(a)...)
		p.readyLocked(a)
	}
	c := p.conn
	p.mu.Unlock()
	p.wake()
	p.kickDispatch()
	for _, ac := range accepts {
		p.spawn(nil, func() { p.sendAccept(ctx, c, ac) })
	}
}

// agentLocked returns the agent, creating it (and its host) on first
// sight. An agent that re-registered under a new id with the same
// hostname takes over the host.
func (p *Plugin) agentLocked(id, hostname string, attrs []mesoslib.Attribute) *agentState {
	a := p.agents[id]
	if a == nil {
		name := hostname
		if name == "" || strings.Contains(name, "/") {
			name = id
		}
		a = &agentState{id: id, hostname: hostname, host: model.HostID(p.cfg.Cluster + "/" + name),
			offers: map[string]*heldOffer{}, draining: map[string]bool{}, volumes: map[string]bool{}, removals: map[string]bool{}}
		p.agents[id] = a
		p.byHost[a.host] = a
		p.agentSeenLocked(a, true)
	} else if !a.failedAt.IsZero() {
		p.agentSeenLocked(a, false)
	}
	a.attrs = attributeLabels(attrs)
	return a
}

// updated forwards a status update, acknowledging it when it carries a
// uuid. A run this plugin already reported ended that Mesos reports
// running is killed instead.
func (p *Plugin) updated(ctx context.Context, st *mesoslib.TaskStatus, now time.Time) {
	run := model.RunID(st.TaskID.Value)
	agentID := st.GetAgentID().GetValue()
	if st.GetState() == mesoslib.TASK_UNREACHABLE {
		p.mu.Lock()
		p.unreachableLocked(run, agentID, now)
		c := p.conn
		p.mu.Unlock()
		p.acknowledge(ctx, c, st, run, agentID)
		return
	}
	p.mu.Lock()
	again := p.droppedForOffersLocked(run, st, now)
	p.mu.Unlock()
	if again {
		p.wake()
		return
	}
	p.mu.Lock()
	c := p.conn
	resurrected := p.applyStatusLocked(run, agentID, st, now)
	p.mu.Unlock()
	if resurrected {
		p.log.Warn("run reported running after it ended; killing it", "run", run, "agent", agentID)
		p.spawn(nil, func() { p.sendKill(ctx, c, killRequest{run: run, agentID: agentID}) })
	}
	p.acknowledge(ctx, c, st, run, agentID)
}

// applyStatusLocked records a status of run and reports it to the shard.
// It returns true, reporting nothing, when the run was reported ended and
// Mesos says it is alive: the caller kills it.
func (p *Plugin) applyStatusLocked(run model.RunID, agentID string, st *mesoslib.TaskStatus, now time.Time) (resurrected bool) {
	state, forward := convertState(st.GetState())
	r, host := p.runOfStatusLocked(run, agentID, forward && !state.IsTerminal())
	if !forward {
		return false
	}
	switch {
	case state.IsTerminal():
		if r != nil {
			p.endRunLocked(r, now)
			r.unreachableSince = time.Time{}
			if st.GetState() == mesoslib.TASK_ERROR {
				p.forgetCreatedLocked(r)
			}
		}
	case r.ended:
		return true
	default:
		r.unreachableSince = time.Time{} // heard of again
	}
	p.reportStatusLocked(run, host, r, st, state, now)
	return false
}

// runOfStatusLocked returns the run a status is about, creating its record
// when create is set and there is none, and the host it runs on: the
// run's, or for a run without a record the agent's.
func (p *Plugin) runOfStatusLocked(run model.RunID, agentID string, create bool) (*runState, model.HostID) {
	r := p.runs[run]
	if r == nil && create {
		r = &runState{agentID: agentID}
		if a := p.agents[agentID]; a != nil {
			r.host = a.host
		}
		p.runs[run] = r
	}
	if r != nil {
		if r.agentID == "" {
			r.agentID = agentID
		}
		return r, r.host
	}
	if a := p.agents[agentID]; a != nil {
		return nil, a.host
	}
	return nil, ""
}

// reportStatusLocked reports a status of run (r is nil for a run without
// a record) to the shard. A kill the shard did not ask for after a failed
// health check is reported as a failure for being unhealthy.
func (p *Plugin) reportStatusLocked(run model.RunID, host model.HostID, r *runState, st *mesoslib.TaskStatus, state model.TaskState, now time.Time) {
	reason, msg, code := statusDetails(st, state)
	if state == model.TaskKilled && st.Healthy != nil && !*st.Healthy && (r == nil || !r.killRequested) {
		// The executor killed it for failing its health check.
		state, reason = model.TaskFailed, model.ReasonUnhealthy
	}
	ts := p.status(run, host, state, reason, msg, statusTime(st, now))
	ts.ExitCode = code
	if state == model.TaskRunning && r != nil {
		r.verdicts(st)
		ts.Health, ts.Ready = r.health, r.ready
	}
	p.reportLocked(ts)
}

// acknowledge acknowledges a status that carries a uuid.
func (p *Plugin) acknowledge(ctx context.Context, c *conn, st *mesoslib.TaskStatus, run model.RunID, agentID string) {
	if len(st.UUID) == 0 || agentID == "" {
		return
	}
	p.mu.Lock()
	p.acks = append(p.acks, pendingAck{c: c, agentID: agentID, run: run, uuid: st.UUID})
	p.mu.Unlock()
	p.kickDispatch()
}

// tickCalls are the calls a tick decided to send to the master.
type tickCalls struct {
	decline                     []mesoslib.OfferID
	suppress, revive, reconcile bool
	unreachable                 []scheduler.Call_Reconcile_Task
}

// tick declines offers held too long, reports launches that waited too
// long LOST, suppresses offers when nothing waits, revives when launches
// wait without offers, and reconciles implicitly now and then.
func (p *Plugin) tick(ctx context.Context) {
	now := p.clock.Now()
	p.mu.Lock()
	c := p.conn
	var t tickCalls
	t.decline = p.takeHeldTooLongLocked(now)
	// Both run every tick: a volume removal waiting must not hold back
	// reporting the launches that waited too long.
	removals, starved := p.removalsWaitingLocked(), p.expireWaitingLocked(now)
	waiting := removals || starved
	if c != nil {
		t.suppress = p.suppressLocked(now)
		t.revive = p.reviveLocked(waiting, now)
		t.reconcile = p.reconcileDueLocked(now)
	}
	p.sweepEndedLocked(now)
	t.unreachable = p.expireUnreachableLocked(now)
	p.expireInFlightLocked(now)
	p.mu.Unlock()
	if c == nil {
		return
	}
	p.sendTickCalls(ctx, c, t)
}

// takeHeldTooLongLocked forgets the offers held OfferHold or longer and
// returns their ids, to decline.
func (p *Plugin) takeHeldTooLongLocked(now time.Time) []mesoslib.OfferID {
	var decline []mesoslib.OfferID
	for id, o := range p.offers {
		if now.Sub(o.received) >= p.cfg.OfferHold {
			decline = append(decline, mesoslib.OfferID{Value: id})
			delete(p.offers, id)
			delete(o.agent.offers, id)
			o.agent.declinedAt = now
		}
	}
	return decline
}

// suppressLocked decides to suppress offers, when they are not suppressed
// yet and nothing needs one: no launch waits, no offer is held, nothing
// asked for one for OfferHold, and no volume removal or maintenance is
// pending.
func (p *Plugin) suppressLocked(now time.Time) bool {
	if p.suppressed || len(p.waiting) > 0 || len(p.offers) > 0 || now.Sub(p.lastDemand) < p.cfg.OfferHold ||
		p.removalsPendingLocked() || p.maintenanceLocked() {
		return false
	}
	p.suppressed = true
	return true
}

// reviveLocked decides to revive offers when something waits for an
// agent without offers, at most every LaunchWait/4.
func (p *Plugin) reviveLocked(waiting bool, now time.Time) bool {
	if !waiting || now.Sub(p.lastRevive) < p.cfg.LaunchWait/4 {
		return false
	}
	p.suppressed, p.lastRevive = false, now
	return true
}

// reconcileDueLocked decides on an implicit reconciliation every
// ReconcileInterval.
func (p *Plugin) reconcileDueLocked(now time.Time) bool {
	if now.Sub(p.lastRecon) < p.cfg.ReconcileInterval {
		return false
	}
	p.lastRecon = now
	return true
}

// sweepEndedLocked forgets, now and then, the runs ended longer than
// endedRetention ago.
func (p *Plugin) sweepEndedLocked(now time.Time) {
	if now.Sub(p.lastSweep) < endedRetention/60 {
		return
	}
	p.lastSweep = now
	for run, r := range p.runs {
		if r.ended && now.Sub(r.endedAt) > endedRetention {
			delete(p.runs, run)
		}
	}
}

// sendTickCalls sends, each in the background, the calls a tick decided.
func (p *Plugin) sendTickCalls(ctx context.Context, c *conn, t tickCalls) {
	p.reconcileUnreachable(ctx, c, t.unreachable)
	if len(t.decline) > 0 {
		p.spawn(nil, func() {
			call := calls.Decline(t.decline...).With(calls.RefuseSeconds(p.cfg.DeclineRefuse))
			if err := p.call(ctx, c, call); err != nil {
				p.log.Warn("declining offers", "err", err)
			}
		})
	}
	p.simpleCall(ctx, c, t.suppress, calls.Suppress(), "suppressing offers")
	p.simpleCall(ctx, c, t.revive, calls.Revive(), "reviving offers")
	reconcile := &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{}}
	p.simpleCall(ctx, c, t.reconcile, reconcile, "implicit reconcile failed")
}

// expireWaitingLocked reports launches that waited LaunchWait for an
// offer that fits LOST; it returns whether a launch still waits on an
// agent of which no offer is held (offers should be revived).
func (p *Plugin) expireWaitingLocked(now time.Time) bool {
	starved := false
	for _, a := range p.agents {
		if len(a.waiting) == 0 {
			continue
		}
		kept := a.waiting[:0]
		for _, pl := range a.waiting {
			if now.Before(pl.deadline) {
				kept = append(kept, pl)
				continue
			}
			delete(p.waiting, pl.launch.Run)
			delete(p.runs, pl.launch.Run)
			p.reportLocked(p.status(pl.launch.Run, pl.launch.Host, model.TaskLost, model.ReasonLaunchError,
				fmt.Sprintf("no mesos offer on %s fitted within %s: %s", pl.launch.Host, p.cfg.LaunchWait, pl.miss), now))
		}
		clear(a.waiting[len(kept):])
		a.waiting = kept
		starved = starved || (len(kept) > 0 && len(a.offers) == 0)
	}
	return starved
}

func (p *Plugin) simpleCall(ctx context.Context, c *conn, do bool, call *scheduler.Call, what string) {
	if !do {
		return
	}
	p.spawn(nil, func() {
		if err := p.call(ctx, c, call); err != nil {
			p.log.Warn(what, "err", err)
		}
	})
}

// verdicts updates a running run's health and readiness from a status:
// healthy and check_status when the status has them; UNKNOWN for a probe
// that has given no verdict yet.
func (r *runState) verdicts(st *mesoslib.TaskStatus) {
	switch {
	case st.Healthy != nil && *st.Healthy:
		r.health = model.HealthHealthy
	case st.Healthy != nil:
		r.health = model.HealthUnhealthy
	case r.health == model.HealthNone && r.hasHealth:
		r.health = model.HealthUnknown
	}
	switch {
	case st.CheckStatus != nil:
		r.ready = checkVerdict(st.CheckStatus)
	case r.ready == model.HealthNone && r.hasReady:
		r.ready = model.HealthUnknown
	}
}

// removalsWaitingLocked reports whether a volume removal waits on an
// agent of which no offer is held: offers should be revived.
func (p *Plugin) removalsWaitingLocked() bool {
	for _, a := range p.agents {
		if len(a.removals) > 0 && len(a.offers) == 0 {
			return true
		}
	}
	return false
}
