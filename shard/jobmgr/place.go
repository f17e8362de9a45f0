package jobmgr

import (
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// place matches admitted tasks to hosts with the placement core: ordinary
// tasks against what hosts have free, revocable ones against their slack.
// Tasks that find no host stay READY with the reason in their message, and
// are tried again next pass.
func (e *Engine) place(now time.Time) {
	if len(e.ready) == 0 {
		return
	}
	var normal, revocable []model.TaskID
	for _, id := range e.ready {
		je, t := e.task(id)
		if t == nil || t.State != model.TaskReady {
			continue
		}
		if je.job.Spec.Revocable {
			revocable = append(revocable, id)
		} else {
			normal = append(normal, id)
		}
	}
	var still []model.TaskID
	if len(normal) > 0 {
		e.reserveHosts(now)
		if index := e.hostIndex(now); index != nil {
			still = e.placeOnReserved(e.placeWith(index, normal, now), now)
		} else {
			still = normal
		}
	}
	if len(revocable) > 0 {
		views := e.cfg.Hosts.Snapshot()
		still = append(still, e.placeOn(views, e.hostSlack(views), revocable, now)...)
	}
	e.ready = still
}

// indexRebuildEvery bounds how long the persistent host index is kept
// before it is rebuilt, which also restores its tightest-first order.
const indexRebuildEvery = 30 * time.Second

// placementHost describes a host of host pool hostPool to placement with
// what it has free; hosts of drained clusters take no new work.
func placementHost(v *hostmgr.HostView, free model.Resources, hostPool string, drained map[string]bool) placement.Host {
	return placement.Host{
		HostPool:    hostPool,
		ID:          v.ID,
		Cluster:     v.Cluster,
		Free:        free.Max(model.Resources{}),
		Labels:      v.Labels,
		Ports:       v.FreePorts(),
		Schedulable: v.State == model.HostUp && !drained[v.Cluster],
	}
}

// hostIndex returns the persistent index of what hosts have free, brought
// up to date with the hosts that changed since the last pass.
func (e *Engine) hostIndex(now time.Time) *placement.HostIndex {
	e.inboxMu.Lock()
	stale := e.staleHosts
	e.staleHosts = map[model.HostID]bool{}
	e.inboxMu.Unlock()
	for id := range e.released {
		stale[id] = true
	}
	clear(e.released)
	if e.index != nil && now.Sub(e.indexBuilt) < indexRebuildEvery && len(stale) < e.index.Len()/4+1 {
		for id := range stale {
			v, ok := e.cfg.Hosts.View(id)
			switch {
			case !ok || (v.Hostname == "" && v.State == model.HostDown):
				_ = e.index.RemoveHost(id)
			default:
				if err := e.index.UpsertHost(e.indexHost(placementHost(&v, v.Free(), e.hostPoolOf(id), e.clusters.drained))); err != nil {
					e.log.Error("updating host index", "host", id, "err", err)
				}
			}
		}
		return e.index
	}
	views := e.cfg.Hosts.Snapshot()
	hosts := make([]placement.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" && v.State == model.HostDown {
			continue // allocation recorded for a host not reported yet
		}
		hosts = append(hosts, e.indexHost(placementHost(v, v.Free(), e.hostPoolOf(v.ID), e.clusters.drained)))
	}
	index, err := placement.NewHostIndex(hosts)
	if err != nil {
		e.log.Error("building host index", "err", err)
		e.index = nil
		return nil
	}
	e.index, e.indexBuilt = index, now
	return index
}

// hostSlack is each host's allocated-but-unused resources, as measured by
// plugins that report usage, less what revocable runs already hold of it.
func (e *Engine) hostSlack(views []hostmgr.HostView) map[model.HostID]model.Resources {
	out := map[model.HostID]model.Resources{}
	for i := range views {
		v := &views[i]
		u, ok := e.plugins[v.Cluster].(hostmgr.UsageReporter)
		if !ok {
			continue
		}
		used, ok := u.MeasuredUsage(v.ID)
		if !ok {
			continue
		}
		out[v.ID] = v.Allocated.Sub(used).Max(model.Resources{})
	}
	return out
}

