package federation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stateShard is the in-memory twin of a shard as a gather sees it: its
// capacity, host labels and pools, and a count of the calls it answered.
type stateShard struct {
	unimplementedShard

	region string
	labels []*pb.HostLabelValues
	// pools: path → cpu demand.
	pools map[string]float64

	mu                        sync.Mutex
	down                      bool // ListRegions is Unavailable, as a region with no leader yet
	listRegions, listHosts    int
	inUseAsked, allPoolsAsked int
}

func (s *stateShard) ListRegions(_ context.Context, req *pb.ListRegionsRequest) (*pb.ListRegionsResponse, error) {
	s.mu.Lock()
	s.listRegions++
	down := s.down
	s.mu.Unlock()
	if down {
		return nil, status.Error(codes.Unavailable, "no leader holds the region's lease yet")
	}
	reg := &pb.Region{Name: s.region, Capacity: &pb.Resources{Cpu: 100, MemMb: 1000}}
	if req.GetHostLabels() {
		reg.HostLabels = s.labels
	}
	return &pb.ListRegionsResponse{Regions: []*pb.Region{reg}}, nil
}

func (s *stateShard) ListHosts(context.Context, *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	s.mu.Lock()
	s.listHosts++
	s.mu.Unlock()
	return &pb.ListHostsResponse{}, nil
}

func (s *stateShard) ListPools(_ context.Context, req *pb.ListPoolsRequest) (*pb.ListPoolsResponse, error) {
	s.mu.Lock()
	if req.GetInUse() {
		s.inUseAsked++
	} else {
		s.allPoolsAsked++
	}
	s.mu.Unlock()
	out := &pb.ListPoolsResponse{}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range s.pools {
			if !yield(p) {
				return
			}
		}
	}) {
		d := s.pools[path]
		if req.GetInUse() && d == 0 {
			continue
		}
		out.Pools = append(out.Pools, &pb.Pool{Path: path, Spec: &pb.PoolSpec{Path: path, Reservation: &pb.Resources{Cpu: 10}},
			Resources: []*pb.PoolResource{{Name: "cpu", Demand: d}}})
	}
	return out, nil
}

func (s *stateShard) CreateJob(_ context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	return &pb.CreateJobResponse{Job: &pb.Job{Id: req.GetSpec().GetName(), Status: &pb.JobStatus{Region: s.region}}}, nil
}

func (s *stateShard) calls() (listRegions, listHosts, inUse, all int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listRegions, s.listHosts, s.inUseAsked, s.allPoolsAsked
}

// serveStateRegions serves a router in front of each shard and returns
// the routers by region, each with its own directory.
func serveStateRegions(t *testing.T, shards ...*stateShard) (map[string]*Router, map[string]*StaticDirectory) {
	t.Helper()
	named := make([]namedShard, len(shards))
	for i, s := range shards {
		named[i] = namedShard{s.region, s}
	}
	_, routers, dirs := serveRegions(t, named...)
	return routers, dirs
}

// A gather reads each region's summary: host labels from ListRegions (no
// host list), and from the other regions only the pools they use; the
// local region's pools are the definitions, all of them.
func TestGatherStatesReadsSummaries(t *testing.T) {
	east := &stateShard{region: "east", pools: map[string]float64{"/a": 0, "/b": 2},
		labels: []*pb.HostLabelValues{{Key: "zone", Values: []string{"e1"}}}}
	west := &stateShard{region: "west", pools: map[string]float64{"/a": 3, "/b": 0},
		labels: []*pb.HostLabelValues{{Key: "gpu", Values: []string{"a100"}}, {Key: "zone", Values: []string{"w1", "w2"}}}}
	routers, _ := serveStateRegions(t, east, west)
	states, pools, errs := routers["east"].GatherStates(context.Background())
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got := []string{pools[0].Path, pools[1].Path}; len(pools) != 2 || !slices.Equal(got, []string{"/a", "/b"}) {
		t.Fatalf("pools %v, want the local definitions of /a and /b", pools)
	}
	byName := map[string]policy.RegionState{}
	for _, st := range states {
		byName[st.Name] = st
	}
	w := byName["west"]
	if !slices.Equal(w.HostLabels["zone"], []string{"w1", "w2"}) || !slices.Equal(w.HostLabels["gpu"], []string{"a100"}) || len(w.HostLabels) != 2 {
		t.Errorf("west's host labels %v", w.HostLabels)
	}
	if _, ok := w.Pools["/b"]; ok || w.Pools["/a"].Demand.MilliCPU != 3000 || len(w.Pools) != 1 {
		t.Errorf("west's pools %v, want /a alone with 3 cpu of demand", w.Pools)
	}
	e := byName["east"]
	if _, ok := e.Pools["/a"]; ok || e.Pools["/b"].Demand.MilliCPU != 2000 || !slices.Equal(e.HostLabels["zone"], []string{"e1"}) {
		t.Errorf("east's state: pools %v, labels %v", e.Pools, e.HostLabels)
	}
	for _, s := range []*stateShard{east, west} {
		_, hosts, inUse, all := s.calls()
		if hosts != 0 {
			t.Errorf("%s listed its hosts %d times", s.region, hosts)
		}
		if want := s == west; (inUse == 1) != want || (all == 1) == want {
			t.Errorf("%s asked for pools in use %d times, for all %d times", s.region, inUse, all)
		}
	}
}

