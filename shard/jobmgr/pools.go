package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store"
)

// RootPool is the path of the root pool, which stands for the whole cluster.
const RootPool = "/"

// Pool errors, besides the entitlement package's validation errors.
var (
	ErrPoolExists   = errors.New("pool already exists")
	ErrPoolInUse    = errors.New("pool in use")
	ErrRootPool     = errors.New("the root pool is the cluster")
	ErrNotLeafPool  = errors.New("not a leaf pool")
	ErrPoolConflict = errors.New("pool changed concurrently")
)

func unlimited() model.Resources {
	inf := model.Unlimited
	return model.Resources{MilliCPU: inf, MemMB: inf, DiskMB: inf, GPU: inf}
}

func rootPool() *model.Pool {
	return &model.Pool{Path: RootPool, Limit: unlimited(), Share: model.EqualShares(1)}
}

// readPools reads the pool tree, creating the root pool on first start.
func (e *Engine) readPools(ctx context.Context) (map[string]*model.Pool, error) {
	pools, err := e.cfg.Store.ListPools(ctx)
	if err != nil {
		return nil, err
	}
	loaded := map[string]*model.Pool{}
	for _, p := range pools {
		loaded[p.Path] = p
	}
	if loaded[RootPool] == nil {
		root := rootPool()
		root.CreateTime = e.cfg.Clock.Now()
		if err := e.cfg.Store.CreatePool(ctx, root); err != nil {
			return nil, fmt.Errorf("create root pool: %w", err)
		}
		loaded[RootPool] = root
	}
	return loaded, nil
}

// installPools makes pools read from the store the engine's; callers hold
// e.mu.
func (e *Engine) installPools(loaded map[string]*model.Pool) error {
	e.poolsMu.Lock()
	e.setPoolsLocked(loaded)
	e.poolsMu.Unlock()
	tree, err := buildTree(e.pools)
	if err != nil {
		// Stored pools were valid when written; report but keep going with
		// what can be built.
		return fmt.Errorf("stored pool tree is invalid: %w", err)
	}
	e.setTree(tree)
	return nil
}

// rootReservation stands for "everything": the root pool is the cluster,
// its size is the capacity of the moment, and it reserves all of it. (The
// entitlement core wants a finite number.)
const rootReservation int64 = 1e15

// PoolShare is this region's part of a federation-wide pool: the global
// pass splits each pool's reservation and limit among the regions.
type PoolShare struct {
	Reservation, Limit model.Resources
}

// poolSpecs turns pools into entitlement specs, sorted by path; a pool with
// a share from the global pass uses the share instead of its own amounts.
func poolSpecs(pools map[string]*model.Pool, shares map[string]PoolShare) []entitlement.PoolSpec {
	specs := make([]entitlement.PoolSpec, 0, len(pools))
	for path, p := range pools {
		s := entitlement.PoolSpec{Path: path, Reservation: p.Reservation, Limit: p.Limit, Share: p.Share}
		if sh, ok := shares[path]; ok && path != RootPool {
			s.Reservation, s.Limit = sh.Reservation, sh.Limit.Max(sh.Reservation)
		}
		if path == RootPool {
			s.Reservation = model.Resources{MilliCPU: rootReservation, MemMB: rootReservation, DiskMB: rootReservation, GPU: rootReservation}
			s.Limit = unlimited()
		}
		specs = append(specs, s)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Path < specs[j].Path })
	return specs
}

// buildTree builds the tree the operator defined: validation of pool
// changes is always against the pools' own amounts.
func buildTree(pools map[string]*model.Pool) (*entitlement.Tree, error) {
	return entitlement.NewTree(poolSpecs(pools, nil))
}

// effectiveTree is the tree the resource manager runs on: with this
// region's shares when the federation gave some and they form a valid tree.
func (e *Engine) effectiveTree(defined *entitlement.Tree) *entitlement.Tree {
	if len(e.shares) == 0 {
		return defined
	}
	t, err := entitlement.NewTree(poolSpecs(e.pools, e.shares))
	if err != nil {
		e.log.Warn("region shares of pools do not form a valid tree; using the pools as defined", "err", err)
		return defined
	}
	return t
}

// SetPoolShares installs this region's shares of federation-wide pools
// (nil: none, the pools as defined apply).
func (e *Engine) SetPoolShares(shares map[string]PoolShare) {
	e.lock()
	defer e.mu.Unlock()
	if sameShares(e.shares, shares) {
		return
	}
	e.shares = shares
	e.setTree(e.tree)
}

