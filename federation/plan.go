package federation

import (
	"context"
	"sort"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// SetChooser sets how jobs that name no region are routed.
func (r *Router) SetChooser(c Chooser) { r.choose = c }

// PlanFailover answers, for each region, whether the others could absorb
// its relocatable work within quotas and capacity, from the replicas the
// federation keeps of its jobs.
func (r *Router) PlanFailover(ctx context.Context, req *pb.PlanFailoverRequest) (*pb.PlanFailoverResponse, error) {
	if req.Region != "" {
		if _, ok := r.region(req.Region); !ok {
			return nil, status.Errorf(codes.InvalidArgument, "region: unknown region %q (regions: %s)", req.Region, r.regionNames())
		}
	}
	states, pools, err := r.currentStates(ctx)
	if err != nil {
		return nil, err
	}
	jobs := map[string][]policy.RelocatableJob{}
	names := map[string]string{}
	pinned := map[string]uint32{}
	for _, reg := range r.dir.Regions() {
		if req.Region != "" && reg.Name != req.Region {
			continue
		}
		reps, err := r.replicasOf(ctx, reg.Name)
		if err != nil {
			return nil, err
		}
		for _, rep := range reps {
			spec := rep.GetJob().GetSpec()
			id := rep.GetJob().GetId()
			names[id] = spec.GetName()
			pol := defaultFailover(spec, false)
			if pol.GetMode() == pb.FailoverPolicy_MODE_NONE {
				pinned[reg.Name]++
				continue
			}
			if rep.GetRelocatedRegion() != "" {
				continue
			}
			pool := spec.GetPool()
			if pool == "" {
				pool = "/"
			}
			jobs[reg.Name] = append(jobs[reg.Name], policy.RelocatableJob{
				ID: id, Pool: pool, PerTask: resources(spec.GetTask().GetResources()),
				Remaining:   spec.GetInstances() - uint32(len(rep.GetSucceeded())),
				Constraints: constraintsFrom(spec.GetTask().GetConstraints()),
				Targets:     pol.GetRegions(),
			})
		}
	}
	plans := policy.PlanAll(jobs, states, pools)
	out := &pb.PlanFailoverResponse{}
	for _, reg := range r.dir.Regions() {
		if req.Region != "" && reg.Name != req.Region {
			continue
		}
		p := plans[reg.Name]
		rp := &pb.RegionPlan{Region: reg.Name, Pinned: pinned[reg.Name]}
		for _, m := range p.Moves {
			rp.Moves = append(rp.Moves, &pb.PlannedMove{JobId: m.Job, JobName: names[m.Job], ToRegion: m.To})
		}
		for _, u := range p.Unplaced {
			rp.Unplaced = append(rp.Unplaced, &pb.PlannedMove{JobId: u.Job, JobName: names[u.Job], Reason: u.Reason})
		}
		out.Plans = append(out.Plans, rp)
	}
	sort.Slice(out.Plans, func(i, j int) bool { return out.Plans[i].Region < out.Plans[j].Region })
	return out, nil
}
