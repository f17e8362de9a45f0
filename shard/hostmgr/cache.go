package hostmgr

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/peloton-federated/peloton/shard/model"
)

// HostCache holds the hosts every plugin reported and what the shard's own
// tasks hold on each. Placement reads snapshots of it; the job manager
// allocates on placement and releases when a run ends.
type HostCache struct {
	mu    sync.RWMutex
	hosts map[model.HostID]*hostEntry
	// order is the host ids sorted, rebuilt when hosts come or go.
	order      []model.HostID
	orderStale bool
	// Running totals, so that passes need not scan every host.
	capacityUp model.Resources
	allocated  model.Resources
	revocable  model.Resources
	// version increases on every change, so readers can tell a stale snapshot.
	version uint64
	// drained holds the hosts an operator took out of service, reported
	// or not: they show as DRAINING while their plugin reports them up.
	drained map[model.HostID]bool
	// clusterDraining holds the hosts their plugin reports DRAINING.
	clusterDraining map[model.HostID]bool
	// shapes are the distinct capacities of known hosts, rebuilt on
	// demand after a host came, went or changed size.
	shapes      []model.Resources
	shapesStale bool
	// labels are the distinct label values of up hosts, rebuilt on demand
	// after a host came, went, changed labels or state.
	labels      map[string][]string
	labelsFresh bool
}

type hostEntry struct {
	// host is as reported, except that a drained host that is up shows
	// as DRAINING; reported keeps the plugin's state.
	host      model.Host
	reported  model.HostState
	allocated model.Resources
	revocable model.Resources
	tasks     int
	ports     hostPorts
}

// entry returns a host's entry, making one for a host not reported yet
// (shown DOWN until it is).
func (c *HostCache) entry(id model.HostID) *hostEntry {
	e, ok := c.hosts[id]
	if !ok {
		e = &hostEntry{host: model.Host{ID: id, State: model.HostDown}, reported: model.HostDown}
		c.hosts[id] = e
		c.orderStale = true
	}
	return e
}

// HostView is a host with the shard's allocation on it.
type HostView struct {
	model.Host
	Allocated model.Resources
	// Revocable is what revocable runs hold of the host's slack; it is not
	// part of Allocated.
	Revocable model.Resources
	Tasks     int
	// PortsUsed is how many ports of the host's ranges runs hold.
	PortsUsed int
}

// FreePorts is how many ports of the host's ranges are free.
func (v *HostView) FreePorts() int { return max(v.PortCount()-v.PortsUsed, 0) }

// Free is what the shard may still place on the host.
func (v *HostView) Free() model.Resources { return v.Capacity.Sub(v.Allocated) }

// NewHostCache returns an empty cache.
func NewHostCache() *HostCache {
	return &HostCache{hosts: map[model.HostID]*hostEntry{}, drained: map[model.HostID]bool{}, clusterDraining: map[model.HostID]bool{}}
}

// effective is the state a host shows: DRAINING when drained and up.
func (c *HostCache) effective(id model.HostID, reported model.HostState) model.HostState {
	if reported == model.HostUp && c.drained[id] {
		return model.HostDraining
	}
	return reported
}

// setState changes a known host's shown state, keeping the capacity of
// hosts that are up in step.
func (c *HostCache) setState(e *hostEntry, s model.HostState) {
	if e.host.State == model.HostUp {
		c.capacityUp = c.capacityUp.Sub(e.host.Capacity)
	}
	e.host.State = s
	if s == model.HostUp {
		c.capacityUp = c.capacityUp.Add(e.host.Capacity)
	}
}

// SetDraining takes a host out of service (it takes no new work and its
// capacity no longer counts) or puts it back. It may name a host not
// reported yet. It reports whether anything changed.
func (c *HostCache) SetDraining(id model.HostID, drained bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drained[id] == drained {
		return false
	}
	if drained {
		c.drained[id] = true
	} else {
		delete(c.drained, id)
	}
	if e, ok := c.hosts[id]; ok {
		c.setState(e, c.effective(id, e.reported))
		c.labelsFresh = false
	}
	c.version++
	return true
}

// Update adds or replaces hosts, keeping what is allocated on them.
func (c *HostCache) Update(hosts []model.Host) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range hosts {
		e, ok := c.hosts[h.ID]
		if !ok {
			e = &hostEntry{}
			c.hosts[h.ID] = e
			c.orderStale = true
		}
		if e.host.State == model.HostUp {
			c.capacityUp = c.capacityUp.Sub(e.host.Capacity)
		}
		if !ok || e.host.Capacity != h.Capacity {
			c.shapesStale = true
		}
		h = withShardLabels(h)
		e.host, e.reported = h, h.State
		if h.State == model.HostDraining {
			c.clusterDraining[h.ID] = true
		} else {
			delete(c.clusterDraining, h.ID)
		}
		e.recountPorts()
		e.host.State = c.effective(h.ID, h.State)
		if e.host.State == model.HostUp {
			c.capacityUp = c.capacityUp.Add(h.Capacity)
		}
	}
	c.labelsFresh = false
	c.version++
}

