package federation

import (
	"context"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// A job a failover moved says where its work went, and the job that took
// the work over says where it came from. The new job carries its origin in
// a label (LabelRelocatedFrom, or LabelFailedBackFrom after a failback);
// where the original went is in its replica, which the region that
// relocated it keeps. So GetJob fills JobStatus.moved_from from the labels
// and, for a job that was stopped or whose region cannot answer,
// JobStatus.moved_to from its replica.

// movedFrom reads where a relocated job's work came from, from its labels:
// "<job id>@<region>".
func movedFrom(labels map[string]string) *pb.JobMove {
	for _, key := range []string{LabelRelocatedFrom, LabelFailedBackFrom} {
		if v, ok := labels[key]; ok {
			id, region, found := strings.Cut(v, "@")
			if !found || region == "" {
				continue
			}
			return &pb.JobMove{Region: region, JobId: id}
		}
	}
	return nil
}

// movedTo reads where a replica's job went; nil if it never moved.
func movedTo(rep *pb.Replica) *pb.JobMove {
	if rep.GetRelocatedRegion() == "" {
		return nil
	}
	return &pb.JobMove{Region: rep.GetRelocatedRegion(), JobId: rep.GetRelocatedJobId(), Time: rep.GetRelocatedTime()}
}

// getJob forwards GetJob to the job's region and says where the job moved
// or came from. When the job's region cannot answer (or no longer knows
// it) and a replica says the job was relocated, the replica answers: the
// job as last replicated, with where it went.
func (r *Router) getJob(ctx context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	out, err := r.forward(ctx, methods[pb.JobService_GetJob_FullMethodName], req)
	if err == nil {
		resp := out.(*pb.GetJobResponse)
		if st := resp.GetJob().GetStatus(); st != nil {
			st.MovedFrom = movedFrom(resp.GetJob().GetSpec().GetLabels())
			// A relocated job's original is stopped by its region once it
			// is back: only then is there a replica to ask.
			if st.GetState() == pb.JobState_JOB_STATE_KILLED && r.replicas != nil {
				if rep, _ := r.findReplica(ctx, req.GetId()); rep != nil {
					st.MovedTo = movedTo(rep)
				}
			}
		}
		return resp, nil
	}
	if c := status.Code(err); (c != codes.NotFound && c != codes.Unavailable) || r.replicas == nil {
		return nil, err
	}
	rep, holder := r.findReplica(ctx, req.GetId())
	if rep == nil {
		return nil, err
	}
	job := proto.Clone(rep.GetJob()).(*pb.Job)
	if job.Status == nil {
		job.Status = &pb.JobStatus{}
	}
	job.Status.Region = rep.GetOwnerRegion()
	job.Status.MovedTo = movedTo(rep)
	job.Status.MovedFrom = movedFrom(job.GetSpec().GetLabels())
	job.Status.Message = "region " + rep.GetOwnerRegion() + " cannot answer (" + status.Convert(err).Message() +
		"); this is the job as region " + holder + " last replicated it"
	servedBy(ctx, holder)
	return &pb.GetJobResponse{Job: job}, nil
}

// findReplica asks every reachable region for the replica of a job that
// was relocated, and returns it with the region that keeps it.
func (r *Router) findReplica(ctx context.Context, job string) (*pb.Replica, string) {
	req := &pb.ListReplicasRequest{JobId: job}
	answers, _ := fanOut(r, ctx, func(ctx context.Context) (*pb.ListReplicasResponse, error) {
		return r.ListReplicas(ctx, req)
	}, func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListReplicasResponse, error) {
		return pb.NewFederationServiceClient(c).ListReplicas(ctx, req)
	})
	var found *pb.Replica
	holder := ""
	for _, region := range sortedKeys(answers) {
		for _, rep := range answers[region].GetReplicas() {
			if rep.GetJob().GetId() != job || rep.GetRelocatedRegion() == "" {
				continue
			}
			if found == nil || rep.GetRelocatedTime().AsTime().After(found.GetRelocatedTime().AsTime()) {
				found, holder = rep, region
			}
		}
	}
	return found, holder
}
