package core

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// ErrUnknownCluster: no plugin of the region has that cluster.
var ErrUnknownCluster = errors.New("unknown cluster")

// placementPref is where an instance's next run should go: its own host
// (an in-place update), or some clusters (a cluster preference, or, with
// must, a migration moving it). Without must it is tried for one placement
// pass, then any allowed host; with must it stays until the run is placed.
type placementPref struct {
	Host     model.HostID
	clusters []string
	must     bool
}

// clusterBook is what the engine knows of its clusters beyond their hosts:
// which are drained (closed to new placements). The loop reads it under
// the engine's lock.
type clusterBook struct {
	Drained map[string]bool
}

// clusterPolicy is the policy that steers the job's placements: its own,
// else its pool's or the nearest ancestor pool's; nil when none says
// anything.
func (b *clusterBook) clusterPolicy(e *State, je *Job) *model.ClusterPolicy {
	if p := je.Job.Spec.Clusters; !p.IsZero() {
		return p
	}
	return b.poolClusterPolicy(e, je.Job.Spec.Pool)
}

// poolClusterPolicy is the policy of a pool, else of its nearest ancestor
// that has one.
func (b *clusterBook) poolClusterPolicy(e *State, path string) *model.ClusterPolicy {
	if path == "" {
		path = RootPool
	}
	for {
		if p := e.Pools.ByPath[path]; p != nil && !p.Clusters.IsZero() {
			return p.Clusters
		}
		parent, ok := entitlement.ParentPath(path)
		if !ok {
			return nil
		}
		path = parent
	}
}

// preferClusters gives a task that was just queued its job's preferred
// clusters for its first placement pass, unless something else already
// says where it goes.
func (b *clusterBook) preferClusters(e *State, je *Job, t *model.TaskRuntime) {
	if _, ok := je.prefer[t.ID.Instance]; ok {
		return
	}
	p := b.clusterPolicy(e, je)
	if p == nil || len(p.Prefer) == 0 {
		return
	}
	if je.prefer == nil {
		je.prefer = map[uint32]placementPref{}
	}
	je.prefer[t.ID.Instance] = placementPref{clusters: model.ClusterNames(p.Prefer)}
}

// clusterFilters fills the cluster fields of a placement task: the avoided
// clusters of its job's policy (one slice per job and pass, in avoid) and
// the clusters its instance is steered to.
func (b *clusterBook) clusterFilters(e *State, je *Job, pt *placement.Task, t *model.TaskRuntime, avoid map[*Job][]string) {
	a, ok := avoid[je]
	if !ok {
		if p := b.clusterPolicy(e, je); p != nil {
			a = model.ClusterNames(p.Avoid)
		}
		avoid[je] = a
	}
	pt.AvoidClusters = a
	if p, ok := je.prefer[t.ID.Instance]; ok && len(p.clusters) > 0 {
		pt.Clusters = p.clusters
	}
}

// clusterKinds is every cluster of the region with its kind, from the
// plugins and the hosts they reported.
func (b *clusterBook) clusterKinds(e *State) map[string]string {
	out := map[string]string{}
	for name := range e.Plugins {
		out[name] = ""
	}
	for _, v := range e.Settings.Hosts.Snapshot() {
		if _, ok := out[v.Cluster]; ok && v.Kind != "" {
			out[v.Cluster] = v.Kind
		}
	}
	return out
}

// ResolveCluster checks a cluster reference ("dc1" or "mesos:dc1")
// against the region's clusters and returns the cluster's name.
func (b *clusterBook) Resolve(e *State, ref string) (string, error) {
	kinds := b.clusterKinds(e)
	name := model.ClusterName(ref)
	kind, ok := kinds[name]
	if !ok {
		known := make([]string, 0, len(kinds))
		for n := range kinds {
			known = append(known, n)
		}
		sort.Strings(known)
		return "", fmt.Errorf("cluster %q: the region's clusters are %s: %w", ref, strings.Join(known, ", "), ErrUnknownCluster)
	}
	if i := strings.LastIndexByte(ref, ':'); i >= 0 && kind != "" && !kindMatches(ref[:i], kind) {
		return "", fmt.Errorf("cluster %q: %s is a %s cluster: %w", ref, name, kind, ErrUnknownCluster)
	}
	return name, nil
}