// Routing decides on the last gather while it is young enough, with each
// region's health as gossip sees it now and the jobs routed since counted:
// a burst of jobs gathers once and spreads as the room left in the pool
// does, and a region that failed since the gather is not chosen.
func TestRoutingReusesTheLastGather(t *testing.T) {
	// West's demand for /a earns it 7.5 of the pool's 10 cpu of
	// reservation, east the other 2.5.
	east := &stateShard{region: "east", pools: map[string]float64{"/a": 0}}
	west := &stateShard{region: "west", pools: map[string]float64{"/a": 5}}
	routers, dirs := serveStateRegions(t, east, west)
	r := routers["east"]
	r.SetChooser(r.PolicyChooser())
	ctx := context.Background()
	create := func(name string) string {
		t.Helper()
		resp, err := r.CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: name, Pool: "/a", Instances: 1,
			Task: &pb.TaskSpec{Command: "x", Resources: &pb.Resources{Cpu: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetJob().GetStatus().GetRegion()
	}
	by := map[string]int{}
	for i := range 10 {
		by[create(fmt.Sprintf("burst-%d", i))]++
	}
	if n, _, _, _ := west.calls(); n != 1 {
		t.Errorf("10 routed jobs asked west for its state %d times, want 1", n)
	}
	// Whole tasks of 1 cpu: 7 fit in west's reservation, 2 in east's; the
	// tenth fits in neither and goes where the limit and capacity left
	// are the most.
	if by["west"] < 7 || by["east"] < 2 {
		t.Errorf("burst of 10 jobs routed %v, want at least 7 to west and 2 to east", by)
	}
	dirs["east"].SetHealth("west", "failed")
	if got := create("after"); got != "east" {
		t.Fatalf("with west failed since the last gather, routed to %s, want east", got)
	}
}

// Gathers are paced by their cost: the next one is due period after the
// last started, or ten times its duration when that is longer.
func TestGatherIsDueByItsCost(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		ago, took time.Duration
		want      bool
	}{
		{ago: 2 * time.Second, took: 100 * time.Millisecond, want: false},
		{ago: 3 * time.Second, took: 100 * time.Millisecond, want: true},
		{ago: 5 * time.Second, took: time.Second, want: false},
		{ago: 10 * time.Second, took: time.Second, want: true},
	} {
		s := &regionStates{period: 3 * time.Second, maxAge: time.Minute, last: &stateView{at: now.Add(-c.ago), took: c.took}}
		if got := s.dueLocked(now); got != c.want {
			t.Errorf("last gather %s ago took %s: due %v, want %v", c.ago, c.took, got, c.want)
		}
	}
	if !(&regionStates{period: 3 * time.Second}).dueLocked(now) {
		t.Error("no gather yet: not due")
	}
}

func (s *stateShard) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// A gather in which the local region did not answer (its shard not
// leading yet, as at start-up) has no pool definitions of its own: the
// plan is Unavailable rather than made on no pools, the next caller
// gathers again at once however the gathers are paced, and a later
// failure keeps the definitions last read.
func TestGatherWithoutTheLocalRegion(t *testing.T) {
	east := &stateShard{region: "east", pools: map[string]float64{"/": 0, "/a": 1}, down: true}
	west := &stateShard{region: "west", pools: map[string]float64{"/": 0, "/a": 0}}
	routers, _ := serveStateRegions(t, east, west)
	r := routers["east"]
	r.states.period = time.Hour // only a failed local region makes a gather due
	ctx := context.Background()
	if _, _, err := r.currentStates(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("local region down: err %v, want Unavailable", err)
	}
	if _, err := r.PlanFailover(ctx, &pb.PlanFailoverRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("plan with the local region down: err %v, want Unavailable", err)
	}
	east.setDown(false)
	_, pools, err := r.currentStates(ctx)
	if err != nil || len(pools) != 2 {
		t.Fatalf("local region back: pools %v, err %v; want / and /a at once", pools, err)
	}
	east.setDown(true)
	r.states.mu.Lock()
	r.states.last.at = time.Now().Add(-2 * time.Hour)
	r.states.mu.Unlock()
	states, pools, err := r.currentStates(ctx)
	if err != nil || len(pools) != 2 || len(states) != 2 {
		t.Fatalf("local region down after a gather: %d states, pools %v, err %v; want the last definitions", len(states), pools, err)
	}
}
