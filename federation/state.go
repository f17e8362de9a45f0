package federation

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// regionStates keeps the last gather of every region's state with the
// global split made from it, for the global pass, routing and the API to
// share: a gather asks every region for its capacity, host labels and
// pools, so its cost grows with regions × pools, and at most one runs at
// a time.
//
// Gathers are paced by their own cost: one starts no sooner than period
// after the last one started, nor sooner than gatherCostFactor times the
// last one's duration, so gathering and splitting take at most about a
// tenth of the time however large the federation is (a gather that waits
// for the cores takes longer, which spaces the next one further).
type regionStates struct {
	mu      sync.Mutex
	last    *stateView    // nil until the first gather ends
	pending chan struct{} // closed when the gather in flight ends; nil when none
	period  time.Duration
	// maxAge: the split leaves out states older than this, and routing
	// never decides on an older view.
	maxAge time.Duration
}

// gatherCostFactor spaces gathers: the next one starts no sooner than this
// many times the last one's duration after it started.
const gatherCostFactor = 10

// stateView is one gather: every region's state, the pools as the local
// region defines them, and the split of the pools among the regions.
type stateView struct {
	at     time.Time     // when the gather started
	took   time.Duration // the gather and the split
	states []policy.RegionState
	pools  []model.Pool
	shares policy.Shares
	errs   map[string]error // the regions that did not answer
	// localFailed: the local region did not answer, so pools are the
	// definitions of the last gather it answered (nil if none did), and
	// the view is due again at once.
	localFailed bool

	// routed is the work routing sent to each region since this gather,
	// which its states do not show: later decisions on the view count it
	// as held (see choose).
	routedMu sync.Mutex
	routed   map[string]*routedTally
}

// routedTally is the work routed to one region since a gather: in all,
// and by pool.
type routedTally struct {
	total model.Resources
	pools map[string]model.Resources
}

// dueLocked reports whether a new gather may start at now; s.mu is held.
func (s *regionStates) dueLocked(now time.Time) bool {
	v := s.last
	return v == nil || v.localFailed || now.Sub(v.at) >= max(s.period, gatherCostFactor*v.took)
}