// kindMatches accepts the usual short names of host manager kinds.
func kindMatches(given, kind string) bool {
	return given == kind || (given == "k8s" && kind == "kubernetes") || (given == "kubernetes" && kind == "k8s")
}

// ClusterDrained reports whether new placements on cluster are stopped.
func (b *clusterBook) IsDrained(cluster string) bool { return b.Drained[cluster] }

// ClusterView is one cluster of the region and what still runs there.
type ClusterView struct {
	Name      string
	Kind      string
	Drained   bool
	Hosts     int
	Capacity  model.Resources
	Allocated model.Resources
	// Tasks hold a host there (placed, launching, running).
	Tasks int
	// Jobs and Pools: what each still runs there, most tasks first.
	Jobs  []ClusterUsage
	Pools []ClusterUsage
}

// ClusterUsage is what one job or pool runs on a cluster.
type ClusterUsage struct {
	Name      string
	Tasks     int
	Allocated model.Resources
}

// Views describes every cluster: its hosts, and the tasks, jobs and pools
// that hold a host there.
func (b *clusterBook) Views(e *State) map[string]*ClusterView {
	out := map[string]*ClusterView{}
	for name, kind := range b.clusterKinds(e) {
		out[name] = &ClusterView{Name: name, Kind: kind, Drained: b.Drained[name]}
	}
	for _, v := range e.Settings.Hosts.Snapshot() {
		c := out[v.Cluster]
		if c == nil || v.Hostname == "" {
			continue
		}
		c.Hosts++
		c.Capacity = c.Capacity.Add(v.Capacity)
		c.Allocated = c.Allocated.Add(v.Allocated)
	}
	var u clusterUsage
	for _, je := range e.Jobs {
		u.addJob(je, out)
	}
	u.fill(out)
	return out
}

// clusterUsage sums what jobs and pools hold on each cluster.
type clusterUsage struct {
	jobs, pools map[usageKey]*ClusterUsage
}

type usageKey struct{ cluster, name string }

// addJob counts the job's tasks that hold a host on a cluster of out.
func (u *clusterUsage) addJob(je *Job, out map[string]*ClusterView) {
	pool := je.Job.Spec.Pool
	if pool == "" {
		pool = RootPool
	}
	for _, t := range je.Tasks {
		if t == nil || IsCold(t) || !t.State.HoldsResources() || out[t.Cluster] == nil {
			continue
		}
		r := je.TaskResources(t)
		out[t.Cluster].Tasks++
		u.jobs = addUsage(u.jobs, usageKey{t.Cluster, string(je.Job.ID)}, r)
		u.pools = addUsage(u.pools, usageKey{t.Cluster, pool}, r)
	}
}

func addUsage(m map[usageKey]*ClusterUsage, k usageKey, r model.Resources) map[usageKey]*ClusterUsage {
	if m == nil {
		m = map[usageKey]*ClusterUsage{}
	}
	c := m[k]
	if c == nil {
		c = &ClusterUsage{Name: k.name}
		m[k] = c
	}
	c.Tasks++
	c.Allocated = c.Allocated.Add(r)
	return m
}

// fill lists each cluster's jobs and pools, most tasks first.
func (u *clusterUsage) fill(out map[string]*ClusterView) {
	for k, c := range u.jobs {
		out[k.cluster].Jobs = append(out[k.cluster].Jobs, *c)
	}
	for k, c := range u.pools {
		out[k.cluster].Pools = append(out[k.cluster].Pools, *c)
	}
	byTasks := func(a, b ClusterUsage) int {
		if a.Tasks != b.Tasks {
			return b.Tasks - a.Tasks
		}
		return strings.Compare(a.Name, b.Name)
	}
	for _, c := range out {
		slices.SortFunc(c.Jobs, byTasks)
		slices.SortFunc(c.Pools, byTasks)
	}
}