// Remove forgets hosts.
func (c *HostCache) Remove(ids []model.HostID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		e, ok := c.hosts[id]
		if !ok {
			continue
		}
		if e.host.State == model.HostUp {
			c.capacityUp = c.capacityUp.Sub(e.host.Capacity)
		}
		c.allocated = c.allocated.Sub(e.allocated)
		c.revocable = c.revocable.Sub(e.revocable)
		delete(c.hosts, id)
		delete(c.clusterDraining, id)
		c.orderStale = true
		c.shapesStale = true
		c.labelsFresh = false
	}
	c.version++
}

// ClusterDraining returns the hosts their plugin reports DRAINING (their
// cluster is taking them away), sorted by id.
func (c *HostCache) ClusterDraining() []HostView {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]HostView, 0, len(c.clusterDraining))
	for id := range c.clusterDraining {
		if e, ok := c.hosts[id]; ok {
			out = append(out, e.view())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Shapes returns the distinct capacities of the hosts the cache knows,
// whatever their state: what the largest task the region could ever run
// is measured against.
func (c *HostCache) Shapes() []model.Resources {
	c.mu.RLock()
	if !c.shapesStale {
		defer c.mu.RUnlock()
		return c.shapes
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shapesStale {
		seen := map[model.Resources]bool{}
		c.shapes = nil
		for _, e := range c.hosts {
			if !seen[e.host.Capacity] {
				seen[e.host.Capacity] = true
				c.shapes = append(c.shapes, e.host.Capacity)
			}
		}
		c.shapesStale = false
	}
	return c.shapes
}

// Labels returns each label key of the up hosts with its distinct values,
// values sorted: what a region tells the federation of its hosts, so that
// routing can rule out regions where no host could satisfy a job's
// constraints. The result is shared; callers must not change it.
func (c *HostCache) Labels() map[string][]string {
	c.mu.RLock()
	if c.labelsFresh {
		defer c.mu.RUnlock()
		return c.labels
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.labelsFresh {
		seen := map[string]map[string]bool{}
		for _, e := range c.hosts {
			if e.host.State != model.HostUp {
				continue
			}
			for k, v := range e.host.Labels {
				if seen[k] == nil {
					seen[k] = map[string]bool{}
				}
				seen[k][v] = true
			}
		}
		c.labels = make(map[string][]string, len(seen))
		for k, vs := range seen {
			c.labels[k] = slices.Sorted(maps.Keys(vs))
		}
		c.labelsFresh = true
	}
	return c.labels
}

// Has reports whether the host is known.
func (c *HostCache) Has(id model.HostID) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.hosts[id]
	return ok
}

// Allocate records that a run holds r on host id; revocable runs hold the
// host's slack rather than its free resources. Allocations on hosts not
// (yet) known are kept so that a host reported later starts out correct.
func (c *HostCache) Allocate(id model.HostID, r model.Resources, revocable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	if revocable {
		e.revocable = e.revocable.Add(r)
		c.revocable = c.revocable.Add(r)
	} else {
		e.allocated = e.allocated.Add(r)
		c.allocated = c.allocated.Add(r)
	}
	e.tasks++
	c.version++
}

// Release undoes Allocate.
func (c *HostCache) Release(id model.HostID, r model.Resources, revocable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.hosts[id]
	if !ok {
		return
	}
	if revocable {
		e.revocable = e.revocable.Sub(r)
		c.revocable = c.revocable.Sub(r)
	} else {
		e.allocated = e.allocated.Sub(r)
		c.allocated = c.allocated.Sub(r)
	}
	// Amounts are exact integers: releasing what was allocated leaves an
	// empty host at exactly zero, with nothing to sweep up.
	e.tasks = max(e.tasks-1, 0)
	c.version++
}

// Snapshot returns every host sorted by id, with allocations.
func (c *HostCache) Snapshot() []HostView {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.orderStale {
		c.order = c.order[:0]
		for id := range c.hosts {
			c.order = append(c.order, id)
		}
		sort.Slice(c.order, func(i, j int) bool { return c.order[i] < c.order[j] })
		c.orderStale = false
	}
	out := make([]HostView, len(c.order))
	for i, id := range c.order {
		e := c.hosts[id]
		out[i] = e.view()
	}
	return out
}

// Capacity is the capacity of hosts that are up and what the shard's
// non-revocable runs hold.
func (c *HostCache) Capacity() (capacity, allocated model.Resources) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.capacityUp, c.allocated
}

// RevocableAllocated is what revocable runs hold of hosts' slack.
func (c *HostCache) RevocableAllocated() model.Resources {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.revocable
}

// View returns one host with its allocations.
func (c *HostCache) View(id model.HostID) (HostView, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.hosts[id]
	if !ok {
		return HostView{}, false
	}
	return e.view(), true
}

func (e *hostEntry) view() HostView {
	return HostView{Host: e.host, Allocated: e.allocated, Revocable: e.revocable, Tasks: e.tasks, PortsUsed: e.ports.inRange}
}
