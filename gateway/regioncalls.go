package gateway

import (
	"context"
	"errors"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RegionMoves verifies the jobs a region creates and stops on its own
// behalf: the role region may create and stop only the jobs it relocates
// (the federation knows which those are).
type RegionMoves interface {
	// CheckRegionCreate reports why region may not create req's job, nil
	// when it relocates a job it may.
	CheckRegionCreate(ctx context.Context, region string, req *pb.CreateJobRequest) error
	// CheckRegionStop reports why region may not stop job, nil when it
	// relocated it, or the job is a relocated copy of one of its own.
	CheckRegionStop(ctx context.Context, region, job string) error
}

// errRegionBatch: relocations are made one job at a time.
var errRegionBatch = errors.New("a region creates the jobs it relocates one by one, not in a batch")

// errNoMoves: the server has nothing to verify relocations with.
var errNoMoves = errors.New("this server verifies no relocations")

// regionMove decides a create or stop a region makes on its own behalf,
// which the role region allows only as the federation's moves: nil when
// allowed. Every RPC of those actions is listed; any other is refused.
func (g *guard) regionMove(ctx context.Context, id auth.Identity, rule auth.Rule, method string, req any) error {
	var err error
	switch r := req.(type) {
	case nil:
		err = errNoMoves
	case *pb.CreateJobRequest:
		err = errNoMoves
		if g.moves != nil {
			err = g.moves.CheckRegionCreate(ctx, id.Name, r)
		}
	case *pb.StopJobRequest:
		err = g.checkStop(ctx, id, r.GetId())
	case *pb.StopTasksRequest:
		err = g.checkStop(ctx, id, r.GetJobId())
	case *pb.CreateJobsRequest:
		err = errRegionBatch
	default:
		err = errors.New(method + " is not a move")
	}
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err // the job could not be looked up: NotFound, Unavailable
	}
	return status.Errorf(codes.PermissionDenied, "region %s (role region) may not %s: %v", id.Name, rule.Action, err)
}

func (g *guard) checkStop(ctx context.Context, id auth.Identity, job string) error {
	if g.moves == nil {
		return errNoMoves
	}
	return g.moves.CheckRegionStop(ctx, id.Name, job)
}
