package jobmgr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store"
)

// Cluster policies steer new placements among the clusters of the region.
// A job's policy (its spec's Clusters) overrides its pool's, and a pool's
// applies to its child pools' jobs too. Avoided clusters are a hard filter
// in placement; preferred ones are tried for one placement pass, as an
// in-place update's own host is, and any cluster not avoided after that.
// A migration pins the instances it moves to its target cluster the same
// way, without the fallback.

// ErrUnknownCluster: no plugin of the region has that cluster.
var ErrUnknownCluster = errors.New("unknown cluster")

// placementPref is where an instance's next run should go: its own host
// (an in-place update), or some clusters (a cluster preference, or, with
// must, a migration moving it). Without must it is tried for one placement
// pass, then any allowed host; with must it stays until the run is placed.
type placementPref struct {
	host     model.HostID
	clusters []string
	must     bool
}

// clusterBook is what the engine knows of its clusters beyond their hosts:
// which are drained (closed to new placements). The loop reads it under
// the engine's lock.
type clusterBook struct {
	drained map[string]bool
}

// drainedClustersKey is where the drained clusters are stored.
const drainedClustersKey = "jobmgr/drained-clusters"

// clusterPolicy is the policy that steers the job's placements: its own,
// else its pool's or the nearest ancestor pool's; nil when none says
// anything.
func (e *Engine) clusterPolicy(je *jobEntry) *model.ClusterPolicy {
	if p := je.job.Spec.Clusters; !p.IsZero() {
		return p
	}
	return e.poolClusterPolicy(je.job.Spec.Pool)
}

