package jobmgr

import (
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// place matches admitted tasks to hosts with the placement core. Tasks that
// find no host stay READY with the reason in their message, and are tried
// again next pass.
func (e *Engine) place(now time.Time) {
	if len(e.ready) == 0 {
		return
	}
	views := e.cfg.Hosts.Snapshot()
	hosts := make([]placement.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" && v.State == model.HostDown {
			continue // allocation recorded for a host not reported yet
		}
		hosts = append(hosts, placement.Host{
			ID:          v.ID,
			Cluster:     v.Cluster,
			Free:        v.Free().Max(model.Resources{}),
			Labels:      v.Labels,
			Ports:       1 << 16,
			Schedulable: v.State == model.HostUp,
		})
	}
	index, err := placement.NewHostIndex(hosts)
	if err != nil {
		e.log.Error("building host index", "err", err)
		return
	}
	gangs := map[resmgr.GangID]int{}
	ids := make([]model.TaskID, 0, len(e.ready))
	tasks := make([]placement.Task, 0, len(e.ready))
	for _, id := range e.ready {
		je, t := e.task(id)
		if t == nil || t.State != model.TaskReady {
			continue
		}
		spec := &je.job.Spec
		gang := 0
		if gangSize(spec) > 1 {
			g := gangOf(je, id.Instance)
			if gangs[g] == 0 {
				gangs[g] = len(gangs) + 1
			}
			gang = gangs[g]
		}
		tasks = append(tasks, placement.Task{
			Gang:        gang,
			Ref:         len(ids),
			Job:         id.Job,
			Resources:   spec.Task.Resources,
			Constraints: spec.Task.Constraints,
			Strategy:    placement.StrategyFor(spec.Type),
		})
		ids = append(ids, id)
	}
	res := placement.Place(index, tasks, placement.Options{Seed: uint64(now.UnixNano())})
	for _, a := range res.Assignments {
		id := ids[a.Ref]
		je, t := e.task(id)
		e.setState(je, t, model.TaskPlacing, now)
		t.Host, t.Cluster, t.Message = a.Host, clusterOf(a.Host), ""
		e.cfg.Hosts.Allocate(a.Host, je.job.Spec.Task.Resources)
		e.placedAt[t.ID] = now
		e.setState(je, t, model.TaskPlaced, now)
	}
	still := e.ready[:0]
	for _, u := range res.Unplaced {
		id := ids[u.Ref]
		je, t := e.task(id)
		if why := u.Reason.String(); t.Message != why {
			t.Message = why
			t.UpdateTime = now
			e.markDirty(je, t)
		}
		still = append(still, id)
	}
	e.ready = still
}
