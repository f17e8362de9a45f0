package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/peloton-federated/peloton/tests/bench/inproc"
)

// Size is how big a simulated federation is.
type Size struct {
	Regions        int
	HostsPerRegion int
	// Every region runs JobsPerRegion jobs of TasksPerJob tasks.
	JobsPerRegion, TasksPerJob int
	// Pools in the federation-wide pool tree (the root included).
	Pools int
	// RouteJobs single-task jobs are routed by each chooser, from Clients
	// concurrent callers.
	RouteJobs, Clients int
	// BatchJobs single-task jobs are routed by the policy through
	// CreateJobs, BatchSize specs per request from BatchClients callers.
	BatchJobs, BatchSize, BatchClients int
	// GossipWindow is how long gossip traffic is counted.
	GossipWindow time.Duration
	// Budget bounds every wait for tasks to run.
	Budget time.Duration
}

func (s Size) String() string {
	return fmt.Sprintf("%d regions, %d hosts, %d tasks (%d jobs of %d), %d pools", s.Regions, s.Regions*s.HostsPerRegion,
		s.Regions*s.JobsPerRegion*s.TasksPerJob, s.Regions*s.JobsPerRegion, s.TasksPerJob, s.Pools)
}

var sizes = map[string]Size{
	// The seeds' scale: ten regions, 50,000 hosts, 1,000,000 tasks,
	// 10,000 pools; the failed region holds 100,000 tasks.
	"full": {Regions: 10, HostsPerRegion: 5000, JobsPerRegion: 100, TasksPerJob: 1000, Pools: 10000,
		RouteJobs: 1000, Clients: 64, BatchJobs: 20000, BatchSize: 500, BatchClients: 4, GossipWindow: 10 * time.Second, Budget: 10 * time.Minute},
	// What CI runs: the same code, in seconds.
	"small": {Regions: 3, HostsPerRegion: 20, JobsPerRegion: 3, TasksPerJob: 100, Pools: 111,
		RouteJobs: 200, Clients: 8, BatchJobs: 1000, BatchSize: 100, BatchClients: 2, GossipWindow: 2 * time.Second, Budget: 2 * time.Minute},
}

// hostShape is every simulated host: 16 cores, 64 GiB.
var hostShape = model.Resources{MilliCPU: 16000, MemMB: 65536, DiskMB: 100000}

// simFederation is the regions of one simulation, joined by gossip.
type simFederation struct {
	size    Size
	regions []*inproc.Region
	leaves  []string // leaf pools, where jobs go
}

// regionName names region i so that names sort in index order.
func regionName(i int) string { return fmt.Sprintf("r%02d", i) }

// startFederation starts the regions one after another, region i on
// 127.0.0.(i+1) with its pools already in its store, each joining the
// first one's gossip, and waits until every region sees every other alive
// and has checked in with the federation.
func startFederation(ctx context.Context, size Size, log func(string, ...any)) (*simFederation, error) {
	f := &simFederation{size: size}
	// The pools reserve a quarter of the federation's capacity.
	var reserved model.Resources
	for k := range model.ResourceKinds {
		reserved = reserved.Set(k, hostShape.Get(k)*int64(size.Regions*size.HostsPerRegion)/4)
	}
	pools := poolTree(size.Pools, reserved, 19)
	f.leaves = leaves(pools)
	quiet := slog.New(slog.DiscardHandler)
	for i := range size.Regions {
		st := memstore.New()
		for _, p := range pools {
			if p.Path == jobmgr.RootPool {
				continue
			}
			cp := p
			if err := kinds.Pools.Create(ctx, st, &cp); err != nil {
				f.stop()
				return nil, err
			}
		}
		var join []string
		if i > 0 {
			join = []string{f.regions[0].Gossip.GossipAddr()}
		}
		r, err := inproc.StartRegion(ctx, inproc.RegionConfig{
			Name: regionName(i), IP: fmt.Sprintf("127.0.0.%d", i+1), Hosts: size.HostsPerRegion, HostShape: hostShape, Store: st,
			Gossip: &inproc.GossipConfig{Join: join, Profile: gossip.ProfileLocal, ObserveEvery: 250 * time.Millisecond,
				Health: policy.HealthConfig{SuspectAfter: time.Second, FailAfter: 3 * time.Second, RecoverAfter: time.Second}},
			FailoverEvery: time.Second, Logger: quiet,
		})
		if err != nil {
			f.stop()
			return nil, fmt.Errorf("region %d: %w", i, err)
		}
		f.regions = append(f.regions, r)
		log("region %s up on %s (%d hosts, %d pools)", r.Name, r.Addr, size.HostsPerRegion, len(pools))
	}
	err := inproc.WaitFor(ctx, 2*time.Minute, f.allAlive)
	if err != nil {
		f.stop()
		return nil, fmt.Errorf("every region alive everywhere: %w", err)
	}
	return f, nil
}

