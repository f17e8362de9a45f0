package placement

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// HostIndex is placement's view of the hosts: what is free on each, the
// feasibility groups built for the constraint sets seen so far (each with a
// fit tree), and the instance counts behind the task-to-task limits. It is
// built once from a host snapshot and then kept current in place: Place and
// Commit deduct what they assign, Release gives back what an ended task
// held, UpsertHost and RemoveHost follow the host managers. Nothing is
// rebuilt from scratch between passes.
//
// A HostIndex is not safe for concurrent use. Concurrent workers each place
// against a Clone and submit their assignments to one shared index through
// Commit, which re-checks them (see Commit).
type HostIndex struct {
	ids         []model.HostID
	clusters    []string
	labels      []map[string]string
	free        []model.Resources
	ports       []int
	schedulable []bool
	gpuHost     []bool
	hostPools   []string
	slotOf      map[model.HostID]int32
	scale       scale

	// groups are the feasible host sets per (tier, constraint set), built
	// on first use; memberships[slot] lists the groups holding a slot.
	groups      map[string]int32
	groupList   []*group
	memberships [][]membership

	// counts holds, per spread group, the instances per host and per
	// host label value.
	counts map[string]*instanceCounts
}

type membership struct {
	group int32
	pos   int32
}

type instanceCounts struct {
	perHost map[int32]int
	// perValue[key][value] is kept for the label keys some limit used.
	perValue map[string]map[string]int
}

// maxCachedGroups bounds how many feasibility groups the index keeps between
// passes; past it, they are dropped at the start of the next pass.
const maxCachedGroups = 512

// NewHostIndex builds the index. Hosts are ordered tightest first (least
// free cpu, then memory, then by ID), which is the order pack fills them
// in; the input order does not matter.
func NewHostIndex(hosts []Host) (*HostIndex, error) {
	sorted := make([]*Host, len(hosts))
	for i := range hosts {
		if err := validateHost(&hosts[i]); err != nil {
			return nil, err
		}
		sorted[i] = &hosts[i]
	}
	slices.SortFunc(sorted, func(a, b *Host) int {
		if c := cmp.Compare(a.Free.MilliCPU, b.Free.MilliCPU); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Free.MemMB, b.Free.MemMB); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	x := &HostIndex{
		ids:         make([]model.HostID, 0, len(hosts)),
		clusters:    make([]string, 0, len(hosts)),
		labels:      make([]map[string]string, 0, len(hosts)),
		free:        make([]model.Resources, 0, len(hosts)),
		ports:       make([]int, 0, len(hosts)),
		schedulable: make([]bool, 0, len(hosts)),
		gpuHost:     make([]bool, 0, len(hosts)),
		hostPools:   make([]string, 0, len(hosts)),
		slotOf:      make(map[model.HostID]int32, len(hosts)),
		groups:      map[string]int32{},
		counts:      map[string]*instanceCounts{},
		scale:       scale{cpu: 1, mem: 1},
	}
	for _, h := range sorted {
		x.scale.cpu = max(x.scale.cpu, float64(h.Free.MilliCPU))
		x.scale.mem = max(x.scale.mem, float64(h.Free.MemMB))
	}
	for _, h := range sorted {
		if _, dup := x.slotOf[h.ID]; dup {
			return nil, fmt.Errorf("%w: duplicate host %q", ErrInvalidHost, h.ID)
		}
		x.appendHost(h)
	}
	return x, nil
}

func validateHost(h *Host) error {
	if h.ID == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidHost)
	}
	if i := h.Free.Invalid(); i >= 0 {
		return fmt.Errorf("%w: host %q free.%s is %s", ErrInvalidHost, h.ID, model.ResourceKinds[i], model.FormatAmount(i, h.Free.Get(i)))
	}
	if h.Ports < 0 {
		return fmt.Errorf("%w: host %q ports is negative", ErrInvalidHost, h.ID)
	}
	for g, n := range h.Instances {
		if n < 0 {
			return fmt.Errorf("%w: host %q instances[%q] is negative", ErrInvalidHost, h.ID, g)
		}
	}
	return nil
}

