package federation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// A region calling on its own behalf (its certificate, no caller asserted)
// may create and stop jobs only as a failover moves them. The receiving
// region checks what it can on its own:
//
//   - a create is a relocation: its spec carries LabelRelocatedFrom
//     "<job>@<failed region>" and LabelRelocatedBy naming the caller, its
//     request id is the one relocation sends for that job, it is for this
//     region, and the region whose job it is was declared failed here too
//     (neither the caller nor this region). Failbacks run as the operator
//     who asked for them, not as a region, and so do not come here.
//   - a stop (StopJob, StopTasks) is of a job the caller relocated here
//     (LabelRelocatedBy), or of a relocated copy of the caller's own job
//     (LabelRelocatedFrom "…@<caller>"), which it stops once it is back.
//
// What it cannot check is whether the caller really held a replica of the
// job it relocates: a region's certificate is trusted that far, and no
// further (no job outside a failover, no stop of other jobs).

// LabelRelocatedBy names the region that relocated a job (the holder of
// the replica it was made from).
const LabelRelocatedBy = "peloton.relocated-by"

// ErrNotAMove: what a region asks on its own behalf is not a move it may
// make.
var ErrNotAMove = errors.New("not a relocation this region may make")

// CheckRegionCreate reports why region caller may not create the job of
// req on its own behalf, nil when it is a relocation it may make.
func (r *Router) CheckRegionCreate(_ context.Context, caller string, req *pb.CreateJobRequest) error {
	if r.dir == nil {
		return fmt.Errorf("%w: this region is in no federation", ErrNotAMove)
	}
	return checkRelocation(caller, r.dir.Local(), req, r.health)
}

// CheckRegionStop reports why region caller may not stop job on its own
// behalf, nil when it relocated the job or the job is a relocated copy of
// one of its own.
func (r *Router) CheckRegionStop(ctx context.Context, caller, job string) error {
	resp, err := r.jobs().GetJob(ctx, &pb.GetJobRequest{Id: job})
	if err != nil {
		return err
	}
	return checkRegionStop(caller, job, resp.GetJob().GetSpec().GetLabels())
}

// checkRelocation is CheckRegionCreate's decision; health gives a region's
// health as this region sees it.
func checkRelocation(caller, local string, req *pb.CreateJobRequest, health func(region string) string) error {
	spec := req.GetSpec()
	labels := spec.GetLabels()
	from, ok := labels[LabelRelocatedFrom]
	if !ok {
		return fmt.Errorf("%w: a region creates only the jobs it relocates (label %s)", ErrNotAMove, LabelRelocatedFrom)
	}
	job, failed, ok := strings.Cut(from, "@")
	switch {
	case !ok || job == "" || failed == "":
		return fmt.Errorf("%w: label %s %q: want <job>@<region>", ErrNotAMove, LabelRelocatedFrom, from)
	case labels[LabelRelocatedBy] != caller:
		return fmt.Errorf("%w: label %s is %q, not the caller %s", ErrNotAMove, LabelRelocatedBy, labels[LabelRelocatedBy], caller)
	case req.GetRequestId() != moveRequestID("relocate", job):
		return fmt.Errorf("%w: request id %q is not the relocation of job %s", ErrNotAMove, req.GetRequestId(), job)
	case spec.GetRegion() != local:
		return fmt.Errorf("%w: a relocation to region %q, not to %s", ErrNotAMove, spec.GetRegion(), local)
	case failed == caller || failed == local:
		return fmt.Errorf("%w: region %s relocating a job of %s", ErrNotAMove, caller, failed)
	}
	if h := health(failed); h != "failed" {
		if h == "" {
			h = "unknown"
		}
		return fmt.Errorf("%w: region %s, whose job %s it relocates, is %s here", ErrNotAMove, failed, job, h)
	}
	return nil
}

// checkRegionStop is CheckRegionStop's decision, on the job's labels.
func checkRegionStop(caller, job string, labels map[string]string) error {
	if labels[LabelRelocatedBy] == caller {
		return nil
	}
	if _, from, ok := strings.Cut(labels[LabelRelocatedFrom], "@"); ok && from == caller {
		return nil
	}
	return fmt.Errorf("%w: job %s was neither relocated by region %s nor from it", ErrNotAMove, job, caller)
}