func sameShares(a, b map[string]PoolShare) bool {
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

// setPoolsLocked installs the pool set and indexes which pools have
// pools under them, so that checking a job's pool is a lookup, not a scan of
// every pool (each create checks one); e.poolsMu is held for writing.
func (e *Engine) setPoolsLocked(pools map[string]*model.Pool) {
	e.pools = pools
	parents := make(map[string]bool, len(pools))
	for p := range pools {
		for parent, ok := entitlement.ParentPath(p); ok && !parents[parent]; parent, ok = entitlement.ParentPath(parent) {
			parents[parent] = true
		}
	}
	e.poolParents = parents
}

// hasChildrenLocked reports whether any pool sits under path; e.poolsMu
// is held.
func (e *Engine) hasChildrenLocked(path string) bool { return e.poolParents[path] }

// activeJobsIn counts unfinished jobs in a pool.
func (e *Engine) activeJobsIn(path string) int {
	n := 0
	for _, je := range e.jobs {
		if je.job.Spec.Pool == path && !je.job.Status.State.IsTerminal() {
			n++
		}
	}
	return n
}

// changePools carries out a change of the pool tree: plan, under the
// engine's lock, returns the next pools and their tree (or why not);
// write stores the change with no lock held; then the next pools are the
// engine's. Changes of pools take turns (poolsTurn), so none is planned
// on pools another is about to replace.
func (e *Engine) changePools(ctx context.Context, plan func() (map[string]*model.Pool, *entitlement.Tree, error), write func(context.Context) error) error {
	e.poolsTurn.Lock()
	defer e.poolsTurn.Unlock()
	e.lock()
	next, tree, err := plan()
	e.mu.Unlock()
	if err != nil {
		return err
	}
	if err := write(ctx); err != nil {
		return err
	}
	e.lock()
	defer e.mu.Unlock()
	e.poolsMu.Lock()
	e.setPoolsLocked(next)
	e.poolsMu.Unlock()
	e.setTree(tree)
	return nil
}

// createPool adds a pool under an existing parent that has no unfinished
// jobs of its own. Every violation of the tree's rules is reported.
func (e *Engine) createPool(ctx context.Context, p model.Pool) (*model.Pool, error) {
	cp := p
	err := e.changePools(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		if e.pools[p.Path] != nil {
			return nil, nil, fmt.Errorf("pool %s: %w", p.Path, ErrPoolExists)
		}
		if parent, ok := entitlement.ParentPath(p.Path); ok && e.pools[parent] != nil {
			if n := e.activeJobsIn(parent); n > 0 {
				return nil, nil, fmt.Errorf("pool %s: parent %s has %d unfinished jobs; jobs run only in leaf pools: %w", p.Path, parent, n, ErrPoolInUse)
			}
		}
		next := clonePools(e.pools)
		cp.CreateTime = e.cfg.Clock.Now()
		next[p.Path] = &cp
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error {
		if err := e.cfg.Store.CreatePool(ctx, &cp); err != nil {
			return fmt.Errorf("store pool: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.log.Info("pool created", "pool", p.Path)
	out := cp
	return &out, nil
}

// updatePool replaces a pool's reservation, limit, share and host pools.
func (e *Engine) updatePool(ctx context.Context, p model.Pool) (*model.Pool, error) {
	if p.Path == RootPool {
		return nil, fmt.Errorf("pool /: its size is the cluster's capacity and cannot be set: %w", ErrRootPool)
	}
	var cp model.Pool
	err := e.changePools(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		old := e.pools[p.Path]
		if old == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", p.Path, ErrNotFound)
		}
		next := clonePools(e.pools)
		cp = *old
		cp.Reservation, cp.Limit, cp.Share, cp.HostPools, cp.Clusters = p.Reservation, p.Limit, p.Share, p.HostPools, p.Clusters.Clone()
		next[p.Path] = &cp
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error { return e.storePool(ctx, &cp) })
	if err != nil {
		return nil, err
	}
	e.log.Info("pool updated", "pool", p.Path)
	out := cp
	return &out, nil
}

// storePool writes a changed pool's record.
func (e *Engine) storePool(ctx context.Context, p *model.Pool) error {
	if err := e.cfg.Store.UpdatePool(ctx, p); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("pool %s: %w", p.Path, ErrPoolConflict)
		}
		return fmt.Errorf("store pool %s: %w", p.Path, err)
	}
	return nil
}

// deletePool removes a pool with no children and no unfinished jobs.
func (e *Engine) deletePool(ctx context.Context, path string) error {
	if path == RootPool {
		return fmt.Errorf("pool /: %w", ErrRootPool)
	}
	err := e.changePools(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		if e.pools[path] == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", path, ErrNotFound)
		}
		if e.hasChildrenLocked(path) {
			return nil, nil, fmt.Errorf("pool %s has child pools; delete them first: %w", path, ErrPoolInUse)
		}
		if n := e.activeJobsIn(path); n > 0 {
			return nil, nil, fmt.Errorf("pool %s has %d unfinished jobs: %w", path, n, ErrPoolInUse)
		}
		next := clonePools(e.pools)
		delete(next, path)
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error {
		if err := e.cfg.Store.DeletePool(ctx, path); err != nil {
			return fmt.Errorf("delete pool: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.log.Info("pool deleted", "pool", path)
	return nil
}

// CheckJobPool reports why a job may not go to a pool, or nil.
func (r Reads) CheckJobPool(path string) error {
	e := r.e
	e.poolsMu.RLock()
	defer e.poolsMu.RUnlock()
	if e.pools[path] == nil {
		return fmt.Errorf("pool %s: %w", path, ErrNotFound)
	}
	if e.hasChildrenLocked(path) {
		return fmt.Errorf("pool %s has child pools; jobs run only in leaf pools: %w", path, ErrNotLeafPool)
	}
	return nil
}

func clonePools(in map[string]*model.Pool) map[string]*model.Pool {
	out := make(map[string]*model.Pool, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	return out
}

// setTree installs a new pool tree in the resource manager. Pools with
// work are never removed or given children, so nothing should be dropped;
// if something is, it is reported.
func (e *Engine) setTree(tree *entitlement.Tree) {
	e.tree = tree
	for _, g := range e.sched.SetTree(e.effectiveTree(tree)) {
		e.log.Error("resource manager dropped a gang whose pool changed", "gang", g.ID, "pool", g.Pool)
	}
}

// PoolView is a pool with its place in the tree and its current figures.
type PoolView struct {
	Pool     model.Pool
	Children []string
	// Jobs counts unfinished jobs in the pool.
	Jobs                            int
	Demand, Allocation, Entitlement model.Resources
	// Reservation and Limit are what the shard runs the pool with: the
	// pool's own amounts, or this region's share of a federation-wide pool
	// (RegionShare).
	Reservation, Limit model.Resources
	RegionShare        bool
	// UncappedDemand is what the pool's gangs ask for before Demand's
	// caps (a reservation and limit bound Demand, which entitlement
	// divides): the answer to "how much does this team wait for".
	UncappedDemand model.Resources
	// Pending counts the tasks of the pool and its children waiting for a
	// host; Running those running.
	Pending, Running int
}

// ListPools returns every pool, ordered by path; with inUse, only the
// pools with demand or allocation, the others left out before any work
// is spent on them.
func (r Reads) ListPools(inUse bool) []PoolView {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	paths := make([]string, 0, len(e.pools))
	for p := range e.pools {
		if inUse {
			if d, a, _ := e.poolFigures(p); d.IsZero() && a.IsZero() {
				continue
			}
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tally := e.tallyPools()
	out := make([]PoolView, 0, len(paths))
	for _, p := range paths {
		out = append(out, e.poolView(p, tally[p]))
	}
	return out
}

// GetPool returns one pool.
func (r Reads) GetPool(path string) (PoolView, error) {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	if e.pools[path] == nil {
		return PoolView{}, fmt.Errorf("pool %s: %w", path, ErrNotFound)
	}
	return e.poolView(path, e.tallyPools()[path]), nil
}

// poolTally is what the unfinished jobs of a pool hold: jobs counts the
// pool's own, pending and running its tasks and its children's.
type poolTally struct{ jobs, pending, running int }

// tallyPools counts the unfinished jobs of each pool and the tasks of
// each pool's subtree waiting for a host and running, in one pass over the
// jobs; e.mu is held.
func (e *Engine) tallyPools() map[string]poolTally {
	own := map[string]poolTally{}
	for _, je := range e.jobs {
		if je.job.Status.State.IsTerminal() {
			continue
		}
		c := &je.counts
		t := own[je.job.Spec.Pool]
		t.jobs++
		t.pending += int(c[model.TaskInitialized] + c[model.TaskPending] + c[model.TaskReady] + c[model.TaskPlacing])
		t.running += int(c[model.TaskRunning])
		own[je.job.Spec.Pool] = t
	}
	out := make(map[string]poolTally, len(own))
	for path, t := range own {
		o := out[path]
		o.jobs = t.jobs
		out[path] = o
		for p, ok := path, true; ok; p, ok = entitlement.ParentPath(p) {
			o := out[p]
			o.pending += t.pending
			o.running += t.running
			out[p] = o
		}
	}
	return out
}

// poolView is a pool as the API shows it, with t its tally; e.mu is held.
func (e *Engine) poolView(path string, t poolTally) PoolView {
	v := PoolView{Pool: *e.pools[path]}
	if i, ok := e.tree.Index(path); ok {
		for _, c := range e.tree.Children(i) {
			v.Children = append(v.Children, e.tree.Path(c))
		}
		sort.Strings(v.Children)
		if path == RootPool {
			v.Pool.Reservation, _ = e.cfg.Hosts.Capacity()
		}
	}
	v.Reservation, v.Limit = v.Pool.Reservation, v.Pool.Limit
	if sh, ok := e.shares[path]; ok && path != RootPool {
		// In a federation the shard runs on its region's share.
		v.Reservation, v.Limit = sh.Reservation, sh.Limit.Max(sh.Reservation)
		v.RegionShare = true
	}
	v.Jobs, v.Pending, v.Running = t.jobs, t.pending, t.running
	if f, ok := e.sched.PoolFigures(path); ok {
		v.Demand, v.Allocation, v.Entitlement = f.Demand, f.Allocation.Add(f.RevocableAllocation), f.Entitlement
		v.UncappedDemand = f.UncappedDemand
	}
	return v
}
