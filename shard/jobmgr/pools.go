package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/store/kinds"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store"
)

// Pool errors, besides the entitlement package's validation errors.
var (
	ErrPoolExists   = errors.New("pool already exists")
	ErrPoolInUse    = errors.New("pool in use")
	ErrRootPool     = errors.New("the root pool is the cluster")
	ErrNotLeafPool  = errors.New("not a leaf pool")
	ErrPoolConflict = errors.New("pool changed concurrently")
)

func rootPool() *model.Pool {
	return &model.Pool{Path: core.RootPool, Limit: core.Unlimited(), Share: model.EqualShares(1)}
}

// poolShell is the resource pools' shell (the core's poolBook holds
// them): the commands that create, update and delete a pool, each stored
// before the pools change, and the pools read at recovery.
type poolShell struct{ e *Engine }

// read reads the pool tree, creating the root pool on first start.
func (s *poolShell) read(ctx context.Context) (map[string]*model.Pool, error) {
	pools, err := kinds.Pools.List(ctx, s.e.cfg.Store)
	if err != nil {
		return nil, err
	}
	loaded := map[string]*model.Pool{}
	for _, p := range pools {
		loaded[p.Path] = p
	}
	if loaded[core.RootPool] == nil {
		root := rootPool()
		root.CreateTime = s.e.cfg.Clock.Now()
		if err := kinds.Pools.Create(ctx, s.e.cfg.Store, root); err != nil {
			return nil, fmt.Errorf("create root pool: %w", err)
		}
		loaded[core.RootPool] = root
	}
	return loaded, nil
}

// install makes pools read from the store the engine's; callers hold
// the engine's lock.
func (s *poolShell) install(loaded map[string]*model.Pool) error {
	s.e.poolsMu.Lock()
	s.e.c.Pools.Set(&s.e.c, loaded)
	s.e.poolsMu.Unlock()
	tree, err := buildTree(s.e.c.Pools.ByPath)
	if err != nil {
		// Stored pools were valid when written; report but keep going with
		// what can be built.
		return fmt.Errorf("stored pool tree is invalid: %w", err)
	}
	s.e.c.Pools.SetTree(&s.e.c, tree)
	return nil
}

// buildTree builds the tree the operator defined: validation of pool
// changes is always against the pools' own amounts.
func buildTree(pools map[string]*model.Pool) (*entitlement.Tree, error) {
	return entitlement.NewTree(core.PoolSpecs(pools, nil))
}

// SetPoolShares installs this region's shares of federation-wide pools
// (nil: none, the pools as defined apply).
func (e *Engine) SetPoolShares(shares map[string]core.PoolShare) {
	e.lock()
	defer e.mu.Unlock()
	if sameShares(e.c.Pools.Shares, shares) {
		return
	}
	e.c.Pools.Shares = shares
	e.c.Pools.SetTree(&e.c, e.c.Pools.Tree)
}

