package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement/placebench"
	"github.com/peloton-federated/peloton/tests/bench/inproc"
)

// passFigures is the global entitlement pass, as region r00's failover
// shell runs it.
type passFigures struct {
	Pools, Regions int
	// Attempts: gathers until one had every region's answer.
	Attempts, Answered int
	// Gather: asking every region for its capacity, host labels and the
	// pools it uses (Router.GatherStates, gRPC on loopback).
	Gather time.Duration
	// Split: policy.SplitPools over every pool and region (the fastest
	// run), and the same over one region's state only (the baseline).
	Split, SplitOne       time.Duration
	SplitCPU, SplitOneCPU time.Duration
}

// measurePass gathers the regions' states at region 0 and times the split
// of every pool among the regions, against the same split for one region.
// It checks that the pass gives every live region a share of every pool.
func (f *simFederation) measurePass(ctx context.Context) (passFigures, error) {
	r := f.regions[0]
	var fig passFigures
	var states []policy.RegionState
	var pools []model.Pool
	// A region that does not answer within the federation's per-call
	// timeout (3 s) is left out of a gather; try a few times for a whole
	// one, and count the gathers that were not.
	for fig.Attempts = 1; ; fig.Attempts++ {
		start := time.Now()
		states, pools, _ = r.Router.GatherStates(ctx)
		took := time.Since(start)
		answered := 0
		for _, st := range states {
			if !st.Seen.IsZero() {
				answered++
				// Each region reports the pools it uses, and every
				// region runs jobs.
				if len(st.Pools) == 0 || len(st.Pools) > f.size.Pools {
					return fig, fmt.Errorf("region %s reported %d pools in use of %d", st.Name, len(st.Pools), f.size.Pools)
				}
			}
		}
		fig.Answered = answered
		if answered == len(f.regions) {
			fig.Gather = took
			break
		}
		if fig.Attempts == 5 {
			return fig, fmt.Errorf("no gather of %d had every region's answer (last: %d of %d)", fig.Attempts, answered, len(f.regions))
		}
	}
	fig.Pools, fig.Regions = len(pools), len(states)
	if fig.Pools != f.size.Pools {
		return fig, fmt.Errorf("the pass sees %d pools, want %d", fig.Pools, f.size.Pools)
	}
	now := time.Now()
	var shares policy.Shares
	fig.Split, fig.SplitCPU = fastest(func() { shares = policy.SplitPools(pools, states, now, time.Minute) })
	if len(shares) != len(f.regions) {
		return fig, fmt.Errorf("the pass gave shares to %d regions of %d", len(shares), len(f.regions))
	}
	// Every pool but the root (each region's own capacity) is split, and
	// its reservation, which the capacity holds, is split whole.
	for _, p := range pools {
		if p.Path == jobmgr.RootPool {
			continue
		}
		var sum model.Resources
		for name, m := range shares {
			sh, ok := m[p.Path]
			if !ok {
				return fig, fmt.Errorf("the pass gave region %s no share of pool %s", name, p.Path)
			}
			sum = sum.Add(sh.Reservation)
		}
		if sum != p.Reservation {
			return fig, fmt.Errorf("pool %s: reservation %v split into shares summing to %v", p.Path, p.Reservation, sum)
		}
	}
	one := []policy.RegionState{states[0]}
	fig.SplitOne, fig.SplitOneCPU = fastest(func() { shares = policy.SplitPools(pools, one, now, time.Minute) })
	if len(shares) != 1 || len(shares[one[0].Name]) != len(pools)-1 {
		return fig, fmt.Errorf("the one-region pass covers %d regions", len(shares))
	}
	return fig, nil
}

// fastest runs f at least 3 times and until 2 s have passed (at most 50
// times), and returns the shortest run and the process's CPU time per run.
func fastest(f func()) (wall, cpu time.Duration) {
	wall = time.Duration(1<<63 - 1)
	start, cpu0 := time.Now(), placebench.CPUTime()
	runs := 0
	for ; runs < 3 || (time.Since(start) < 2*time.Second && runs < 50); runs++ {
		t := time.Now()
		f()
		wall = min(wall, time.Since(t))
	}
	return wall, (placebench.CPUTime() - cpu0) / time.Duration(runs)
}