// placeOn places one kind of task; slack nil means free resources.
// placeOn places revocable tasks against hosts' slack, on an index built
// for the pass.
func (e *Engine) placeOn(views []hostmgr.HostView, slack map[model.HostID]model.Resources, ready []model.TaskID, now time.Time) []model.TaskID {
	hosts := make([]placement.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" && v.State == model.HostDown {
			continue // allocation recorded for a host not reported yet
		}
		free := slack[v.ID].Sub(v.Revocable)
		hosts = append(hosts, placementHost(v, free, e.hostPoolOf(v.ID), e.clusters.drained))
	}
	index, err := placement.NewHostIndex(hosts)
	if err != nil {
		e.log.Error("building host index", "err", err)
		return ready
	}
	return e.placeWith(index, ready, now)
}

// placeWith places tasks against an index, which takes what it assigns.
func (e *Engine) placeWith(index *placement.HostIndex, ready []model.TaskID, now time.Time) []model.TaskID {
	gangs := map[resmgr.GangID]int{}
	hostPools := map[string][]string{}
	avoid := map[*jobEntry][]string{}
	tasks := make([]placement.Task, 0, len(ready))
	for i, id := range ready {
		je, t := e.task(id)
		spec := &je.job.Spec
		gang := 0
		if gangSize(spec) > 1 {
			g := gangOf(je, id.Instance)
			if gangs[g] == 0 {
				gangs[g] = len(gangs) + 1
			}
			gang = gangs[g]
		}
		pt := je.placementTask(t, i, gang)
		hp, ok := hostPools[spec.Pool]
		if !ok {
			hp = e.resourceHostPools(spec.Pool)
			hostPools[spec.Pool] = hp
		}
		pt.HostPools = hp
		e.clusterFilters(je, &pt, t, avoid)
		tasks = append(tasks, pt)
	}
	e.passes++
	started := time.Now() // a measurement for metrics, not an input of any decision
	res := placement.Place(index, tasks, placement.Options{Seed: e.passes})
	unplaced := map[string]uint64{}
	for _, u := range res.Unplaced {
		unplaced[u.Reason.Code.String()]++
	}
	e.stats.placement(time.Since(started), len(res.Assignments), unplaced)
	still := make([]model.TaskID, 0, len(res.Unplaced))
	for _, a := range res.Assignments {
		e.reserve.placed(ready[a.Ref])
		e.releaseReservation(ready[a.Ref]) // placed elsewhere first
		if !e.assign(ready[a.Ref], a.Host, now) {
			still = append(still, ready[a.Ref])
		}
	}
	for _, u := range res.Unplaced {
		id := ready[u.Ref]
		je, t := e.task(id)
		e.reserve.unplaced(id, &tasks[u.Ref], je.job.Spec.Pool, u.Reason, now)
		if p, ok := je.prefer[id.Instance]; ok && !p.must {
			// Its own host (or preferred cluster) has no room now: any
			// allowed host next pass.
			delete(je.prefer, id.Instance)
			still = append(still, id)
			continue
		}
		if why := u.Reason.String(); t.Message != why {
			t.Message = why
			t.UpdateTime = now
			e.markDirty(je, t)
		}
		still = append(still, id)
	}
	return still
}

