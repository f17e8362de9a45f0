package core

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
func (b *indexBook) place(e *State, now time.Time) {
	if len(e.Queue.Ready) == 0 {
		return
	}
	var normal, revocable []model.TaskID
	for _, id := range e.Queue.Ready {
		je, t := e.Task(id)
		if t == nil || t.State != model.TaskReady {
			continue
		}
		if je.Job.Spec.Revocable {
			revocable = append(revocable, id)
		} else {
			normal = append(normal, id)
		}
	}
	var still []model.TaskID
	if len(normal) > 0 {
		e.Reserve.reserveHosts(e, now)
		if index := b.current(e, now); index != nil {
			still = e.Reserve.placeOnReserved(e, b.placeWith(e, index, normal, now), now)
		} else {
			still = normal
		}
	}
	if len(revocable) > 0 {
		views := e.Settings.Hosts.Snapshot()
		still = append(still, e.Revocable.placeOn(e, views, e.Revocable.hostSlack(e, views), revocable, now)...)
	}
	e.Queue.Ready = still
}

// indexBook is what placement keeps across passes: the index of what
// hosts have free (hosts, built when), the hosts whose runs ended since it
// was brought up to date (released), the hosts plugins reported changed
// (stale, handed in by the Engine) and the runs of jobs with placement
// limits per host (counts, limitcounts.go).
type indexBook struct {
	hosts    *placement.HostIndex
	built    time.Time
	released map[model.HostID]bool
	stale    map[model.HostID]bool
	counts   limitCounts
}

// Drop has the index rebuilt whole by the next pass that places (the hosts
// of a cluster drained or undrained change at once).
func (b *indexBook) Drop() { b.hosts = nil }

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
func (b *indexBook) current(e *State, now time.Time) *placement.HostIndex {
	stale := b.stale
	b.stale = map[model.HostID]bool{}
	for id := range b.released {
		stale[id] = true
	}
	clear(b.released)
	if b.hosts != nil && now.Sub(b.built) < indexRebuildEvery && len(stale) < b.hosts.Len()/4+1 {
		for id := range stale {
			v, ok := e.Settings.Hosts.View(id)
			switch {
			case !ok || (v.Hostname == "" && v.State == model.HostDown):
				_ = b.hosts.RemoveHost(id)
			default:
				if err := b.hosts.UpsertHost(b.indexed(e, placementHost(&v, v.Free(), e.HostPoolOf(id), e.Clusters.Drained))); err != nil {
					e.Log.Error("updating host index", "host", id, "err", err)
				}
			}
		}
		return b.hosts
	}
	views := e.Settings.Hosts.Snapshot()
	hosts := make([]placement.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" && v.State == model.HostDown {
			continue // allocation recorded for a host not reported yet
		}
		hosts = append(hosts, b.indexed(e, placementHost(v, v.Free(), e.HostPoolOf(v.ID), e.Clusters.Drained)))
	}
	index, err := placement.NewHostIndex(hosts)
	if err != nil {
		e.Log.Error("building host index", "err", err)
		b.hosts = nil
		return nil
	}
	b.hosts, b.built = index, now
	return index
}

