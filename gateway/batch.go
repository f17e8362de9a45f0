package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// itemCall is a call authorised item by item (its rule has Items): the
// guard runs it on the items the caller may act on and puts the refusals
// of the others among its results, each where its item was.
type itemCall struct {
	// allowed runs the call on the items whose refusal is nil and merges
	// the refusals into its answer.
	allowed func(ctx context.Context, req any, refusals []error, h grpc.UnaryHandler) (any, error)
	// outcome sums an answer up for the audit log.
	outcome func(resp any) string
}

var itemCalls = map[string]itemCall{
	pb.JobService_CreateJobs_FullMethodName: {allowed: createJobsAllowed, outcome: createJobsOutcome},
}

// createJobsAllowed runs a CreateJobs call on the specs the caller may
// create; the others are refused with their reason, under their position.
func createJobsAllowed(ctx context.Context, r any, refusals []error, h grpc.UnaryHandler) (any, error) {
	req := r.(*pb.CreateJobsRequest)
	positions, problem := req.SpecPositions()
	if problem != "" {
		return nil, status.Errorf(codes.InvalidArgument, "positions: %s", problem)
	}
	var kept []int
	for i, err := range refusals {
		if err == nil {
			kept = append(kept, i)
		}
	}
	results := make([]*pb.CreateJobsResult, len(req.Jobs))
	if len(kept) > 0 {
		part := req
		if len(kept) < len(req.Jobs) {
			part = &pb.CreateJobsRequest{RequestId: req.RequestId, Jobs: make([]*pb.JobSpec, len(kept)), Positions: make([]uint32, len(kept))}
			for k, i := range kept {
				part.Jobs[k], part.Positions[k] = req.Jobs[i], positions[i]
			}
		}
		resp, err := h(ctx, part)
		if err != nil {
			return nil, err
		}
		got := resp.(*pb.CreateJobsResponse).GetResults()
		if len(got) != len(kept) {
			return nil, status.Errorf(codes.Internal, "%d results for %d job specs", len(got), len(kept))
		}
		for k, i := range kept {
			results[i] = got[k]
		}
	}
	for i, err := range refusals {
		if err != nil {
			st := status.Convert(err)
			results[i] = &pb.CreateJobsResult{Code: int32(st.Code()), Message: pb.JobPath(positions[i], "") + ": " + st.Message()}
		}
	}
	return &pb.CreateJobsResponse{Results: results}, nil
}

// createJobsOutcome says how many specs became jobs and why the others
// did not: "created 9, existing 1, refused 3 (PermissionDenied 2,
// InvalidArgument 1)".
func createJobsOutcome(r any) string {
	resp, ok := r.(*pb.CreateJobsResponse)
	if !ok {
		return ""
	}
	created, existing := 0, 0
	refused := map[codes.Code]int{}
	for _, res := range resp.GetResults() {
		switch {
		case res.GetCode() != 0:
			refused[codes.Code(res.GetCode())]++
		case res.GetExisting():
			existing++
		default:
			created++
		}
	}
	out := fmt.Sprintf("created %d", created)
	if existing > 0 {
		out += fmt.Sprintf(", existing %d", existing)
	}
	if len(refused) > 0 {
		var parts []string
		total := 0
		for code, n := range refused {
			parts = append(parts, fmt.Sprintf("%s %d", code, n))
			total += n
		}
		slices.Sort(parts)
		out += fmt.Sprintf(", refused %d (%s)", total, strings.Join(parts, ", "))
	}
	return out
}
