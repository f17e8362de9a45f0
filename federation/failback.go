package federation

import (
	"context"
	"fmt"
	"sort"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// LabelFailedBackFrom marks a job an operator moved back to its region:
// "<job id>@<region it ran in meanwhile>".
const LabelFailedBackFrom = "peloton.failed-back-from"

// heldReplica is a replica and the region that keeps it.
type heldReplica struct {
	holder string
	rep    *pb.Replica
}

// replicasHeld collects the replicas of owner's jobs with their holders,
// from this region and every region it does not hold failed; errs has the
// regions that did not answer.
func (r *Router) replicasHeld(ctx context.Context, owner string) ([]heldReplica, map[string]error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListReplicasResponse, error) {
		return r.ListReplicas(ctx, &pb.ListReplicasRequest{OwnerRegion: owner})
	}, func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListReplicasResponse, error) {
		return pb.NewFederationServiceClient(c).ListReplicas(ctx, &pb.ListReplicasRequest{OwnerRegion: owner})
	})
	var out []heldReplica
	for _, region := range sortedKeys(answers) {
		if region == owner {
			continue
		}
		for _, rep := range answers[region].GetReplicas() {
			out = append(out, heldReplica{holder: region, rep: rep})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rep.GetJob().GetId() < out[j].rep.GetJob().GetId() })
	delete(errs, owner)
	return out, errs
}

// putReplicaAt stores a replica in the region that holds it.
func (r *Router) putReplicaAt(ctx context.Context, holder string, rep *pb.Replica) error {
	reg, ok := r.region(holder)
	if !ok && holder != r.dir.Local() {
		return fmt.Errorf("region %s unknown", holder)
	}
	reg.Name = holder
	return r.putReplicaIn(ctx, reg, rep)
}

func (r *Router) FailBack(ctx context.Context, req *pb.FailBackRequest) (*pb.FailBackResponse, error) {
	if _, _, err := r.target(req.Region); err != nil {
		return nil, err
	}
	if h := r.health(req.Region); h != "alive" && req.Region != r.dir.Local() {
		return nil, status.Errorf(codes.FailedPrecondition, "region %s is %s: fail back once it is alive", req.Region, h)
	}
	out := &pb.FailBackResponse{}
	held, _ := r.replicasHeld(ctx, req.Region)
	// A relocation is recorded by every region that was not failed for
	// its relocator: the job moves back once, and each of them records it.
	back := map[string]*pb.Replica{} // job → its replica as recorded after the move; nil if not moved
	for _, hr := range held {
		rep := hr.rep
		from, moved := rep.GetRelocatedRegion(), rep.GetRelocatedJobId()
		if from == "" || from == req.Region {
			continue // never relocated, or already back
		}
		if done, ok := back[rep.GetJob().GetId()]; ok {
			if done != nil {
				rep.RelocatedRegion, rep.RelocatedJobId, rep.RelocatedTime = done.RelocatedRegion, done.RelocatedJobId, done.RelocatedTime
				if err := r.putReplicaAt(ctx, hr.holder, rep); err != nil {
					r.reportError("failback", "a failback not recorded by a holder of the job's relocation", err, "job", rep.GetJob().GetId(), "holder", hr.holder)
				}
			}
			continue
		}
		back[rep.GetJob().GetId()] = nil
		m := &pb.PlannedMove{JobId: rep.GetJob().GetId(), JobName: rep.GetJob().GetSpec().GetName(), ToRegion: req.Region}
		var remaining uint32
		if moved != "" {
			got, err := r.jobs().GetJob(ctx, &pb.GetJobRequest{Id: moved})
			if err != nil {
				m.Reason = "relocated copy " + moved + ": " + status.Convert(err).Message()
				out.NotMoved = append(out.NotMoved, m)
				continue
			}
			j := got.GetJob()
			switch j.GetStatus().GetState() {
			case pb.JobState_JOB_STATE_SUCCEEDED, pb.JobState_JOB_STATE_FAILED, pb.JobState_JOB_STATE_KILLED:
			default:
				remaining = j.GetSpec().GetInstances() - j.GetStatus().GetTaskStates()["SUCCEEDED"]
			}
		}
		newID := ""
		if remaining > 0 {
			ns := proto.Clone(rep.GetJob().GetSpec()).(*pb.JobSpec)
			ns.Region, ns.Instances = req.Region, remaining
			daemonSpec(ns)
			if ns.MaxRunning > remaining {
				ns.MaxRunning = remaining
			}
			if ns.GangSize > 1 && remaining%ns.GangSize != 0 {
				ns.GangSize = 0
			}
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			delete(ns.Labels, LabelRelocatedFrom)
			delete(ns.Labels, LabelRelocatedBy)
			ns.Labels[LabelFailedBackFrom] = moved + "@" + from
			// Keyed on the copy moved back, which is moved once: a move
			// sent again after a failure finds the job this one created.
			created, err := r.CreateJob(ctx, &pb.CreateJobRequest{Spec: ns, RequestId: moveRequestID("failback", moved)})
			if err != nil {
				m.Reason = "re-creating it: " + status.Convert(err).Message()
				out.NotMoved = append(out.NotMoved, m)
				continue
			}
			newID = created.GetJob().GetId()
			if _, err := r.jobs().StopJob(ctx, &pb.StopJobRequest{Id: moved}); err != nil {
				m.Reason = "created as " + newID + " but stopping the copy " + moved + " failed: " + status.Convert(err).Message()
				out.NotMoved = append(out.NotMoved, m)
				continue
			}
			m.Reason = fmt.Sprintf("%d instances back as %s; copy %s in %s stopped", remaining, newID, moved, from)
		} else {
			m.Reason = "its copy " + moved + " in " + from + " had finished: nothing to move"
		}
		rep.RelocatedRegion, rep.RelocatedJobId, rep.RelocatedTime = req.Region, newID, timestamppb.Now()
		back[rep.GetJob().GetId()] = rep
		if err := r.putReplicaAt(ctx, hr.holder, rep); err != nil {
			m.Reason += "; recording it failed: " + err.Error()
		}
		out.Moved = append(out.Moved, m)
	}
	return out, nil
}