func sameShares(a, b map[string]core.PoolShare) bool {
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

// change carries out a change of the pool tree: plan, under the
// engine's lock, returns the next pools and their tree (or why not);
// write stores the change with no lock held; then the next pools are the
// engine's. Changes of pools take turns (poolsTurn), so none is planned
// on pools another is about to replace.
func (s *poolShell) change(ctx context.Context, plan func() (map[string]*model.Pool, *entitlement.Tree, error), write func(context.Context) error) error {
	s.e.poolsTurn.Lock()
	defer s.e.poolsTurn.Unlock()
	s.e.lock()
	next, tree, err := plan()
	s.e.mu.Unlock()
	if err != nil {
		return err
	}
	if err := write(ctx); err != nil {
		return err
	}
	s.e.lock()
	defer s.e.mu.Unlock()
	s.e.poolsMu.Lock()
	s.e.c.Pools.Set(&s.e.c, next)
	s.e.poolsMu.Unlock()
	s.e.c.Pools.SetTree(&s.e.c, tree)
	return nil
}

// create adds a pool under an existing parent that has no unfinished
// jobs of its own. Every violation of the tree's rules is reported.
func (s *poolShell) create(ctx context.Context, p model.Pool) (*model.Pool, error) {
	cp := p
	err := s.change(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		if s.e.c.Pools.ByPath[p.Path] != nil {
			return nil, nil, fmt.Errorf("pool %s: %w", p.Path, ErrPoolExists)
		}
		if parent, ok := entitlement.ParentPath(p.Path); ok && s.e.c.Pools.ByPath[parent] != nil {
			if n := s.e.c.Pools.ActiveJobsIn(&s.e.c, parent); n > 0 {
				return nil, nil, fmt.Errorf("pool %s: parent %s has %d unfinished jobs; jobs run only in leaf pools: %w", p.Path, parent, n, ErrPoolInUse)
			}
		}
		next := clonePools(s.e.c.Pools.ByPath)
		cp.CreateTime = s.e.cfg.Clock.Now()
		next[p.Path] = &cp
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error {
		if err := kinds.Pools.Create(ctx, s.e.cfg.Store, &cp); err != nil {
			return fmt.Errorf("store pool: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.e.c.Log.Info("pool created", "pool", p.Path)
	out := cp
	return &out, nil
}

// update replaces a pool's reservation, limit, share and host pools.
func (s *poolShell) update(ctx context.Context, p model.Pool) (*model.Pool, error) {
	if p.Path == core.RootPool {
		return nil, fmt.Errorf("pool /: its size is the cluster's capacity and cannot be set: %w", ErrRootPool)
	}
	var cp model.Pool
	err := s.change(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		old := s.e.c.Pools.ByPath[p.Path]
		if old == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", p.Path, core.ErrNotFound)
		}
		next := clonePools(s.e.c.Pools.ByPath)
		cp = *old
		cp.Reservation, cp.Limit, cp.Share, cp.HostPools, cp.Clusters = p.Reservation, p.Limit, p.Share, p.HostPools, p.Clusters.Clone()
		next[p.Path] = &cp
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error { return s.store(ctx, &cp) })
	if err != nil {
		return nil, err
	}
	s.e.c.Log.Info("pool updated", "pool", p.Path)
	out := cp
	return &out, nil
}

// store writes a changed pool's record.
func (s *poolShell) store(ctx context.Context, p *model.Pool) error {
	if err := kinds.Pools.Write(ctx, s.e.cfg.Store, p); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("pool %s: %w", p.Path, ErrPoolConflict)
		}
		return fmt.Errorf("store pool %s: %w", p.Path, err)
	}
	return nil
}

// delete removes a pool with no children and no unfinished jobs.
func (s *poolShell) delete(ctx context.Context, path string) error {
	if path == core.RootPool {
		return fmt.Errorf("pool /: %w", ErrRootPool)
	}
	err := s.change(ctx, func() (map[string]*model.Pool, *entitlement.Tree, error) {
		if s.e.c.Pools.ByPath[path] == nil {
			return nil, nil, fmt.Errorf("pool %s: %w", path, core.ErrNotFound)
		}
		if s.e.c.Pools.HasChildren(path) {
			return nil, nil, fmt.Errorf("pool %s has child pools; delete them first: %w", path, ErrPoolInUse)
		}
		if n := s.e.c.Pools.ActiveJobsIn(&s.e.c, path); n > 0 {
			return nil, nil, fmt.Errorf("pool %s has %d unfinished jobs: %w", path, n, ErrPoolInUse)
		}
		next := clonePools(s.e.c.Pools.ByPath)
		delete(next, path)
		tree, err := buildTree(next)
		return next, tree, err
	}, func(ctx context.Context) error {
		if err := kinds.Pools.Delete(ctx, s.e.cfg.Store, path); err != nil {
			return fmt.Errorf("delete pool: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.e.c.Log.Info("pool deleted", "pool", path)
	return nil
}

// CheckJobPool reports why a job may not go to a pool, or nil.
func (r Reads) CheckJobPool(path string) error {
	e := r.e
	e.poolsMu.RLock()
	defer e.poolsMu.RUnlock()
	if e.c.Pools.ByPath[path] == nil {
		return fmt.Errorf("pool %s: %w", path, core.ErrNotFound)
	}
	if e.c.Pools.HasChildren(path) {
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

// ListPools returns every pool, ordered by path; with inUse, only the
// pools with demand or allocation, the others left out before any work
// is spent on them.
func (r Reads) ListPools(inUse bool) []core.PoolView {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	paths := make([]string, 0, len(e.c.Pools.ByPath))
	for p := range e.c.Pools.ByPath {
		if inUse {
			if d, a, _ := e.c.Pools.PoolFigures(&e.c, p); d.IsZero() && a.IsZero() {
				continue
			}
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tally := e.c.Pools.TallyPools(&e.c)
	out := make([]core.PoolView, 0, len(paths))
	for _, p := range paths {
		out = append(out, e.c.Pools.PoolView(&e.c, p, tally[p]))
	}
	return out
}

// GetPool returns one pool.
func (r Reads) GetPool(path string) (core.PoolView, error) {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	if e.c.Pools.ByPath[path] == nil {
		return core.PoolView{}, fmt.Errorf("pool %s: %w", path, core.ErrNotFound)
	}
	return e.c.Pools.PoolView(&e.c, path, e.c.Pools.TallyPools(&e.c)[path]), nil
}