// routeFigures is jobs routed by the policy against a no-op decision.
type routeFigures struct {
	Jobs, Clients int
	// Policy and NoOp: jobs accepted per second, routed from region r00
	// (the decision, the forward over gRPC, the create persisted in the
	// chosen region, the replica put in its replica region).
	Policy, NoOp float64
	// PolicyBy counts the jobs the policy sent to each region.
	PolicyBy map[string]int
	// Decisions per second of policy.ChooseRegion alone, on the states
	// and shares of one gather.
	Decisions float64
	// Batch: jobs accepted per second routed by the policy through
	// CreateJobs (BatchJobs jobs, BatchSize per request, BatchClients
	// callers); BatchBy counts the jobs it sent to each region.
	BatchJobs, BatchSize, BatchClients int
	Batch                              float64
	BatchBy                            map[string]int
}

// measureRouting routes size.RouteJobs single-task jobs that name no region
// through region r00's router from size.Clients callers, first with a
// chooser that takes regions in turn (no decision), then with the routing
// policy. It checks that every job was accepted and is held by the region
// that accepted it.
func (f *simFederation) measureRouting(ctx context.Context, logf func(string, ...any)) (routeFigures, error) {
	r := f.regions[0]
	fig := routeFigures{Jobs: f.size.RouteJobs, Clients: f.size.Clients}
	var turn atomic.Uint64
	names := make([]string, len(f.regions))
	for i, reg := range f.regions {
		names[i] = reg.Name
	}
	r.Router.SetChooser(func(context.Context, *pb.JobSpec) (string, []string, error) {
		return names[int(turn.Add(1))%len(names)], nil, nil
	})
	noop, _, err := f.route(ctx, "noop")
	if err != nil {
		return fig, err
	}
	logf("no-op decision: %d jobs in %.1fs", fig.Jobs, noop.Seconds())
	r.Router.SetChooser(r.Router.PolicyChooser())
	pol, by, err := f.route(ctx, "policy")
	if err != nil {
		return fig, err
	}
	fig.NoOp, fig.Policy, fig.PolicyBy = float64(fig.Jobs)/noop.Seconds(), float64(fig.Jobs)/pol.Seconds(), by
	if f.size.BatchJobs > 0 {
		batch, by, err := f.routeBatches(ctx)
		if err != nil {
			return fig, err
		}
		logf("policy through CreateJobs: %d jobs in %.1fs", f.size.BatchJobs, batch.Seconds())
		fig.BatchJobs, fig.BatchSize, fig.BatchClients = f.size.BatchJobs, f.size.BatchSize, f.size.BatchClients
		fig.Batch, fig.BatchBy = float64(f.size.BatchJobs)/batch.Seconds(), by
	}

	states, pools, _ := r.Router.GatherStates(ctx)
	shares := policy.SplitPools(pools, states, time.Now(), time.Minute)
	n, start := 0, time.Now()
	for ; n < 100 || time.Since(start) < time.Second; n++ {
		req := policy.JobRequest{Pool: f.leaves[n%len(f.leaves)], PerTask: model.Resources{MilliCPU: 10, MemMB: 16}, Instances: 1}
		if _, err := policy.ChooseRegion(req, states, shares); err != nil {
			return fig, fmt.Errorf("routing decision: %w", err)
		}
	}
	fig.Decisions = float64(n) / time.Since(start).Seconds()
	return fig, nil
}

// route creates RouteJobs jobs through region r00 and returns the time
// until the last was accepted and how many each region accepted.
func (f *simFederation) route(ctx context.Context, tag string) (time.Duration, map[string]int, error) {
	r := f.regions[0]
	return f.createConcurrently(tag, f.size.Clients, f.size.RouteJobs, 1, func(i int) (map[string]string, error) {
		spec := f.routedSpec(tag, i)
		resp, err := r.Router.Jobs().CreateJob(ctx, &pb.CreateJobRequest{Spec: spec})
		if err != nil {
			return nil, fmt.Errorf("routing job %s: %w", spec.Name, err)
		}
		return map[string]string{resp.GetJob().GetId(): resp.GetJob().GetStatus().GetRegion()}, nil
	})
}

