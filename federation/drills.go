package federation

import (
	"context"
	"crypto/rand"
	"fmt"
	"sort"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// DrillStore keeps drill reports.
type DrillStore interface {
	LoadDrills(ctx context.Context) ([]*pb.Drill, error)
	SaveDrills(ctx context.Context, drills []*pb.Drill) error
}

// drills runs and records drills started at this region.
type drills struct {
	mu    sync.Mutex
	store DrillStore
}

// Isolation cuts the local region off (fence the shard, stop gossip) and
// heals it; the process wiring provides it.
type Isolation interface {
	Isolate(ctx context.Context) error
	Heal(ctx context.Context) error
}

// SetDrills enables drills: reports are kept in st; iso isolates this
// region when a drill elsewhere asks it to.
func (r *Router) SetDrills(st DrillStore, iso Isolation) {
	r.drills = &drills{store: st}
	r.isolation = iso
}

func (r *Router) IsolateRegion(ctx context.Context, req *pb.IsolateRegionRequest) (*pb.IsolateRegionResponse, error) {
	if req.Region != r.dir.Local() {
		// A failed region is still reached at its last known address: that
		// is how a drill heals it.
		reg, ok := r.region(req.Region)
		if !ok || reg.Addr == "" {
			return nil, status.Errorf(codes.InvalidArgument, "region: unknown region %q (regions: %s)", req.Region, r.regionNames())
		}
		c, err := r.conn(reg)
		if err != nil {
			return nil, err
		}
		return pb.NewFederationServiceClient(c).IsolateRegion(ctx, req)
	}
	if r.isolation == nil {
		return nil, status.Error(codes.FailedPrecondition, "this region cannot be isolated (no gossip)")
	}
	var err error
	if req.Isolated {
		err = r.isolation.Isolate(ctx)
	} else {
		err = r.isolation.Heal(ctx)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "isolate %v: %v", req.Isolated, err)
	}
	return &pb.IsolateRegionResponse{}, nil
}

func newDrillID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("drill-%x", b)
}

func (r *Router) StartDrill(ctx context.Context, req *pb.StartDrillRequest) (*pb.StartDrillResponse, error) {
	if r.drills == nil {
		return nil, status.Error(codes.FailedPrecondition, "drills need a federation of several regions with gossip")
	}
	if _, ok := r.region(req.Region); !ok {
		return nil, status.Errorf(codes.InvalidArgument, "region: unknown region %q (regions: %s)", req.Region, r.regionNames())
	}
	if req.DurationSeconds < 0 || req.DurationSeconds > 3600 {
		return nil, status.Error(codes.InvalidArgument, "duration_seconds: must be between 0 and 3600")
	}
	if req.Region == r.dir.Local() {
		// The drill runs from a region that stays up.
		peers := r.peers()
		if len(peers) == 0 {
			return nil, status.Error(codes.FailedPrecondition, "no other region is alive to run the drill from")
		}
		c, err := r.conn(peers[0])
		if err != nil {
			return nil, err
		}
		return pb.NewFederationServiceClient(c).StartDrill(ctx, req)
	}
	d := &pb.Drill{Id: newDrillID(), Region: req.Region, State: "running", StartTime: timestamppb.Now()}
	duration := time.Duration(req.DurationSeconds * float64(time.Second))
	if duration == 0 {
		duration = 30 * time.Second
	}
	if err := r.saveDrill(ctx, d); err != nil {
		return nil, err
	}
	// The drill outlives the call: it runs under the router's context, so
	// it ends when the server stops (Close waits for it). It acts for the
	// caller who started it: the calls it makes to other regions (isolating
	// and healing the region) carry the caller's identity, as a forwarded
	// call does, not the region's own, which may not manage regions.
	caller, _ := metadata.FromIncomingContext(ctx)
	caller = caller.Copy()
	r.bg.goRun(func(ctx context.Context) { r.runDrill(metadata.NewIncomingContext(ctx, caller), d, duration) })
	return &pb.StartDrillResponse{Drill: d}, nil
}

func (r *Router) saveDrill(ctx context.Context, d *pb.Drill) error {
	r.drills.mu.Lock()
	defer r.drills.mu.Unlock()
	list, err := r.drills.store.LoadDrills(ctx)
	if err != nil {
		return status.Errorf(codes.Unavailable, "load drills: %v", err)
	}
	found := false
	for i := range list {
		if list[i].Id == d.Id {
			list[i], found = d, true
		}
	}
	if !found {
		list = append(list, d)
	}
	if err := r.drills.store.SaveDrills(ctx, list); err != nil {
		return status.Errorf(codes.Unavailable, "save drill: %v", err)
	}
	return nil
}