// stateView returns the view to decide on. A new gather starts when one
// is due (see regionStates), unless one is in flight already; the call
// waits for it when waitIfDue is set, or when there is no view yet or the
// last is older than maxAge, and otherwise returns the last view at once.
// It returns nil only when ctx ends before any gather did.
func (r *Router) stateView(ctx context.Context, waitIfDue bool) *stateView {
	s := r.states
	s.mu.Lock()
	now, v := time.Now(), s.last
	usable := v != nil && now.Sub(v.at) <= s.maxAge
	due := s.dueLocked(now)
	var done chan struct{}
	if due || !usable {
		done = r.startGatherLocked()
	}
	s.mu.Unlock()
	if usable && (!due || !waitIfDue) {
		return v
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// startGatherLocked starts a gather under the router's own context unless
// one is in flight, and returns the channel closed when the one in flight
// ends; r.states.mu is held. The gather does not depend on the caller that
// asked for it: a caller that stops waiting leaves it to finish for the
// others.
func (r *Router) startGatherLocked() chan struct{} {
	s := r.states
	if s.pending != nil {
		return s.pending
	}
	done := make(chan struct{})
	s.pending = done
	r.bg.goRun(func(ctx context.Context) {
		defer close(done)
		start := time.Now()
		states, pools, errs := r.GatherStates(ctx)
		_, localFailed := errs[r.dir.Local()]
		if localFailed {
			// The pools are the local region's definitions: keep the last
			// ones read rather than split and plan on none.
			s.mu.Lock()
			if s.last != nil {
				pools = s.last.pools
			}
			s.mu.Unlock()
		}
		shares := policy.SplitPools(pools, states, time.Now(), s.maxAge)
		v := &stateView{at: start, took: time.Since(start), states: states, pools: pools, shares: shares, errs: errs, localFailed: localFailed}
		s.mu.Lock()
		defer s.mu.Unlock()
		if ctx.Err() == nil || s.last == nil {
			s.last = v
		}
		s.pending = nil
	})
	return done
}

// currentStates is the regions' states and pools for a caller that wants
// them current: the last gather's, or a new one when it is due. It is
// Unavailable when no gather has read the local region's pools yet.
func (r *Router) currentStates(ctx context.Context) ([]policy.RegionState, []model.Pool, error) {
	v := r.stateView(ctx, true)
	if v == nil {
		return nil, nil, status.Error(codes.Unavailable, "no region's state has been gathered yet")
	}
	if v.localFailed && v.pools == nil {
		return nil, nil, status.Errorf(codes.Unavailable, "the local region's pools could not be read: %v", v.errs[r.dir.Local()])
	}
	return v.states, v.pools, nil
}

// withCurrentHealth returns states with each region's health as the
// directory sees it now where that is worse than when they were gathered:
// a view may be seconds old, and a region that failed since must not be
// chosen. A region the directory no longer lists counts as failed.
func withCurrentHealth(states []policy.RegionState, dir Directory) []policy.RegionState {
	now := map[string]policy.Health{}
	for _, reg := range dir.Regions() {
		now[reg.Name] = healthOf(reg.Health)
	}
	out := make([]policy.RegionState, len(states))
	for i, st := range states {
		h, ok := now[st.Name]
		if !ok {
			h = policy.HealthFailed
		}
		st.Health = max(st.Health, h)
		out[i] = st
	}
	return out
}

// resources converts the API's decimal amounts (cpu in cores) to integer
// units, once, at the federation's edge; +Inf is model.Unlimited.
func resources(r *pb.Resources) model.Resources {
	return model.ResourcesFromDecimal(r.GetCpu(), r.GetMemMb(), r.GetDiskMb(), r.GetGpu())
}

func shares(r *pb.Resources) model.Shares {
	return model.Shares{CPU: r.GetCpu(), Mem: r.GetMemMb(), Disk: r.GetDiskMb(), GPU: r.GetGpu()}
}

func healthOf(s string) policy.Health {
	switch s {
	case "suspect":
		return policy.HealthSuspect
	case "failed":
		return policy.HealthFailed
	}
	return policy.HealthAlive
}

// poolsFrom converts pool specs as the API shows them.
func poolsFrom(ps []*pb.Pool) []model.Pool {
	out := make([]model.Pool, 0, len(ps))
	for _, p := range ps {
		spec := p.GetSpec()
		out = append(out, model.Pool{
			Path:        p.GetPath(),
			Reservation: resources(spec.GetReservation()),
			Limit:       resources(spec.GetLimit().Resolve(math.Inf(1))),
			Share:       shares(spec.GetShare().Resolve(1)),
		})
	}
	return out
}

// GatherStates asks every region, now, for its capacity, host labels and
// pools: what the routing policy and the global entitlement pass decide
// on. It returns every known region's state (a region that did not answer
// has no Seen time), the pools as the local region defines them, and the
// error of each region that did not answer.
//
// Each region answers with a summary: its host labels as the distinct
// values per key (not its hosts), and, from the other regions, only the
// pools it has demand or allocation in; a pool a region leaves out has
// neither, which is what its absence from RegionState.Pools means.
func (r *Router) GatherStates(ctx context.Context) ([]policy.RegionState, []model.Pool, map[string]error) {
	type regionView struct {
		regions *pb.ListRegionsResponse
		pools   *pb.ListPoolsResponse
	}
	fetch := func(ctx context.Context, c grpc.ClientConnInterface, inUse bool) (regionView, error) {
		var v regionView
		var err error
		if v.regions, err = pb.NewRegionServiceClient(c).ListRegions(ctx, &pb.ListRegionsRequest{HostLabels: true}); err != nil {
			return v, err
		}
		v.pools, err = pb.NewPoolServiceClient(c).ListPools(ctx, &pb.ListPoolsRequest{InUse: inUse})
		return v, err
	}
	views, errs := fanOut(r, ctx, func(ctx context.Context) (regionView, error) {
		// The local region's pools are the federation's definitions: all
		// of them.
		return fetch(ctx, r.local(), false)
	}, func(ctx context.Context, c grpc.ClientConnInterface) (regionView, error) {
		return fetch(ctx, c, true)
	})
	now := time.Now()
	var states []policy.RegionState
	for _, reg := range r.dir.Regions() {
		st := policy.RegionState{Name: reg.Name, Health: healthOf(reg.Health), HostLabels: map[string][]string{}, Pools: map[string]policy.PoolUsage{}}
		v, ok := views[reg.Name]
		if ok {
			st.Seen = now
			for _, g := range v.regions.GetRegions() {
				if g.GetName() == reg.Name {
					st.Capacity, st.Allocation = resources(g.GetCapacity()), resources(g.GetAllocation())
					for _, l := range g.GetHostLabels() {
						st.HostLabels[l.GetKey()] = l.GetValues()
					}
				}
			}
			for _, p := range v.pools.GetPools() {
				var d, a model.Resources
				for i, pr := range p.GetResources() {
					d, a = d.Set(i, model.UnitsOf(i, pr.GetDemand())), a.Set(i, model.UnitsOf(i, pr.GetAllocation()))
				}
				if !d.IsZero() || !a.IsZero() {
					st.Pools[p.GetPath()] = policy.PoolUsage{Demand: d, Allocation: a}
				}
			}
		} else if st.Health == policy.HealthAlive && reg.Name != r.dir.Local() {
			st.Health = policy.HealthSuspect // not answering
		}
		states = append(states, st)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].Name < states[j].Name })
	var pools []model.Pool
	if v, ok := views[r.dir.Local()]; ok {
		pools = poolsFrom(v.pools.GetPools())
	}
	return states, pools, errs
}