// routeBatches creates BatchJobs jobs through region r00 with CreateJobs,
// BatchSize specs per request from BatchClients callers, and returns the
// time until the last was accepted and how many each region accepted.
// Every spec must be accepted.
func (f *simFederation) routeBatches(ctx context.Context) (time.Duration, map[string]int, error) {
	r := f.regions[0]
	return f.createConcurrently("batch", f.size.BatchClients, f.size.BatchJobs, f.size.BatchSize, func(first int) (map[string]string, error) {
		req := &pb.CreateJobsRequest{RequestId: fmt.Sprintf("fedsim-batch-%06d", first)}
		for i := first; i < min(first+f.size.BatchSize, f.size.BatchJobs); i++ {
			req.Jobs = append(req.Jobs, f.routedSpec("batch", i))
		}
		resp, err := r.Router.Jobs().CreateJobs(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("batch at job %d: %w", first, err)
		}
		ids := map[string]string{}
		for _, res := range resp.GetResults() {
			if res.GetJobId() == "" {
				return nil, fmt.Errorf("batch at job %d: refused: %s", first, res.GetMessage())
			}
			ids[res.GetJobId()] = res.GetRegion()
		}
		return ids, nil
	})
}

// routedSpec is the i-th single-task job routing creates: it names no
// region, and stays where it is put.
func (f *simFederation) routedSpec(tag string, i int) *pb.JobSpec {
	return &pb.JobSpec{Name: fmt.Sprintf("routed-%s-%05d", tag, i), Type: pb.JobType_JOB_TYPE_BATCH,
		Pool: f.leaves[i%len(f.leaves)], Preemptible: true, Instances: 1,
		Failover: &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_NONE},
		Task:     &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.01, MemMb: 16}}}
}

// createConcurrently has callers take the next step of total jobs in
// turn and create them with create, which returns each accepted job's
// region by id. It returns the time until the last was accepted and how
// many each region accepted, and checks that every job was accepted and
// is held where it was.
func (f *simFederation) createConcurrently(tag string, callers, total, step int, create func(first int) (map[string]string, error)) (time.Duration, map[string]int, error) {
	var next atomic.Int64
	var mu sync.Mutex
	ids := map[string]string{}
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				first := int(next.Add(int64(step))) - step
				if first >= total {
					return
				}
				got, err := create(first)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				maps.Copy(ids, got)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if firstErr != nil {
		return 0, nil, firstErr
	}
	by := map[string]int{}
	for _, region := range ids {
		by[region]++
	}
	return took, by, f.checkAccepted(tag, ids, total)
}

// checkAccepted checks that want distinct jobs were accepted and that each
// is held by the region that accepted it.
func (f *simFederation) checkAccepted(tag string, ids map[string]string, want int) error {
	if len(ids) != want {
		return fmt.Errorf("%s: %d distinct jobs accepted of %d", tag, len(ids), want)
	}
	engines := map[string]*jobmgr.Engine{}
	for _, reg := range f.regions {
		engines[reg.Name] = reg.Engine
	}
	for id, region := range ids {
		e := engines[region]
		if e == nil {
			return fmt.Errorf("job %s accepted by unknown region %q", id, region)
		}
		if _, err := e.Reads().GetJob(model.JobID(id)); err != nil {
			return fmt.Errorf("job %s not in region %s that accepted it: %w", id, region, err)
		}
	}
	return nil
}

// failoverFigures is the loss of one region.
type failoverFigures struct {
	Victim, Holder string
	Jobs, Tasks    int
	// Initial: from the first create to all of the victim's tasks RUNNING
	// when it was populated (alone), the baseline.
	Initial time.Duration
	// Detected: from the crash until the holder sees the victim failed;
	// Running: until every one of its tasks runs again elsewhere.
	Detected, Running time.Duration
}