// assign puts a READY task on host: its ports, its allocation, PLACING
// then PLACED. A fixed port held by another job's run (placement counted
// free ports, not which) leaves it READY with the reason, and false.
func (e *Engine) assign(id model.TaskID, host model.HostID, now time.Time) bool {
	je, t := e.task(id)
	ports, err := e.cfg.Hosts.AllocatePorts(host, je.config(t.ConfigVersion).ports(t.ID.Instance))
	if err != nil {
		// The host's free resources in the index are refreshed next pass.
		e.released[host] = true
		if msg := "not placed: " + err.Error(); t.Message != msg {
			t.Message, t.UpdateTime = msg, now
			e.markDirty(je, t)
		}
		return false
	}
	delete(je.prefer, t.ID.Instance)
	e.setState(je, t, model.TaskPlacing, now)
	t.Host, t.Cluster, t.Message = host, clusterOf(host), ""
	t.SetPorts(ports)
	t.Health, t.Ready = 0, 0
	if je.job.Spec.Type == model.JobStateful && t.PinnedHost() == "" {
		t.SetPinnedHost(host) // its volumes are made there
	}
	e.cfg.Hosts.Allocate(host, je.taskResources(t), je.job.Spec.Revocable)
	if je.limited(t) {
		e.hostCounts.add(host, t.ID.Job, 1)
	}
	e.placedAt[t.ID] = now
	e.setState(je, t, model.TaskPlaced, now)
	return true
}

// evictRevocable kills revocable runs on hosts whose slack shrank below
// what revocable work holds there, the most recently started first.
func (e *Engine) evictRevocable(now time.Time) {
	if e.cfg.Hosts.RevocableAllocated().IsZero() {
		return
	}
	over := e.revocableOver()
	if len(over) == 0 {
		return
	}
	byHost := map[model.HostID][]victim{}
	for _, je := range e.jobs {
		if !je.job.Spec.Revocable {
			continue
		}
		for _, t := range je.tasks {
			if t.State.HoldsResources() && !over[t.Host].IsZero() {
				byHost[t.Host] = append(byHost[t.Host], victim{je, t})
			}
		}
	}
	for host, vs := range byHost {
		e.evictOn(host, over[host], vs, now)
	}
}

// victim is a revocable run eviction may take.
type victim struct {
	je *jobEntry
	t  *model.TaskRuntime
}

// revocableOver is, for each host whose slack shrank below what revocable
// runs hold there, by how much.
func (e *Engine) revocableOver() map[model.HostID]model.Resources {
	views := e.cfg.Hosts.Snapshot()
	slack := e.hostSlack(views)
	over := map[model.HostID]model.Resources{}
	for i := range views {
		v := &views[i]
		s, measured := slack[v.ID]
		if !measured || v.Revocable.IsZero() || v.Revocable.Fits(s) {
			continue
		}
		over[v.ID] = v.Revocable.Sub(s)
	}
	return over
}

// evictOn evicts revocable runs vs from host until what they held covers
// need, the most recently started first.
func (e *Engine) evictOn(host model.HostID, need model.Resources, vs []victim, now time.Time) {
	// Most recently started first; not started yet counts as newest.
	sortVictims(vs, func(a, b victim) bool {
		return a.t.StartTime.After(b.t.StartTime) || (a.t.StartTime.Equal(b.t.StartTime) && a.t.ID.String() < b.t.ID.String())
	})
	// Runs already being killed give their share back first.
	for _, v := range vs {
		if e.restarting[gangOf(v.je, v.t.ID.Instance)] != nil {
			need = need.Sub(v.je.taskResources(v.t))
		}
	}
	for _, v := range vs {
		if need.Max(model.Resources{}).IsZero() {
			return
		}
		g := gangOf(v.je, v.t.ID.Instance)
		if e.restarting[g] != nil {
			continue
		}
		e.log.Info("evicting revocable task", "task", v.t.ID, "host", host)
		e.stats.preempted("host_slack")
		e.restartGang(v.je, g, model.ReasonPreempted, "revocable: slack on "+string(host)+" shrank", now)
		// The slack it held is gone already: release it in the resource
		// manager now, so its own slack check does not evict more.
		e.sched.Remove(g)
		for _, m := range v.je.members(g) {
			if m.Host == host {
				need = need.Sub(v.je.taskResources(m))
			}
		}
	}
}