func (x *HostIndex) appendHost(h *Host) {
	slot := int32(len(x.ids))
	x.ids = append(x.ids, h.ID)
	x.clusters = append(x.clusters, h.Cluster)
	x.labels = append(x.labels, h.Labels)
	x.free = append(x.free, h.Free)
	x.ports = append(x.ports, h.Ports)
	x.schedulable = append(x.schedulable, h.Schedulable)
	x.gpuHost = append(x.gpuHost, h.GPUHost || h.Free.GPU > 0)
	x.hostPools = append(x.hostPools, h.HostPool)
	x.memberships = append(x.memberships, nil)
	x.slotOf[h.ID] = slot
	x.setInstances(slot, h.Instances)
}

// setInstances replaces the instance counts of slot with those given.
func (x *HostIndex) setInstances(slot int32, inst map[string]int) {
	for name, ic := range x.counts {
		if n, ok := ic.perHost[slot]; ok && inst[name] == 0 {
			x.addCount(ic, slot, -n)
		}
	}
	for name, n := range inst {
		ic := x.countsOf(name)
		x.addCount(ic, slot, n-ic.perHost[slot])
	}
}

// Len is the number of hosts the index holds, schedulable or not.
func (x *HostIndex) Len() int { return len(x.ids) }

// Host returns the current view of one host.
func (x *HostIndex) Host(id model.HostID) (Host, bool) {
	slot, ok := x.slotOf[id]
	if !ok {
		return Host{}, false
	}
	h := Host{
		ID: id, Cluster: x.clusters[slot], Free: x.free[slot], Labels: x.labels[slot],
		Ports: x.ports[slot], Schedulable: x.schedulable[slot], GPUHost: x.gpuHost[slot],
		HostPool: x.hostPools[slot],
	}
	for name, ic := range x.counts {
		if n := ic.perHost[slot]; n > 0 {
			if h.Instances == nil {
				h.Instances = map[string]int{}
			}
			h.Instances[name] = n
		}
	}
	return h, true
}

// UpsertHost adds a host or replaces what the index knows of it. Labels,
// host pool, schedulability or GPU changes drop the cached feasibility groups (they are
// rebuilt on next use); a change of free amounts updates them in place.
func (x *HostIndex) UpsertHost(h Host) error {
	if err := validateHost(&h); err != nil {
		return err
	}
	slot, ok := x.slotOf[h.ID]
	if !ok {
		x.appendHost(&h)
		x.dropGroups()
		return nil
	}
	gpu := h.GPUHost || h.Free.GPU > 0
	if x.schedulable[slot] != h.Schedulable || x.gpuHost[slot] != gpu || x.hostPools[slot] != h.HostPool ||
		x.clusters[slot] != h.Cluster || !sameLabels(x.labels[slot], h.Labels) {
		x.schedulable[slot] = h.Schedulable
		x.gpuHost[slot] = gpu
		x.hostPools[slot] = h.HostPool
		x.relabel(slot, h.Labels)
		x.dropGroups()
	}
	x.clusters[slot] = h.Cluster
	x.free[slot] = h.Free
	x.ports[slot] = h.Ports
	x.setInstances(slot, h.Instances)
	x.refresh(slot)
	return nil
}

// relabel changes the labels of slot, moving its instance counts between
// label values.
func (x *HostIndex) relabel(slot int32, labels map[string]string) {
	for _, ic := range x.counts {
		if n := ic.perHost[slot]; n != 0 {
			x.addCount(ic, slot, -n)
			defer x.addCount(ic, slot, n)
		}
	}
	x.labels[slot] = labels
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// RemoveHost closes a host to new work and forgets what was free on it. Its
// slot stays, so a host that comes back reuses it.
func (x *HostIndex) RemoveHost(id model.HostID) error {
	slot, ok := x.slotOf[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownHost, id)
	}
	if x.schedulable[slot] {
		x.schedulable[slot] = false
		x.dropGroups()
	}
	x.free[slot] = model.Resources{}
	x.ports[slot] = 0
	x.setInstances(slot, nil)
	return nil
}

// Release gives back to a host what task t held there, when the task ended
// or its placement was abandoned.
func (x *HostIndex) Release(id model.HostID, t Task) error {
	slot, ok := x.slotOf[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownHost, id)
	}
	x.free[slot] = x.free[slot].Add(t.Resources)
	x.ports[slot] += t.Ports
	if t.hasLimits() {
		ic := x.countsOf(t.countGroup())
		if ic.perHost[slot] > 0 {
			x.addCount(ic, slot, -1)
		}
	}
	x.refresh(slot)
	return nil
}