func (r *Router) GetDrill(ctx context.Context, req *pb.GetDrillRequest) (*pb.GetDrillResponse, error) {
	all, err := r.ListDrills(ctx, &pb.ListDrillsRequest{})
	if err != nil {
		return nil, err
	}
	for _, d := range all.Drills {
		if d.Id == req.Id {
			return &pb.GetDrillResponse{Drill: d}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "drill %s not found", req.Id)
}

// ListDrills lists the drills every reachable region ran.
func (r *Router) ListDrills(ctx context.Context, req *pb.ListDrillsRequest) (*pb.ListDrillsResponse, error) {
	answers, _ := fanOut(r, ctx, func(ctx context.Context) (*pb.ListDrillsResponse, error) {
		if r.drills == nil {
			return &pb.ListDrillsResponse{}, nil
		}
		r.drills.mu.Lock()
		defer r.drills.mu.Unlock()
		list, err := r.drills.store.LoadDrills(ctx)
		return &pb.ListDrillsResponse{Drills: list}, err
	}, func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListDrillsResponse, error) {
		return pb.NewFederationServiceClient(c).ListDrills(ctx, req)
	})
	out := &pb.ListDrillsResponse{}
	seen := map[string]bool{}
	for _, region := range sortedKeys(answers) {
		for _, d := range answers[region].GetDrills() {
			if !seen[d.Id] {
				seen[d.Id] = true
				out.Drills = append(out.Drills, d)
			}
		}
	}
	sort.Slice(out.Drills, func(i, j int) bool {
		return out.Drills[i].GetStartTime().AsTime().Before(out.Drills[j].GetStartTime().AsTime())
	})
	return out, nil
}

// health returns how this region sees another.
func (r *Router) health(name string) string {
	reg, _ := r.region(name)
	return reg.Health
}

// waitFor polls cond every 100ms until it holds or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) > limit || ctx.Err() != nil {
			return time.Since(start), false
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// drillCleanup bounds the work a drill does after the server began to
// stop: healing its region and saving the report.
const drillCleanup = 10 * time.Second

// keepDrill saves a drill's report; a report that cannot be saved is
// reported (logged and counted), never dropped silently.
func (r *Router) keepDrill(ctx context.Context, d *pb.Drill) {
	if err := r.saveDrill(ctx, d); err != nil {
		r.reportError("drill", "drill report not saved", err, "drill", d.GetId(), "state", d.GetState())
	}
}