// measureFailover crashes the last region and times its jobs' relocation
// by the region that holds their replicas. It checks that every job was
// relocated once and that every task runs exactly once elsewhere.
func (f *simFederation) measureFailover(ctx context.Context, initial time.Duration) (failoverFigures, error) {
	victim := f.regions[len(f.regions)-1]
	holder := f.regions[0]
	fig := failoverFigures{Victim: victim.Name, Holder: holder.Name, Initial: initial}
	// The jobs that may move: the holder's replicas of them say so (the
	// routed jobs stay where they were routed).
	reps, err := holder.Replicas.LoadAll(ctx, victim.Name)
	if err != nil {
		return fig, err
	}
	var ids []model.JobID
	for _, rep := range reps {
		if rep.GetJob().GetSpec().GetFailover().GetMode() == pb.FailoverPolicy_MODE_ANY {
			fig.Jobs++
			fig.Tasks += int(rep.GetJob().GetSpec().GetInstances())
			ids = append(ids, model.JobID(rep.GetJob().GetId()))
		}
	}
	if want := f.size.JobsPerRegion * f.size.TasksPerJob; fig.Tasks != want {
		return fig, fmt.Errorf("%s holds replicas of %d relocatable tasks of %s, want %d", holder.Name, fig.Tasks, victim.Name, want)
	}
	if got := running(victim.Engine, ids); got != fig.Tasks {
		return fig, fmt.Errorf("before the crash %s runs %d of its %d relocatable tasks", victim.Name, got, fig.Tasks)
	}
	engines := map[string]*jobmgr.Engine{}
	for _, reg := range f.regions[:len(f.regions)-1] {
		engines[reg.Name] = reg.Engine
	}
	start := time.Now()
	if err := victim.Crash(ctx); err != nil {
		return fig, err
	}
	f.regions = f.regions[:len(f.regions)-1]
	err = inproc.WaitFor(ctx, f.size.Budget, func() bool {
		for _, reg := range holder.Gossip.Regions() {
			if reg.Name == victim.Name && reg.Health == "failed" {
				return true
			}
		}
		return false
	})
	if err != nil {
		return fig, fmt.Errorf("%s not seen failed: %w", victim.Name, err)
	}
	fig.Detected = time.Since(start)
	var got int
	err = inproc.WaitFor(ctx, f.size.Budget, func() bool {
		reps, err := holder.Replicas.LoadAll(ctx, victim.Name)
		if err != nil {
			return false
		}
		got = 0
		for _, rep := range reps {
			if e := engines[rep.GetRelocatedRegion()]; e != nil && rep.GetRelocatedJobId() != "" {
				got += running(e, []model.JobID{model.JobID(rep.GetRelocatedJobId())})
			}
		}
		return got >= fig.Tasks
	})
	if err != nil {
		return fig, fmt.Errorf("%d of %d relocated tasks running: %w", got, fig.Tasks, err)
	}
	fig.Running = time.Since(start)
	// Exactly once: one relocated job per job of the victim, in all the
	// live regions, and exactly its tasks running.
	relocated, tasks := 0, 0
	for _, e := range engines {
		for _, j := range e.Reads().ListJobs(jobmgr.JobFilter{Labels: map[string]*string{federation.LabelRelocatedFrom: nil}}) {
			relocated++
			tasks += int(j.Status.TaskStates[model.TaskRunning])
		}
	}
	if relocated != fig.Jobs || tasks != fig.Tasks {
		return fig, fmt.Errorf("relocated %d jobs of %d, %d tasks running of %d", relocated, fig.Jobs, tasks, fig.Tasks)
	}
	return fig, nil
}

// gossipFigures is gossip traffic over a window.
type gossipFigures struct {
	Members int
	Window  time.Duration
	// PerRegion: bytes sent per region per second (UDP, TCP).
	UDP, TCP float64
}

// measureGossip counts the bytes the members send over window.
func measureGossip(ctx context.Context, members int, window time.Duration) (gossipFigures, error) {
	g := countGossip()
	u0, t0 := g.sent()
	start := time.Now()
	select {
	case <-ctx.Done():
		return gossipFigures{}, ctx.Err()
	case <-time.After(window):
	}
	u1, t1 := g.sent()
	secs := time.Since(start).Seconds()
	fig := gossipFigures{Members: members, Window: time.Since(start),
		UDP: float64(u1-u0) / secs / float64(members), TCP: float64(t1-t0) / secs / float64(members)}
	if u1 == u0 {
		return fig, fmt.Errorf("no gossip sent in %s", window)
	}
	return fig, nil
}
