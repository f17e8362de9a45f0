package jobmgr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/store/kinds"

	"github.com/peloton-federated/peloton/shard/model"
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

// drainedClustersKey is where the drained clusters are stored.
const drainedClustersKey = "jobmgr/drained-clusters"

// clusterShell is the clusters' shell (the core's clusterBook holds the
// drained ones): the drained clusters loaded at recovery, the command that
// drains or undrains a cluster, and the cluster policies of jobs and
// pools that migrations set.
type clusterShell struct{ e *Engine }

// load reads the drained clusters from the store.
func (s *clusterShell) load(ctx context.Context) error {
	b, err := kinds.GetValue(ctx, s.e.cfg.Store, drainedClustersKey)
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
	s.e.hold()
	defer s.e.mu.Unlock()
	s.e.c.Clusters.Drained = map[string]bool{}
	for _, n := range names {
		s.e.c.Clusters.Drained[n] = true
	}
	s.e.c.Index.Drop() // hosts of drained clusters are closed to placement
	return nil
}

// setDrained stops (drained) or resumes new placements on every
// host of a cluster. What runs there goes on until moved. Stored, so it
// survives restarts.
func (s *clusterShell) setDrained(ctx context.Context, ref string, drained bool) (*core.ClusterView, error) {
	s.e.poolsTurn.Lock()
	defer s.e.poolsTurn.Unlock()
	s.e.lock()
	name, err := s.e.c.Clusters.Resolve(&s.e.c, ref)
	if err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	next := map[string]bool{}
	for n := range s.e.c.Clusters.Drained {
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
	s.e.mu.Unlock()
	if err := kinds.PutValue(ctx, s.e.cfg.Store, drainedClustersKey, b); err != nil {
		return nil, fmt.Errorf("store drained clusters: %w", err)
	}
	s.e.lock()
	defer s.e.mu.Unlock()
	if s.e.c.Clusters.Drained[name] != drained {
		s.e.c.Log.Info("cluster drain changed", "cluster", name, "drained", drained)
	}
	s.e.c.Clusters.Drained = next
	s.e.c.Index.Drop()
	s.e.wake()
	v := s.e.c.Clusters.Views(&s.e.c)[name]
	return v, nil
}

// ListClusters returns the region's clusters by name.
func (r Reads) ListClusters() []*core.ClusterView {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	views := e.c.Clusters.Views(&e.c)
	out := make([]*core.ClusterView, 0, len(views))
	for _, v := range views {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *core.ClusterView) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// GetCluster returns one cluster ("dc1" or "mesos:dc1").
func (r Reads) GetCluster(ref string) (*core.ClusterView, error) {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	name, err := e.c.Clusters.Resolve(&e.c, ref)
	if err != nil {
		return nil, err
	}
	return e.c.Clusters.Views(&e.c)[name], nil
}

// setJobPolicy stores the job's spec with another cluster policy as its
// next config version, as an update would, but restarts nothing: running
// instances keep their config and stay where they are, new runs and
// placements follow the policy. The caller holds updateMu, not mu.
func (s *clusterShell) setJobPolicy(ctx context.Context, id model.JobID, p *model.ClusterPolicy) error {
	s.e.lock()
	je := s.e.c.Jobs[id]
	if je == nil {
		s.e.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	spec := je.Job.Spec
	spec.Clusters = p.Clone()
	from := max(je.Job.ConfigVersion, 1)
	s.e.mu.Unlock()

	to, err := s.e.updates.putNextConfig(ctx, id, from, &spec)
	if err != nil {
		return err
	}
	s.e.lock()
	if s.e.c.Jobs[id] != je || max(je.Job.ConfigVersion, 1) != from {
		s.e.mu.Unlock()
		return fmt.Errorf("job %s changed while its cluster policy was set: %w", id, core.ErrMigrationConflict)
	}
	old := je.Job.Spec
	je.Job.Spec, je.Job.ConfigVersion = spec, to
	if je.Configs == nil {
		je.Configs = map[uint64]*core.ConfigView{}
	}
	je.Configs[from] = core.NewConfigView(&old)
	je.Configs[to] = core.NewConfigView(&je.Job.Spec)
	if err := s.e.storeJobLocked(ctx, je); err != nil {
		return fmt.Errorf("store job %s: %w", id, err)
	}
	return nil
}

// setPoolPolicy replaces a pool's cluster policy (the root's too).
func (s *clusterShell) setPoolPolicy(ctx context.Context, path string, p *model.ClusterPolicy) error {
	var cp model.Pool
	err := s.e.pools.change(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		old := s.e.c.Pools.ByPath[path]
		if old == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", path, core.ErrNotFound)
		}
		next := clonePools(s.e.c.Pools.ByPath)
		cp = *old
		cp.Clusters = p.Clone()
		next[path] = &cp
		return next, s.e.c.Pools.Tree, nil
	}, func(ctx context.Context) error { return s.e.pools.store(ctx, &cp) })
	if err == nil {
		s.e.wake()
	}
	return err
}