// poolClusterPolicy is the policy of a pool, else of its nearest ancestor
// that has one.
func (e *Engine) poolClusterPolicy(path string) *model.ClusterPolicy {
	if path == "" {
		path = RootPool
	}
	for {
		if p := e.pools[path]; p != nil && !p.Clusters.IsZero() {
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
func (e *Engine) preferClusters(je *jobEntry, t *model.TaskRuntime) {
	if _, ok := je.prefer[t.ID.Instance]; ok {
		return
	}
	p := e.clusterPolicy(je)
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
func (e *Engine) clusterFilters(je *jobEntry, pt *placement.Task, t *model.TaskRuntime, avoid map[*jobEntry][]string) {
	a, ok := avoid[je]
	if !ok {
		if p := e.clusterPolicy(je); p != nil {
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
func (e *Engine) clusterKinds() map[string]string {
	out := map[string]string{}
	for name := range e.plugins {
		out[name] = ""
	}
	for _, v := range e.cfg.Hosts.Snapshot() {
		if _, ok := out[v.Cluster]; ok && v.Kind != "" {
			out[v.Cluster] = v.Kind
		}
	}
	return out
}

// resolveCluster checks a cluster reference ("dc1" or "mesos:dc1")
// against the region's clusters and returns the cluster's name.
func (e *Engine) resolveCluster(ref string) (string, error) {
	kinds := e.clusterKinds()
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

// clusterDrained reports whether new placements on cluster are stopped.
func (e *Engine) clusterDrained(cluster string) bool { return e.clusters.drained[cluster] }

// loadClusters reads the drained clusters from the store.
func (e *Engine) loadClusters(ctx context.Context) error {
	b, err := e.cfg.Store.GetValue(ctx, drainedClustersKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drained clusters: %w", err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("drained clusters: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clusters.drained = map[string]bool{}
	for _, n := range names {
		e.clusters.drained[n] = true
	}
	e.index = nil // hosts of drained clusters are closed to placement
	return nil
}

// setClusterDrained stops (drained) or resumes new placements on every
// host of a cluster. What runs there goes on until moved. Stored, so it
// survives restarts.
func (e *Engine) setClusterDrained(ctx context.Context, ref string, drained bool) (*ClusterView, error) {
	e.poolsTurn.Lock()
	defer e.poolsTurn.Unlock()
	e.lock()
	name, err := e.resolveCluster(ref)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	next := map[string]bool{}
	for n := range e.clusters.drained {
		next[n] = true
	}
	if drained {
		next[name] = true
	} else {
		delete(next, name)
	}
	names := make([]string, 0, len(next))
	for n := range next {
		names = append(names, n)
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	e.mu.Unlock()
	if err := e.cfg.Store.PutValue(ctx, drainedClustersKey, b); err != nil {
		return nil, fmt.Errorf("store drained clusters: %w", err)
	}
	e.lock()
	defer e.mu.Unlock()
	if e.clusters.drained[name] != drained {
		e.log.Info("cluster drain changed", "cluster", name, "drained", drained)
	}
	e.clusters.drained = next
	e.index = nil
	e.wake()
	v := e.clusterViews()[name]
	return v, nil
}

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

// ListClusters returns the region's clusters by name.
func (r Reads) ListClusters() []*ClusterView {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	views := e.clusterViews()
	out := make([]*ClusterView, 0, len(views))
	for _, v := range views {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *ClusterView) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// GetCluster returns one cluster ("dc1" or "mesos:dc1").
func (r Reads) GetCluster(ref string) (*ClusterView, error) {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	name, err := e.resolveCluster(ref)
	if err != nil {
		return nil, err
	}
	return e.clusterViews()[name], nil
}

// clusterViews describes every cluster; the caller holds the lock.
func (e *Engine) clusterViews() map[string]*ClusterView {
	out := map[string]*ClusterView{}
	for name, kind := range e.clusterKinds() {
		out[name] = &ClusterView{Name: name, Kind: kind, Drained: e.clusters.drained[name]}
	}
	for _, v := range e.cfg.Hosts.Snapshot() {
		c := out[v.Cluster]
		if c == nil || v.Hostname == "" {
			continue
		}
		c.Hosts++
		c.Capacity = c.Capacity.Add(v.Capacity)
		c.Allocated = c.Allocated.Add(v.Allocated)
	}
	type key struct{ cluster, name string }
	jobs, pools := map[key]*ClusterUsage{}, map[key]*ClusterUsage{}
	add := func(m map[key]*ClusterUsage, k key, r model.Resources) {
		u := m[k]
		if u == nil {
			u = &ClusterUsage{Name: k.name}
			m[k] = u
		}
		u.Tasks++
		u.Allocated = u.Allocated.Add(r)
	}
	for _, je := range e.jobs {
		pool := je.job.Spec.Pool
		if pool == "" {
			pool = RootPool
		}
		for _, t := range je.tasks {
			if t == nil || isCold(t) || !t.State.HoldsResources() || out[t.Cluster] == nil {
				continue
			}
			r := je.taskResources(t)
			out[t.Cluster].Tasks++
			add(jobs, key{t.Cluster, string(je.job.ID)}, r)
			add(pools, key{t.Cluster, pool}, r)
		}
	}
	for k, u := range jobs {
		out[k.cluster].Jobs = append(out[k.cluster].Jobs, *u)
	}
	for k, u := range pools {
		out[k.cluster].Pools = append(out[k.cluster].Pools, *u)
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
	return out
}

// setJobClusters stores the job's spec with another cluster policy as its
// next config version, as an update would, but restarts nothing: running
// instances keep their config and stay where they are, new runs and
// placements follow the policy. The caller holds updateMu, not mu.
func (e *Engine) setJobClusters(ctx context.Context, id model.JobID, p *model.ClusterPolicy) error {
	e.lock()
	je := e.jobs[id]
	if je == nil {
		e.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	spec := je.job.Spec
	spec.Clusters = p.Clone()
	from := max(je.job.ConfigVersion, 1)
	e.mu.Unlock()

	to, err := e.putNextConfig(ctx, id, from, &spec)
	if err != nil {
		return err
	}
	e.lock()
	if e.jobs[id] != je || max(je.job.ConfigVersion, 1) != from {
		e.mu.Unlock()
		return fmt.Errorf("job %s changed while its cluster policy was set: %w", id, ErrMigrationConflict)
	}
	old := je.job.Spec
	je.job.Spec, je.job.ConfigVersion = spec, to
	if je.configs == nil {
		je.configs = map[uint64]*configView{}
	}
	je.configs[from] = newConfigView(&old)
	je.configs[to] = newConfigView(&je.job.Spec)
	if err := e.storeJobLocked(ctx, je); err != nil {
		return fmt.Errorf("store job %s: %w", id, err)
	}
	return nil
}

// setPoolClusters replaces a pool's cluster policy (the root's too).
func (e *Engine) setPoolClusters(ctx context.Context, path string, p *model.ClusterPolicy) error {
	var cp model.Pool
	err := e.changePools(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		old := e.pools[path]
		if old == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", path, ErrNotFound)
		}
		next := clonePools(e.pools)
		cp = *old
		cp.Clusters = p.Clone()
		next[path] = &cp
		return next, e.tree, nil
	}, func(ctx context.Context) error { return e.storePool(ctx, &cp) })
	if err == nil {
		e.wake()
	}
	return err
}
