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
)

// regionStates gathers what the policies need to know of every region,
// asking each region's API, and keeps it for a short while.
type regionStates struct {
	mu      sync.Mutex
	at      time.Time
	states  []policy.RegionState
	pools   []model.Pool
	shares  policy.Shares // the split of pools among states; nil until asked
	maxAge  time.Duration
	refresh time.Duration
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

// collectStates is GatherStates, kept for a short while (refresh) so that
// the routing of a burst of jobs asks every region once.
func (r *Router) collectStates(ctx context.Context) ([]policy.RegionState, []model.Pool) {
	s := r.states
	s.mu.Lock()
	defer s.mu.Unlock()
	r.refreshStatesLocked(ctx)
	return s.states, s.pools
}

// collectShares is collectStates and the global entitlement pass over them
// (every pool's reservation and limit split among the regions), the split
// kept as long as the states: routing a burst of jobs splits the pools
// once, not once per job. errs holds the regions that did not answer when
// the states were gathered by this call (none when they came from the
// cache).
func (r *Router) collectShares(ctx context.Context) (states []policy.RegionState, pools []model.Pool, shares policy.Shares, errs map[string]error) {
	s := r.states
	s.mu.Lock()
	defer s.mu.Unlock()
	errs = r.refreshStatesLocked(ctx)
	if s.shares == nil {
		s.shares = policy.SplitPools(s.pools, s.states, time.Now(), s.maxAge)
	}
	return s.states, s.pools, s.shares, errs
}

// refreshStatesLocked gathers the states again once they are older than
// refresh, and returns the errors of the regions that did not answer;
// r.states.mu is held.
func (r *Router) refreshStatesLocked(ctx context.Context) map[string]error {
	s := r.states
	if time.Since(s.at) < s.refresh && s.states != nil {
		return nil
	}
	var errs map[string]error
	s.states, s.pools, errs = r.GatherStates(ctx)
	s.shares, s.at = nil, time.Now()
	return errs
}

// GatherStates asks every region, now, for its capacity, hosts and pools:
// what the routing policy and the global entitlement pass decide on. It
// returns every known region's state (a region that did not answer has no
// Seen time), the pools as the local region defines them, and the error
// of each region that did not answer.
func (r *Router) GatherStates(ctx context.Context) ([]policy.RegionState, []model.Pool, map[string]error) {
	type regionView struct {
		regions *pb.ListRegionsResponse
		hosts   *pb.ListHostsResponse
		pools   *pb.ListPoolsResponse
	}
	fetch := func(ctx context.Context, jobs pb.RegionServiceClient, hosts pb.HostServiceClient, pools pb.PoolServiceClient) (regionView, error) {
		var v regionView
		var err error
		if v.regions, err = jobs.ListRegions(ctx, &pb.ListRegionsRequest{}); err != nil {
			return v, err
		}
		if v.hosts, err = hosts.ListHosts(ctx, &pb.ListHostsRequest{}); err != nil {
			return v, err
		}
		v.pools, err = pools.ListPools(ctx, &pb.ListPoolsRequest{})
		return v, err
	}
	views, errs := fanOut(r, ctx, func(ctx context.Context) (regionView, error) {
		var v regionView
		var err error
		if v.regions, err = pb.NewRegionServiceClient(r.local()).ListRegions(ctx, &pb.ListRegionsRequest{}); err != nil {
			return v, err
		}
		if v.hosts, err = pb.NewHostServiceClient(r.local()).ListHosts(ctx, &pb.ListHostsRequest{}); err != nil {
			return v, err
		}
		v.pools, err = pb.NewPoolServiceClient(r.local()).ListPools(ctx, &pb.ListPoolsRequest{})
		return v, err
	}, func(ctx context.Context, c grpc.ClientConnInterface) (regionView, error) {
		return fetch(ctx, pb.NewRegionServiceClient(c), pb.NewHostServiceClient(c), pb.NewPoolServiceClient(c))
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
				}
			}
			seen := map[string]map[string]bool{}
			for _, h := range v.hosts.GetHosts() {
				if h.GetState() != pb.HostState_HOST_STATE_UP {
					continue
				}
				for k, val := range h.GetLabels() {
					if seen[k] == nil {
						seen[k] = map[string]bool{}
					}
					if !seen[k][val] {
						seen[k][val] = true
						st.HostLabels[k] = append(st.HostLabels[k], val)
					}
				}
			}
			for _, p := range v.pools.GetPools() {
				var d, a model.Resources
				for i, pr := range p.GetResources() {
					d, a = d.Set(i, model.UnitsOf(i, pr.GetDemand())), a.Set(i, model.UnitsOf(i, pr.GetAllocation()))
				}
				st.Pools[p.GetPath()] = policy.PoolUsage{Demand: d, Allocation: a}
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
		states, _, shares, _ := r.collectShares(ctx)
		req := policy.JobRequest{
			Pool:        spec.GetPool(),
			PerTask:     resources(spec.GetTask().GetResources()),
			Instances:   spec.GetInstances(),
			Constraints: constraintsFrom(spec.GetTask().GetConstraints()),
		}
		if req.Pool == "" {
			req.Pool = "/"
		}
		choice, err := policy.ChooseRegion(req, states, shares)
		if err != nil {
			return "", choice.Reasons, err
		}
		return choice.Region, choice.Reasons, nil
	}
}

func constraintsFrom(cs []*pb.Constraint) []model.Constraint {
	var out []model.Constraint
	for _, c := range cs {
		out = append(out, model.Constraint{Key: c.GetKey(), Op: model.ConstraintOp(c.GetOp()), Values: c.GetValues(),
			AllOf: constraintsFrom(c.GetAllOf()), AnyOf: constraintsFrom(c.GetAnyOf())})
	}
	return out
}