// hostSlack is each host's allocated-but-unused resources, as measured by
// plugins that report usage, less what revocable runs already hold of it.
func (b *revocableBook) hostSlack(e *State, views []hostmgr.HostView) map[model.HostID]model.Resources {
	out := map[model.HostID]model.Resources{}
	for i := range views {
		v := &views[i]
		u, ok := e.Plugins[v.Cluster].(hostmgr.UsageReporter)
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
func (b *revocableBook) placeOn(e *State, views []hostmgr.HostView, slack map[model.HostID]model.Resources, ready []model.TaskID, now time.Time) []model.TaskID {
	hosts := make([]placement.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" && v.State == model.HostDown {
			continue // allocation recorded for a host not reported yet
		}
		free := slack[v.ID].Sub(v.Revocable)
		hosts = append(hosts, placementHost(v, free, e.HostPoolOf(v.ID), e.Clusters.Drained))
	}
	index, err := placement.NewHostIndex(hosts)
	if err != nil {
		e.Log.Error("building host index", "err", err)
		return ready
	}
	return e.Index.placeWith(e, index, ready, now)
}

// placeWith places tasks against an index, which takes what it assigns.
func (b *indexBook) placeWith(e *State, index *placement.HostIndex, ready []model.TaskID, now time.Time) []model.TaskID {
	gangs := map[resmgr.GangID]int{}
	hostPools := map[string][]string{}
	avoid := map[*Job][]string{}
	tasks := make([]placement.Task, 0, len(ready))
	for i, id := range ready {
		je, t := e.Task(id)
		spec := &je.Job.Spec
		gang := 0
		if GangSize(spec) > 1 {
			g := GangOf(je, id.Instance)
			if gangs[g] == 0 {
				gangs[g] = len(gangs) + 1
			}
			gang = gangs[g]
		}
		pt := je.placementTask(t, i, gang)
		hp, ok := hostPools[spec.Pool]
		if !ok {
			hp = e.ResourceHostPools(spec.Pool)
			hostPools[spec.Pool] = hp
		}
		pt.HostPools = hp
		e.Clusters.clusterFilters(e, je, &pt, t, avoid)
		tasks = append(tasks, pt)
	}
	e.passes++
	res := placement.Place(index, tasks, placement.Options{Seed: e.passes})
	e.figures.Placed += len(res.Assignments)
	for _, u := range res.Unplaced {
		if e.figures.Unplaced == nil {
			e.figures.Unplaced = map[string]uint64{}
		}
		e.figures.Unplaced[u.Reason.Code.String()]++
	}
	still := make([]model.TaskID, 0, len(res.Unplaced))
	for _, a := range res.Assignments {
		e.Reserve.Placed(ready[a.Ref])
		e.Reserve.releaseReservation(e, ready[a.Ref]) // placed elsewhere first
		if !b.assign(e, ready[a.Ref], a.Host, now) {
			still = append(still, ready[a.Ref])
		}
	}
	for _, u := range res.Unplaced {
		id := ready[u.Ref]
		je, t := e.Task(id)
		e.Reserve.Unplaced(id, &tasks[u.Ref], je.Job.Spec.Pool, u.Reason, now)
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
func (b *indexBook) assign(e *State, id model.TaskID, host model.HostID, now time.Time) bool {
	je, t := e.Task(id)
	ports, err := e.Settings.Hosts.AllocatePorts(host, je.config(t.ConfigVersion).ports(t.ID.Instance))
	if err != nil {
		// The host's free resources in the index are refreshed next pass.
		b.released[host] = true
		if msg := "not placed: " + err.Error(); t.Message != msg {
			t.Message, t.UpdateTime = msg, now
			e.markDirty(je, t)
		}
		return false
	}
	delete(je.prefer, t.ID.Instance)
	runs{e}.setState(je, t, model.TaskPlacing, now)
	t.Host, t.Cluster, t.Message = host, ClusterOf(host), ""
	t.SetPorts(ports)
	t.Health, t.Ready = 0, 0
	if je.Job.Spec.Type == model.JobStateful && t.PinnedHost() == "" {
		t.SetPinnedHost(host) // its volumes are made there
	}
	e.Settings.Hosts.Allocate(host, je.TaskResources(t), je.Job.Spec.Revocable)
	if je.limited(t) {
		b.counts.Add(host, t.ID.Job, 1)
	}
	e.placedAt[t.ID] = now
	runs{e}.setState(je, t, model.TaskPlaced, now)
	return true
}

// revocableBook is revocable work's adapter on the core: Jobs holds the
// unfinished jobs of revocable work, and its methods evict revocable runs
// from hosts whose slack shrank.
type revocableBook struct{ Jobs map[model.JobID]bool }

// evictRevocable kills revocable runs on hosts whose slack shrank below
// what revocable work holds there, the most recently started first.
func (b *revocableBook) evictRevocable(e *State, now time.Time) {
	if e.Settings.Hosts.RevocableAllocated().IsZero() {
		return
	}
	over := b.revocableOver(e)
	if len(over) == 0 {
		return
	}
	byHost := map[model.HostID][]victim{}
	for _, je := range e.Jobs {
		if !je.Job.Spec.Revocable {
			continue
		}
		for _, t := range je.Tasks {
			if t.State.HoldsResources() && !over[t.Host].IsZero() {
				byHost[t.Host] = append(byHost[t.Host], victim{je, t})
			}
		}
	}
	for host, vs := range byHost {
		b.evictOn(e, host, over[host], vs, now)
	}
}

// victim is a revocable run eviction may take.
type victim struct {
	Entry *Job
	T     *model.TaskRuntime
}

// revocableOver is, for each host whose slack shrank below what revocable
// runs hold there, by how much.
func (b *revocableBook) revocableOver(e *State) map[model.HostID]model.Resources {
	views := e.Settings.Hosts.Snapshot()
	slack := b.hostSlack(e, views)
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
func (b *revocableBook) evictOn(e *State, host model.HostID, need model.Resources, vs []victim, now time.Time) {
	// Most recently started first; not started yet counts as newest.
	sortVictims(vs, func(a, b victim) bool {
		return a.T.StartTime.After(b.T.StartTime) || (a.T.StartTime.Equal(b.T.StartTime) && a.T.ID.String() < b.T.ID.String())
	})
	// Runs already being killed give their share back first.
	for _, v := range vs {
		if e.Queue.Restarting[GangOf(v.Entry, v.T.ID.Instance)] != nil {
			need = need.Sub(v.Entry.TaskResources(v.T))
		}
	}
	for _, v := range vs {
		if need.Max(model.Resources{}).IsZero() {
			return
		}
		g := GangOf(v.Entry, v.T.ID.Instance)
		if e.Queue.Restarting[g] != nil {
			continue
		}
		e.Log.Info("evicting revocable task", "task", v.T.ID, "host", host)
		e.figures.Preempted = append(e.figures.Preempted, "host_slack")
		e.Queue.restartGang(e, v.Entry, g, model.ReasonPreempted, "revocable: slack on "+string(host)+" shrank", now)
		// The slack it held is gone already: release it in the resource
		// manager now, so its own slack check does not evict more.
		e.Queue.Sched.Remove(g)
		for _, m := range v.Entry.members(g) {
			if m.Host == host {
				need = need.Sub(v.Entry.TaskResources(m))
			}
		}
	}
}
