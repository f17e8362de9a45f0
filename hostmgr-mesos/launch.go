package mesos

import (
	"context"
	"fmt"
	"sort"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Launch queues the runs on their agents and returns: it does not wait
// for Mesos. The dispatcher (dispatch.go) sends one ACCEPT per agent as a
// call worker frees up, carved from the agent's held offers at that
// moment, so it carries every run then waiting on the agent that the
// offers fit: runs of later Launch calls that arrive while the agent's
// ACCEPT waits for a worker, or while its leftover resources are being
// offered again, go out together. A run waits up to LaunchWait for an
// offer that fits (offers are revived when the agent is filtered or the
// framework suppressed) and is reported LOST if none comes; a refused
// ACCEPT reports its runs LOST.
func (p *Plugin) Launch(ctx context.Context, runs []hostmgr.Launch) error {
	now := p.clock.Now()
	p.mu.Lock()
	p.lastDemand = now
	revive := false
	for _, l := range runs {
		if msg := checkLaunch(&l, p.cfg.Role); msg != "" {
			p.reportLocked(p.status(l.Run, l.Host, model.TaskFailed, model.ReasonLaunchError, msg, now))
			continue
		}
		if r := p.runs[l.Run]; r != nil && !r.ended {
			continue // already launched: statuses will follow
		}
		if p.waiting[l.Run] != nil {
			continue // already waiting to be sent
		}
		a := p.byHost[l.Host]
		if a == nil || !a.failedAt.IsZero() {
			p.reportLocked(p.status(l.Run, l.Host, model.TaskLost, model.ReasonHostLost, "host "+string(l.Host)+" is not a reachable mesos agent", now))
			continue
		}
		p.waitLocked(a, parkedLaunch{launch: l, deadline: now.Add(p.cfg.LaunchWait), miss: "no offer held"})
		revive = revive || p.needsReviveLocked(a, now)
	}
	c := p.conn
	revive = revive && c != nil
	if revive {
		p.suppressed, p.lastRevive = false, now
	}
	p.mu.Unlock()
	p.kickDispatch()
	if revive {
		if err := p.call(ctx, c, calls.Revive()); err != nil {
			p.log.Warn("reviving offers", "err", err)
		}
	}
	return nil
}

// waitLocked queues a launch on its agent; an agent with held offers
// becomes ready for the dispatcher.
func (p *Plugin) waitLocked(a *agentState, pl parkedLaunch) {
	a.waiting = append(a.waiting, pl)
	p.waiting[pl.launch.Run] = a
	p.readyLocked(a)
}

// readyLocked queues an agent for an ACCEPT when launches wait on it and
// it has offers.
func (p *Plugin) readyLocked(a *agentState) {
	if a.ready || len(a.waiting) == 0 || len(a.offers) == 0 {
		return
	}
	a.ready = true
	p.ready = append(p.ready, a)
}

// needsReviveLocked reports whether a launch on a that holds no offer
// needs a REVIVE to be offered anything soon: the framework suppressed
// offers, or declined the agent's within the refusal filter. Otherwise
// the master offers the agent's free resources again by itself (ACCEPTs
// set no filter).
func (p *Plugin) needsReviveLocked(a *agentState, now time.Time) bool {
	if len(a.offers) > 0 {
		return false
	}
	if p.suppressed {
		return true
	}
	return !a.declinedAt.IsZero() && now.Sub(a.declinedAt) < p.cfg.DeclineRefuse
}

// dropWaitingLocked removes a waiting launch; false when run is not
// waiting.
func (p *Plugin) dropWaitingLocked(run model.RunID) bool {
	a := p.waiting[run]
	if a == nil {
		return false
	}
	delete(p.waiting, run)
	for i := range a.waiting {
		if a.waiting[i].launch.Run == run {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			break
		}
	}
	return true
}

// matchLocked carves waiting launches out of an agent's held offers; all
// offers used go in one ACCEPT. Launches that do not fit are returned
// with why, keeping their deadline.
func (p *Plugin) matchLocked(a *agentState, launches []parkedLaunch, now time.Time) (acceptCall, []parkedLaunch) {
	ac := acceptCall{agent: a}
	if p.conn == nil || len(a.offers) == 0 {
		rest := make([]parkedLaunch, len(launches))
		for i, pl := range launches {
			pl.miss = "no offer held"
			rest[i] = pl
		}
		return ac, rest
	}
	offers := make([]*heldOffer, 0, len(a.offers))
	for _, o := range a.offers {
		offers = append(offers, o)
	}
	sort.Slice(offers, func(i, j int) bool { return offers[i].id < offers[j].id })
	pl := newPool(offers)
	var rest []parkedLaunch
	for i := range launches {
		l := &launches[i].launch
		// Scalars are taken all or nothing; ports and volumes one by one,
		// so a launch with either may leave the pool half carved.
		var saved *pool
		if len(l.Ports) > 0 || len(l.Volumes) > 0 {
			saved = pl.clone()
		}
		c, miss := p.carveLocked(a, pl, l)
		if miss != "" {
			if saved != nil {
				*pl = *saved
			}
			w := launches[i]
			w.miss = miss
			rest = append(rest, w)
			continue
		}
		ac.reserve = append(ac.reserve, c.reserve...)
		ac.create = append(ac.create, c.create...)
		ac.tasks = append(ac.tasks, taskInfo(&c.spec))
		ac.runs = append(ac.runs, *l)
		r := &runState{agentID: a.id, host: a.host, res: l.Task.Resources, created: c.created,
			hasHealth: l.Task.HealthCheck != nil, hasReady: l.Task.Readiness != nil, revocable: l.Revocable}
		p.runs[l.Run] = r
		a.hold(r, 1)
		for _, id := range c.created {
			a.volumes[id] = true
		}
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

// carved is what one launch takes from the pool.
type carved struct {
	spec            launchSpec
	reserve, create []mesoslib.Resource
	created         []string
}

// carveLocked takes a launch's scalars, its exact host ports and its
// persistent volumes from the pool: a volume the offers hold is used as
// it is; one the agent does not have yet is made from unreserved disk by
// RESERVE (for the framework's role and principal, labelled with the
// volume id) and CREATE in the same ACCEPT. It returns why the launch
// does not fit, "" when it does; the caller restores the pool then.
func (p *Plugin) carveLocked(a *agentState, pl *pool, l *hostmgr.Launch) (carved, string) {
	c := carved{spec: launchSpec{l: l, agentID: a.id}}
	res, ok := pl.takeFor(l)
	if !ok {
		return c, fmt.Sprintf("the offers hold %s, the task needs %s", pl.total(), l.Task.Resources)
	}
	ports, missing := pl.takePorts(l.Ports)
	if len(missing) > 0 {
		return c, fmt.Sprintf("the offers lack host ports %v", missing)
	}
	c.spec.resources = append(res, ports...)
	for _, vm := range l.Volumes {
		if v, ok := pl.volumes[vm.ID]; ok {
			delete(pl.volumes, vm.ID)
			c.spec.volumes = append(c.spec.volumes, withVolumePath(v, vm))
			continue
		}
		if a.volumes[vm.ID] {
			return c, fmt.Sprintf("persistent volume %s is on the agent but not offered (still in use?)", vm.ID)
		}
		disk, ok := pl.takeUnreservedDisk(vm.Volume.SizeMB)
		if !ok {
			return c, fmt.Sprintf("the offers lack %d MB of unreserved disk for persistent volume %s", vm.Volume.SizeMB, vm.ID)
		}
		reserved := p.reservation(disk, vm.ID)
		vol := withVolumePath(reserved, vm)
		c.reserve = append(c.reserve, reserved)
		c.create = append(c.create, vol)
		c.created = append(c.created, vm.ID)
		c.spec.volumes = append(c.spec.volumes, vol)
	}
	return c, ""
}

// reservation is disk reserved for the framework's role with its
// principal, labelled with the volume it is for.
func (p *Plugin) reservation(disk mesoslib.Resource, volumeID string) mesoslib.Resource {
	role := p.cfg.Role
	disk.Role = &role
	disk.Reservation = &mesoslib.Resource_ReservationInfo{Labels: labels(map[string]string{labelVolume: volumeID})}
	if p.cfg.Principal != "" {
		pr := p.cfg.Principal
		disk.Reservation.Principal = &pr
	}
	return disk
}

// withVolumePath is a reserved disk as the persistent volume vm, mounted
// in the sandbox under the volume's directory.
func withVolumePath(r mesoslib.Resource, vm hostmgr.VolumeMount) mesoslib.Resource {
	persistence := &mesoslib.Resource_DiskInfo_Persistence{ID: vm.ID}
	if old := r.GetDisk().GetPersistence(); old != nil {
		persistence = old
	} else if pr := reservationPrincipal(&r); pr != "" {
		persistence.Principal = &pr
	}
	disk := &mesoslib.Resource_DiskInfo{Persistence: persistence, Source: r.GetDisk().GetSource(),
		Volume: &mesoslib.Volume{ContainerPath: volumeDir(vm), Mode: mesoslib.RW.Enum()}}
	r.Disk = disk
	return r
}

func reservationPrincipal(r *mesoslib.Resource) string {
	if rs := r.GetReservations(); len(rs) > 0 {
		return rs[len(rs)-1].GetPrincipal()
	}
	return r.GetReservation().GetPrincipal()
}

// sendAccept sends one ACCEPT; if the master refuses it, its runs are
// reported LOST so that they are placed again.
func (p *Plugin) sendAccept(ctx context.Context, c *conn, ac acceptCall) {
	call := calls.Accept(ac.operations().WithOffers(ac.offerIDs...)).With(calls.RefuseSeconds(0))
	err := p.call(ctx, c, call)
	if err == nil {
		return
	}
	if len(ac.runs) == 0 {
		p.log.Warn("accept of volume removals failed; retried on the next offer", "agent", ac.agent.id, "err", err)
		p.mu.Lock()
		for _, v := range ac.destroy {
			ac.agent.removals[v.GetDisk().GetPersistence().GetID()] = true
		}
		p.mu.Unlock()
		return
	}
	p.log.Warn("accept failed; runs reported lost", "agent", ac.agent.id, "runs", len(ac.runs), "err", err)
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range ac.runs {
		if r := p.runs[l.Run]; r != nil {
			p.endRunLocked(r, now)
			p.forgetCreatedLocked(r)
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
	if p.dropWaitingLocked(run) {
		p.reportLocked(p.status(run, host, model.TaskKilled, model.ReasonKilled, "killed before it was launched", now))
		p.mu.Unlock()
		return nil
	}
	k := killRequest{run: run, grace: grace}
	if r := p.runs[run]; r != nil {
		k.agentID = r.agentID
		r.killRequested = true
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

// operations are the ACCEPT's operations in the order they apply.
func (ac *acceptCall) operations() calls.OfferOperations {
	var ops calls.OfferOperations
	if len(ac.destroy) > 0 {
		ops = append(ops, calls.OpDestroy(ac.destroy...), calls.OpUnreserve(ac.unreserve...))
	}
	if len(ac.reserve) > 0 {
		ops = append(ops, calls.OpReserve(ac.reserve...), calls.OpCreate(ac.create...))
	}
	if len(ac.tasks) > 0 {
		ops = append(ops, calls.OpLaunch(ac.tasks...))
	}
	return ops
}

// forgetCreatedLocked forgets the volumes a failed run was to create:
// whether they exist, offers will tell.
func (p *Plugin) forgetCreatedLocked(r *runState) {
	if a := p.agents[r.agentID]; a != nil {
		for _, id := range r.created {
			delete(a.volumes, id)
		}
	}
	r.created = nil
}