// take deducts n instances of need from slot (the same sequential
// subtraction Commit checks with).
func (x *HostIndex) take(slot int32, need model.Resources, ports, n int, ic *instanceCounts) {
	f := x.free[slot]
	for range n {
		f = f.Sub(need)
	}
	x.free[slot] = f
	x.ports[slot] -= n * ports
	if ic != nil {
		x.addCount(ic, slot, n)
	}
	x.refresh(slot)
}

// give undoes take.
func (x *HostIndex) give(slot int32, need model.Resources, ports, n int, ic *instanceCounts) {
	f := x.free[slot]
	for range n {
		f = f.Add(need)
	}
	x.free[slot] = f
	x.ports[slot] += n * ports
	if ic != nil {
		x.addCount(ic, slot, -n)
	}
	x.refresh(slot)
}

// refresh pushes the free amounts of slot into every group tree holding it.
func (x *HostIndex) refresh(slot int32) {
	if len(x.memberships[slot]) == 0 {
		return
	}
	v := x.scale.amounts(x.free[slot], x.ports[slot])
	for _, m := range x.memberships[slot] {
		x.groupList[m.group].tree.set(int(m.pos), v)
	}
}

func (x *HostIndex) countsOf(name string) *instanceCounts {
	ic := x.counts[name]
	if ic == nil {
		ic = &instanceCounts{perHost: map[int32]int{}}
		x.counts[name] = ic
	}
	return ic
}

func (x *HostIndex) addCount(ic *instanceCounts, slot int32, d int) {
	if d == 0 {
		return
	}
	n := ic.perHost[slot] + d
	if n <= 0 {
		delete(ic.perHost, slot)
	} else {
		ic.perHost[slot] = n
	}
	for key, byValue := range ic.perValue {
		byValue[x.labels[slot][key]] += d
	}
}

// valueCounts returns the instances per value of label key, starting to
// keep them for key if it is new.
func (x *HostIndex) valueCounts(ic *instanceCounts, key string) map[string]int {
	if m, ok := ic.perValue[key]; ok {
		return m
	}
	m := map[string]int{}
	for slot, n := range ic.perHost {
		m[x.labels[slot][key]] += n
	}
	if ic.perValue == nil {
		ic.perValue = map[string]map[string]int{}
	}
	ic.perValue[key] = m
	return m
}

// Clone returns an independent copy, for a worker to place against while
// the original keeps taking commits.
func (x *HostIndex) Clone() *HostIndex {
	c := &HostIndex{
		ids:         slices.Clone(x.ids),
		clusters:    slices.Clone(x.clusters),
		labels:      slices.Clone(x.labels),
		free:        slices.Clone(x.free),
		ports:       slices.Clone(x.ports),
		schedulable: slices.Clone(x.schedulable),
		gpuHost:     slices.Clone(x.gpuHost),
		hostPools:   slices.Clone(x.hostPools),
		slotOf:      maps.Clone(x.slotOf),
		scale:       x.scale,
		groups:      maps.Clone(x.groups),
		groupList:   make([]*group, len(x.groupList)),
		memberships: make([][]membership, len(x.memberships)),
		counts:      make(map[string]*instanceCounts, len(x.counts)),
	}
	for i, g := range x.groupList {
		c.groupList[i] = &group{slots: g.slots, tree: g.tree.clone()}
	}
	for i, ms := range x.memberships {
		c.memberships[i] = slices.Clone(ms)
	}
	for name, ic := range x.counts {
		cc := &instanceCounts{perHost: make(map[int32]int, len(ic.perHost))}
		for s, n := range ic.perHost {
			cc.perHost[s] = n
		}
		if ic.perValue != nil {
			cc.perValue = make(map[string]map[string]int, len(ic.perValue))
			for k, m := range ic.perValue {
				mm := make(map[string]int, len(m))
				for v, n := range m {
					mm[v] = n
				}
				cc.perValue[k] = mm
			}
		}
		c.counts[name] = cc
	}
	return c
}