// allAlive tells whether every running region sees every region alive.
func (f *simFederation) allAlive() bool {
	for _, r := range f.regions {
		n := 0
		for _, reg := range r.Gossip.Regions() {
			if reg.Health == "alive" {
				n++
			}
		}
		if n != len(f.regions) {
			return false
		}
	}
	return true
}

func (f *simFederation) stop() {
	var wg sync.WaitGroup
	for _, r := range f.regions {
		wg.Add(1)
		go func() { defer wg.Done(); r.Stop() }()
	}
	wg.Wait()
}

// populate creates, in each region given, JobsPerRegion jobs of
// TasksPerJob tasks named for it, each through its own region's router
// (so each is replicated to its replica region), and waits until all of
// them run. It returns the time from the first create to all running.
func (f *simFederation) populate(ctx context.Context, regions []*inproc.Region) (time.Duration, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(regions))
	for _, r := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range f.size.JobsPerRegion {
				spec := &pb.JobSpec{
					Name: fmt.Sprintf("%s-batch-%04d", r.Name, j), Type: pb.JobType_JOB_TYPE_BATCH,
					Pool: f.leaves[j%len(f.leaves)], Region: r.Name, Preemptible: true, Instances: uint32(f.size.TasksPerJob),
					Failover: &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_ANY},
					Task:     &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.01, MemMb: 16}},
				}
				if _, err := r.Router.Jobs().CreateJob(ctx, &pb.CreateJobRequest{Spec: spec}); err != nil {
					errs <- fmt.Errorf("create %s in %s: %w", spec.Name, r.Name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, err
	}
	want := f.size.JobsPerRegion * f.size.TasksPerJob
	for _, r := range regions {
		var got int
		if err := inproc.WaitFor(ctx, f.size.Budget, func() bool {
			got = running(r.Engine, nil)
			return got >= want
		}); err != nil {
			return 0, fmt.Errorf("%s: %d of %d tasks running: %w", r.Name, got, want, err)
		}
	}
	return time.Since(start), nil
}

// running counts the RUNNING tasks of a shard's jobs, of the jobs named
// when ids is not nil.
func running(e *jobmgr.Engine, ids []model.JobID) int {
	n := 0
	if ids == nil {
		for _, j := range e.Reads().ListJobs(jobmgr.JobFilter{}) {
			n += int(j.Status.TaskStates[model.TaskRunning])
		}
		return n
	}
	for _, id := range ids {
		if j, err := e.Reads().GetJob(id); err == nil {
			n += int(j.Status.TaskStates[model.TaskRunning])
		}
	}
	return n
}

// poolTree makes n pools: the root, then breadth first children of fanout
// 10. The federation-wide reservations are small against the capacity
// (each parent reserves for half its children 2/11 of its own); limits are
// absent; shares are 1 to 4.
func poolTree(n int, reserved model.Resources, seed uint64) []model.Pool {
	const fanout = 10
	rng := rand.New(rand.NewPCG(seed, 7))
	unlimited := model.Resources{}
	for k := range model.ResourceKinds {
		unlimited = unlimited.Set(k, model.Unlimited)
	}
	pools := []model.Pool{{Path: jobmgr.RootPool, Reservation: reserved,
		Limit: unlimited, Share: model.EqualShares(1)}}
	for parent := 0; len(pools) < n; parent++ {
		for c := 0; c < fanout && len(pools) < n; c++ {
			var r model.Resources
			if c%2 == 0 {
				for k := range model.ResourceKinds {
					r = r.Set(k, pools[parent].Reservation.Get(k)*2/(fanout+1))
				}
			}
			prefix := pools[parent].Path
			if prefix == jobmgr.RootPool {
				prefix = ""
			}
			pools = append(pools, model.Pool{Path: prefix + "/p" + strconv.Itoa(c), Reservation: r, Limit: unlimited,
				Share: model.EqualShares(float64(1 + rng.IntN(4)))})
		}
	}
	return pools
}

// leaves lists the pools with no children.
func leaves(pools []model.Pool) []string {
	parents := map[string]bool{}
	for _, p := range pools {
		if pp, ok := entitlement.ParentPath(p.Path); ok {
			parents[pp] = true
		}
	}
	var out []string
	for _, p := range pools {
		if !parents[p.Path] {
			out = append(out, p.Path)
		}
	}
	return out
}
