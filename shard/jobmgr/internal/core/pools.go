package core

import (
	"sort"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// RootPool is the path of the root pool, which stands for the whole cluster.
const RootPool = "/"

func Unlimited() model.Resources {
	inf := model.Unlimited
	return model.Resources{MilliCPU: inf, MemMB: inf, DiskMB: inf, GPU: inf}
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

// poolBook holds the region's pools and their entitlement tree: ByPath
// the pools by path, parents the pools that have children (see
// Set), Shares this region's part of federation-wide pools,
// and Tree the tree the pools define.
type poolBook struct {
	ByPath  map[string]*model.Pool
	parents map[string]bool
	Shares  map[string]PoolShare
	Tree    *entitlement.Tree
}

// PoolSpecs turns pools into entitlement specs, sorted by path; a pool with
// a share from the global pass uses the share instead of its own amounts.
func PoolSpecs(pools map[string]*model.Pool, shares map[string]PoolShare) []entitlement.PoolSpec {
	specs := make([]entitlement.PoolSpec, 0, len(pools))
	for path, p := range pools {
		s := entitlement.PoolSpec{Path: path, Reservation: p.Reservation, Limit: p.Limit, Share: p.Share}
		if sh, ok := shares[path]; ok && path != RootPool {
			s.Reservation, s.Limit = sh.Reservation, sh.Limit.Max(sh.Reservation)
		}
		if path == RootPool {
			s.Reservation = model.Resources{MilliCPU: rootReservation, MemMB: rootReservation, DiskMB: rootReservation, GPU: rootReservation}
			s.Limit = Unlimited()
		}
		specs = append(specs, s)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Path < specs[j].Path })
	return specs
}

// effectiveTree is the tree the resource manager runs on: with this
// region's shares when the federation gave some and they form a valid tree.
func (b *poolBook) effectiveTree(e *State, defined *entitlement.Tree) *entitlement.Tree {
	if len(b.Shares) == 0 {
		return defined
	}
	t, err := entitlement.NewTree(PoolSpecs(b.ByPath, b.Shares))
	if err != nil {
		e.Log.Warn("region shares of pools do not form a valid tree; using the pools as defined", "err", err)
		return defined
	}
	return t
}

// Set installs the pool set and indexes which pools have
// pools under them, so that checking a job's pool is a lookup, not a scan of
// every pool (each create checks one).
func (b *poolBook) Set(e *State, pools map[string]*model.Pool) {
	b.ByPath = pools
	parents := make(map[string]bool, len(pools))
	for p := range pools {
		for parent, ok := entitlement.ParentPath(p); ok && !parents[parent]; parent, ok = entitlement.ParentPath(parent) {
			parents[parent] = true
		}
	}
	b.parents = parents
}

// HasChildrenLocked reports whether any pool sits under path; e.poolsMu
// is held.
func (b *poolBook) HasChildren(path string) bool { return b.parents[path] }

// ActiveJobsIn counts unfinished jobs in a pool.
func (b *poolBook) ActiveJobsIn(e *State, path string) int {
	n := 0
	for _, je := range e.Jobs {
		if je.Job.Spec.Pool == path && !je.Job.Status.State.IsTerminal() {
			n++
		}
	}
	return n
}

// SetTree installs a new pool tree in the resource manager. Pools with
// work are never removed or given children, so nothing should be dropped;
// if something is, it is reported.
func (b *poolBook) SetTree(e *State, tree *entitlement.Tree) {
	b.Tree = tree
	for _, g := range e.Queue.Sched.SetTree(b.effectiveTree(e, tree)) {
		e.Log.Error("resource manager dropped a gang whose pool changed", "gang", g.ID, "pool", g.Pool)
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

// poolTally is what the unfinished jobs of a pool hold: jobs counts the
// pool's own, pending and running its tasks and its children's.
type poolTally struct{ Jobs, pending, Running int }

// TallyPools counts the unfinished jobs of each pool and the tasks of
// each pool's subtree waiting for a host and running, in one pass over the
// jobs; e.mu is held.
func (b *poolBook) TallyPools(e *State) map[string]poolTally {
	own := map[string]poolTally{}
	for _, je := range e.Jobs {
		if je.Job.Status.State.IsTerminal() {
			continue
		}
		c := &je.Counts
		t := own[je.Job.Spec.Pool]
		t.Jobs++
		t.pending += int(c[model.TaskInitialized] + c[model.TaskPending] + c[model.TaskReady] + c[model.TaskPlacing])
		t.Running += int(c[model.TaskRunning])
		own[je.Job.Spec.Pool] = t
	}
	out := make(map[string]poolTally, len(own))
	for path, t := range own {
		o := out[path]
		o.Jobs = t.Jobs
		out[path] = o
		for p, ok := path, true; ok; p, ok = entitlement.ParentPath(p) {
			o := out[p]
			o.pending += t.pending
			o.Running += t.Running
			out[p] = o
		}
	}
	return out
}

// PoolView is a pool as the API shows it, with t its tally; e.mu is held.
func (b *poolBook) PoolView(e *State, path string, t poolTally) PoolView {
	v := PoolView{Pool: *b.ByPath[path]}
	if i, ok := b.Tree.Index(path); ok {
		for _, c := range b.Tree.Children(i) {
			v.Children = append(v.Children, b.Tree.Path(c))
		}
		sort.Strings(v.Children)
		if path == RootPool {
			v.Pool.Reservation, _ = e.Settings.Hosts.Capacity()
		}
	}
	v.Reservation, v.Limit = v.Pool.Reservation, v.Pool.Limit
	if sh, ok := b.Shares[path]; ok && path != RootPool {
		// In a federation the shard runs on its region's share.
		v.Reservation, v.Limit = sh.Reservation, sh.Limit.Max(sh.Reservation)
		v.RegionShare = true
	}
	v.Jobs, v.Pending, v.Running = t.Jobs, t.pending, t.Running
	if f, ok := e.Queue.Sched.PoolFigures(path); ok {
		v.Demand, v.Allocation, v.Entitlement = f.Demand, f.Allocation.Add(f.RevocableAllocation), f.Entitlement
		v.UncappedDemand = f.UncappedDemand
	}
	return v
}