// runDrill isolates the region, measures detection and relocation, heals
// it after the duration and measures failback, then keeps the report. When
// ctx ends (the server stops) it heals the region and records the drill as
// cut short, within drillCleanup.
func (r *Router) runDrill(ctx context.Context, d *pb.Drill, duration time.Duration) {
	region := d.Region
	fail := func(msg string) {
		d.State, d.Message, d.EndTime = "failed", msg, timestamppb.Now()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drillCleanup)
		defer cancel()
		r.keepDrill(cctx, d)
	}
	// heal ends the region's isolation whatever ctx says: a region is never
	// left cut off by a drill that stopped.
	heal := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drillCleanup)
		defer cancel()
		if _, err := r.IsolateRegion(cctx, &pb.IsolateRegionRequest{Region: region, Isolated: false}); err != nil {
			r.reportError("drill", "healing the region of a drill cut short", err, "drill", d.GetId(), "region", region)
		}
	}
	start := time.Now()
	if _, err := r.IsolateRegion(ctx, &pb.IsolateRegionRequest{Region: region, Isolated: true}); err != nil {
		// The call may have landed though its answer did not come back
		// (this server stopping, a timeout): healing is harmless if not.
		heal()
		if ctx.Err() != nil {
			fail("the server stopped during the drill")
		} else {
			fail("isolating the region: " + status.Convert(err).Message())
		}
		return
	}
	healed := false
	defer func() {
		if ctx.Err() == nil || d.GetState() == "completed" {
			return
		}
		// Stopped mid-drill: never leave the region cut off.
		if !healed {
			heal()
		}
		fail("the server stopped during the drill")
	}()
	limit := duration + 2*time.Minute
	if took, ok := waitFor(ctx, limit, func() bool { return r.health(region) == "failed" }); ok {
		d.DetectionSeconds = took.Seconds()
	} else {
		d.Message = "the region was never declared failed"
	}
	r.keepDrill(ctx, d)
	// Relocation: every replica of the region's jobs moved, and the new
	// jobs have tasks running or done.
	moved := func() (bool, []*pb.PlannedMove, []*pb.PlannedMove) {
		reps, err := r.replicasOf(ctx, region)
		if err != nil {
			return false, nil, nil
		}
		var ok, not []*pb.PlannedMove
		done := true
		for _, rep := range reps {
			pol := defaultFailover(rep.GetJob().GetSpec(), false)
			m := &pb.PlannedMove{JobId: rep.GetJob().GetId(), JobName: rep.GetJob().GetSpec().GetName(), ToRegion: rep.GetRelocatedRegion()}
			switch {
			case pol.GetMode() == pb.FailoverPolicy_MODE_NONE:
				m.Reason = "failover policy none: stays with the region"
				not = append(not, m)
			case rep.GetRelocatedRegion() == "":
				m.Reason = "not relocated (yet)"
				not = append(not, m)
				done = false
			default:
				m.Reason = "relocated as " + rep.GetRelocatedJobId()
				if rep.GetRelocatedJobId() != "" && !r.started(ctx, rep.GetRelocatedJobId()) {
					done = false
				}
				ok = append(ok, m)
			}
		}
		return done, ok, not
	}
	if d.DetectionSeconds > 0 {
		if _, ok := waitFor(ctx, limit, func() bool { done, _, _ := moved(); return done }); ok {
			d.RelocationSeconds = time.Since(start).Seconds()
		}
	}
	_, d.Moved, d.NotMoved = moved()
	r.keepDrill(ctx, d)
	if rest := duration - time.Since(start); rest > 0 {
		select {
		case <-ctx.Done():
			return // the deferred cleanup heals and records
		case <-time.After(rest):
		}
	}
	healStart := time.Now()
	if _, err := r.IsolateRegion(ctx, &pb.IsolateRegionRequest{Region: region, Isolated: false}); err != nil {
		fail("healing the region: " + status.Convert(err).Message())
		return
	}
	healed, d.State = true, "healed"
	if _, ok := waitFor(ctx, limit, func() bool { return r.health(region) == "alive" && r.originalsStopped(ctx, region, d.Moved) }); ok {
		d.FailbackSeconds = time.Since(healStart).Seconds()
		d.State = "completed"
	} else {
		d.State, d.Message = "failed", "the region did not come back with its relocated copies stopped"
	}
	if ctx.Err() != nil {
		return // the deferred cleanup records it
	}
	d.EndTime = timestamppb.Now()
	r.keepDrill(ctx, d)
}

// replicasOf collects, from every reachable region, the replicas of a
// region's jobs: one per job, the newest (newestReplicas).
func (r *Router) replicasOf(ctx context.Context, owner string) ([]*pb.Replica, error) {
	held, _ := r.replicasHeld(ctx, owner)
	held = newestReplicas(r.dir.Local(), held)
	out := make([]*pb.Replica, len(held))
	for i, h := range held {
		out[i] = h.rep
	}
	return out, nil
}

// started reports whether a job has tasks running or finished.
func (r *Router) started(ctx context.Context, job string) bool {
	resp, err := r.jobs().GetJob(ctx, &pb.GetJobRequest{Id: job})
	if err != nil {
		return false
	}
	switch resp.GetJob().GetStatus().GetState() {
	case pb.JobState_JOB_STATE_RUNNING, pb.JobState_JOB_STATE_SUCCEEDED:
		return true
	}
	return false
}

// originalsStopped reports whether the region stopped its own copies of the
// jobs that were relocated.
func (r *Router) originalsStopped(ctx context.Context, region string, moved []*pb.PlannedMove) bool {
	reg, ok := r.region(region)
	if !ok {
		return false
	}
	c, err := r.conn(reg)
	if err != nil {
		return false
	}
	for _, m := range moved {
		resp, err := pb.NewJobServiceClient(c).GetJob(ctx, &pb.GetJobRequest{Id: m.JobId})
		if err != nil {
			return false
		}
		switch resp.GetJob().GetStatus().GetState() {
		case pb.JobState_JOB_STATE_KILLED, pb.JobState_JOB_STATE_SUCCEEDED, pb.JobState_JOB_STATE_FAILED:
		default:
			return false
		}
	}
	return true
}