// PolicyChooser routes jobs that name no region with the routing policy:
// regions that can satisfy the job, the most entitlement left in its
// pool, then capacity.
func (r *Router) PolicyChooser() Chooser {
	return func(ctx context.Context, spec *pb.JobSpec) (string, []string, error) {
		v := r.stateView(ctx, false)
		if v == nil {
			return "", nil, status.Error(codes.Unavailable, "no region's state has been gathered yet")
		}
		states, shares := withCurrentHealth(v.states, r.dir), v.shares
		req := policy.JobRequest{
			Pool:        spec.GetPool(),
			PerTask:     resources(spec.GetTask().GetResources()),
			Instances:   spec.GetInstances(),
			Constraints: constraintsFrom(spec.GetTask().GetConstraints()),
		}
		if req.Pool == "" {
			req.Pool = "/"
		}
		choice, err := v.choose(req, states, shares)
		if err != nil {
			return "", choice.Reasons, err
		}
		return choice.Region, choice.Reasons, nil
	}
}

// choose decides on the view's states, counting the work routed since
// they were gathered, and counts the job among it. Decisions on one view
// take turns, so that each sees the ones before it.
func (v *stateView) choose(req policy.JobRequest, states []policy.RegionState, shares policy.Shares) (policy.Choice, error) {
	v.routedMu.Lock()
	defer v.routedMu.Unlock()
	if len(v.routed) > 0 {
		req.Routed = make(map[string]policy.Routed, len(v.routed))
		for region, t := range v.routed {
			req.Routed[region] = policy.Routed{Pool: t.pools[req.Pool], Region: t.total}
		}
	}
	choice, err := policy.ChooseRegion(req, states, shares)
	if err != nil {
		return choice, err
	}
	if v.routed == nil {
		v.routed = map[string]*routedTally{}
	}
	t := v.routed[choice.Region]
	if t == nil {
		t = &routedTally{pools: map[string]model.Resources{}}
		v.routed[choice.Region] = t
	}
	job := req.PerTask.Max(model.Resources{}).Scale(int64(req.Instances))
	t.total = t.total.Add(job)
	t.pools[req.Pool] = t.pools[req.Pool].Add(job)
	return choice, nil
}

func constraintsFrom(cs []*pb.Constraint) []model.Constraint {
	var out []model.Constraint
	for _, c := range cs {
		out = append(out, model.Constraint{Key: c.GetKey(), Op: model.ConstraintOp(c.GetOp()), Values: c.GetValues(),
			AllOf: constraintsFrom(c.GetAllOf()), AnyOf: constraintsFrom(c.GetAnyOf())})
	}
	return out
}
