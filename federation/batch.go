package federation

import (
	"context"
	"strings"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// CreateJobs sends each spec where CreateJob would send it (the region it
// names, else the one the chooser picks; a retried request's spec, where
// its first attempt went), one CreateJobs per region with the specs'
// positions in the request, side by side, and merges the answers in the
// request's order. A spec no region can take, or whose region cannot be
// reached, is refused on its own.
func (r *Router) CreateJobs(ctx context.Context, req *pb.CreateJobsRequest) (*pb.CreateJobsResponse, error) {
	if routed(ctx) {
		return pb.NewJobServiceClient(r.local()).CreateJobs(ctx, req)
	}
	positions, problem := req.SpecPositions()
	if problem != "" {
		return nil, status.Errorf(codes.InvalidArgument, "positions: %s", problem)
	}
	results := make([]*pb.CreateJobsResult, len(req.Jobs))
	parts := map[string][]int{} // region → indexes of its specs
	var order []string
	for i, spec := range req.Jobs {
		region, err := r.regionFor(ctx, req.RequestId, positions[i], spec)
		if err != nil {
			st := status.Convert(err)
			results[i] = refused(positions[i], st.Code(), st.Message())
			continue
		}
		if parts[region] == nil {
			order = append(order, region)
		}
		parts[region] = append(parts[region], i)
	}
	var wg sync.WaitGroup
	for _, region := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.createIn(ctx, region, req, positions, parts[region], results)
		}()
	}
	wg.Wait()
	r.replicateCreated(ctx, req, results)
	return &pb.CreateJobsResponse{Results: results}, nil
}

// regionFor is the region a spec goes to (the spec at position of a
// request), or why none takes it.
func (r *Router) regionFor(ctx context.Context, requestID string, position uint32, spec *pb.JobSpec) (string, error) {
	if spec == nil {
		// The local shard names the problem with the others of its part.
		return r.dir.Local(), nil
	}
	if spec.Region != "" {
		return spec.Region, nil
	}
	if requestID != "" && len(r.dir.Regions()) > 1 {
		// A retry goes where its first attempt went, when this router
		// sent it: the chooser may pick another region now.
		r.mu.Lock()
		region, ok := r.owners[pb.RequestJobID(requestID, position, spec)]
		r.mu.Unlock()
		if ok {
			return region, nil
		}
	}
	if r.choose != nil && len(r.dir.Regions()) > 1 {
		region, why, err := r.choose(ctx, spec)
		if err != nil {
			return "", status.Errorf(codes.FailedPrecondition, "no region can take the job: %v (%s)", err, strings.Join(why, "; "))
		}
		return region, nil
	}
	return r.dir.Local(), nil
}

// createIn sends a region its part of a request (the specs at indexes)
// and fills in their results.
func (r *Router) createIn(ctx context.Context, region string, req *pb.CreateJobsRequest, positions []uint32, indexes []int, results []*pb.CreateJobsResult) {
	part := req
	if len(indexes) < len(req.Jobs) {
		part = &pb.CreateJobsRequest{RequestId: req.RequestId, Jobs: make([]*pb.JobSpec, len(indexes)), Positions: make([]uint32, len(indexes))}
		for k, i := range indexes {
			part.Jobs[k], part.Positions[k] = req.Jobs[i], positions[i]
		}
	}
	fail := func(err error) {
		st := status.Convert(err)
		for _, i := range indexes {
			field := ""
			if st.Code() == codes.InvalidArgument && strings.HasPrefix(st.Message(), "region:") {
				field = "region"
			}
			results[i] = refused(positions[i], st.Code(), strings.TrimPrefix(st.Message(), "region: "))
			if field != "" {
				results[i].Message = pb.JobPath(positions[i], field) + ": " + strings.TrimPrefix(st.Message(), "region: ")
			}
		}
	}
	cc, _, err := r.regionConn(ctx, region)
	if err != nil {
		fail(err)
		return
	}
	resp, err := pb.NewJobServiceClient(cc).CreateJobs(ctx, part)
	if err != nil {
		fail(err)
		return
	}
	if got := len(resp.GetResults()); got != len(indexes) {
		fail(status.Errorf(codes.Internal, "region %s answered %d results for %d specs", region, got, len(indexes)))
		return
	}
	for k, i := range indexes {
		res := resp.GetResults()[k]
		results[i] = res
		if res.GetJobId() != "" {
			if res.Region == "" {
				res.Region = region
			}
			r.remember(res.GetJobId(), res.Region)
		}
	}
}

// refused is the result of a spec refused before any region saw it.
func refused(position uint32, code codes.Code, msg string) *pb.CreateJobsResult {
	return &pb.CreateJobsResult{Code: int32(code), Message: pb.JobPath(position, "") + ": " + msg}
}

// replicateConcurrency bounds the replica puts of one CreateJobs call in
// flight: puts for one replica region that arrive together are written
// together (see replicaBook), so a batch's replicas cost a few writes of
// the list instead of one per job.
const replicateConcurrency = 32

// replicateCreated sends a copy of each job the call created to its
// replica region, as CreateJob does, replicateConcurrency at a time; with
// no region to hold replicas it says so once for the call.
func (r *Router) replicateCreated(ctx context.Context, req *pb.CreateJobsRequest, results []*pb.CreateJobsResult) {
	if r.replicas == nil {
		return
	}
	unreplicated := 0
	var g errgroup.Group
	g.SetLimit(replicateConcurrency)
	defer func() { _ = g.Wait() }() // each put reports its own failure
	for i, res := range results {
		if res.GetJobId() == "" || res.GetExisting() {
			continue
		}
		if _, ok := r.replicaRegion(res.GetRegion()); !ok {
			unreplicated++
			continue
		}
		spec := req.Jobs[i]
		job := &pb.Job{Id: res.GetJobId(), ConfigVersion: 1, Spec: proto.Clone(spec).(*pb.JobSpec),
			Status: &pb.JobStatus{State: pb.JobState_JOB_STATE_INITIALIZED, Region: res.GetRegion()}}
		job.Spec.Failover = defaultFailover(spec, spec.GetRegion() != "")
		job.Spec.Region = res.GetRegion()
		g.Go(func() error {
			if _, err := r.replicate(ctx, res.GetRegion(), job, nil); err != nil {
				r.log("job accepted without a replica", "job", job.GetId(), "err", err)
			}
			return nil
		})
	}
	if unreplicated > 0 {
		r.log("jobs accepted without a replica", "jobs", unreplicated, "err", "no other region is alive to hold a replica")
	}
}
