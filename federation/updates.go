package federation

import (
	"context"
	"fmt"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Updates, configs and stored events belong to a job: they are served by
// the job's region. Hosts belong to the region whose shard reports them.

func (r *Router) UpdateJob(ctx context.Context, req *pb.UpdateJobRequest) (*pb.UpdateJobResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().UpdateJob, func(c *grpc.ClientConn) func(context.Context, *pb.UpdateJobRequest, ...grpc.CallOption) (*pb.UpdateJobResponse, error) {
		return pb.NewJobServiceClient(c).UpdateJob
	})
}

func (r *Router) ListUpdates(ctx context.Context, req *pb.ListUpdatesRequest) (*pb.ListUpdatesResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().ListUpdates, func(c *grpc.ClientConn) func(context.Context, *pb.ListUpdatesRequest, ...grpc.CallOption) (*pb.ListUpdatesResponse, error) {
		return pb.NewJobServiceClient(c).ListUpdates
	})
}

// updateJob is the job an update id names: "<job>.<version>".
func updateJob(id string) (string, error) {
	job, _, ok := model.UpdateID(id).Parse()
	if !ok {
		return "", status.Errorf(codes.InvalidArgument, "update_id: %q: want <job id>.<version>", id)
	}
	return string(job), nil
}

func (r *Router) GetUpdate(ctx context.Context, req *pb.GetUpdateRequest) (*pb.GetUpdateResponse, error) {
	job, err := updateJob(req.UpdateId)
	if err != nil {
		return nil, err
	}
	return jobCall(r, ctx, job, req, r.shard().GetUpdate, func(c *grpc.ClientConn) func(context.Context, *pb.GetUpdateRequest, ...grpc.CallOption) (*pb.GetUpdateResponse, error) {
		return pb.NewJobServiceClient(c).GetUpdate
	})
}

func (r *Router) AbortUpdate(ctx context.Context, req *pb.AbortUpdateRequest) (*pb.AbortUpdateResponse, error) {
	job, err := updateJob(req.UpdateId)
	if err != nil {
		return nil, err
	}
	return jobCall(r, ctx, job, req, r.shard().AbortUpdate, func(c *grpc.ClientConn) func(context.Context, *pb.AbortUpdateRequest, ...grpc.CallOption) (*pb.AbortUpdateResponse, error) {
		return pb.NewJobServiceClient(c).AbortUpdate
	})
}

func (r *Router) GetJobConfig(ctx context.Context, req *pb.GetJobConfigRequest) (*pb.GetJobConfigResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().GetJobConfig, func(c *grpc.ClientConn) func(context.Context, *pb.GetJobConfigRequest, ...grpc.CallOption) (*pb.GetJobConfigResponse, error) {
		return pb.NewJobServiceClient(c).GetJobConfig
	})
}

func (r *Router) ListEvents(ctx context.Context, req *pb.ListEventsRequest) (*pb.ListEventsResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().ListEvents, func(c *grpc.ClientConn) func(context.Context, *pb.ListEventsRequest, ...grpc.CallOption) (*pb.ListEventsResponse, error) {
		return pb.NewJobServiceClient(c).ListEvents
	})
}

// hostRegion finds the region of a host: the one the request names, else
// the only region whose shard knows a host of that id. Host ids are unique
// within a region, not across regions (dev mode gives every region a
// "sim" cluster), so a host several regions know must be named with its
// region.
func (r *Router) hostRegion(ctx context.Context, id, region string) (string, error) {
	if region != "" {
		return region, nil
	}
	if strings.TrimSpace(id) == "" {
		return "", status.Error(codes.InvalidArgument, "host_id: required")
	}
	req := &pb.ListHostsRequest{HostId: id}
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostsResponse, error) { return r.shard().ListHosts(ctx, req) },
		func(ctx context.Context, c *grpc.ClientConn) (*pb.ListHostsResponse, error) {
			return pb.NewHostServiceClient(c).ListHosts(ctx, req)
		})
	var found []string
	for _, reg := range sortedKeys(answers) {
		for _, h := range answers[reg].GetHosts() {
			if h.GetId() == id {
				found = append(found, reg)
				break
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", status.Errorf(codes.InvalidArgument, "region: host %s is in regions %s: name its region (--region)", id, strings.Join(found, ", "))
	case len(errs) > 0:
		var msgs []string
		for _, reg := range sortedKeys(errs) {
			msgs = append(msgs, fmt.Sprintf("%s: %s", reg, status.Convert(errs[reg]).Message()))
		}
		return "", status.Errorf(codes.Unavailable, "host %s not found in the reachable regions (%s)", id, strings.Join(msgs, "; "))
	}
	return "", status.Errorf(codes.NotFound, "host %s not found in any region", id)
}

func (r *Router) DrainHost(ctx context.Context, req *pb.DrainHostRequest) (*pb.DrainHostResponse, error) {
	if routed(ctx) {
		return r.shard().DrainHost(ctx, req)
	}
	region, err := r.hostRegion(ctx, req.HostId, req.Region)
	if err != nil {
		return nil, err
	}
	resp, _, err := regionCall(r, ctx, region, req, r.shard().DrainHost, func(c *grpc.ClientConn) func(context.Context, *pb.DrainHostRequest, ...grpc.CallOption) (*pb.DrainHostResponse, error) {
		return pb.NewHostServiceClient(c).DrainHost
	})
	return resp, err
}

func (r *Router) UndrainHost(ctx context.Context, req *pb.UndrainHostRequest) (*pb.UndrainHostResponse, error) {
	if routed(ctx) {
		return r.shard().UndrainHost(ctx, req)
	}
	region, err := r.hostRegion(ctx, req.HostId, req.Region)
	if err != nil {
		return nil, err
	}
	resp, _, err := regionCall(r, ctx, region, req, r.shard().UndrainHost, func(c *grpc.ClientConn) func(context.Context, *pb.UndrainHostRequest, ...grpc.CallOption) (*pb.UndrainHostResponse, error) {
		return pb.NewHostServiceClient(c).UndrainHost
	})
	return resp, err
}

func (r *Router) MarkHostDown(ctx context.Context, req *pb.MarkHostDownRequest) (*pb.MarkHostDownResponse, error) {
	if routed(ctx) {
		return r.shard().MarkHostDown(ctx, req)
	}
	region, err := r.hostRegion(ctx, req.HostId, req.Region)
	if err != nil {
		return nil, err
	}
	resp, _, err := regionCall(r, ctx, region, req, r.shard().MarkHostDown, func(c *grpc.ClientConn) func(context.Context, *pb.MarkHostDownRequest, ...grpc.CallOption) (*pb.MarkHostDownResponse, error) {
		return pb.NewHostServiceClient(c).MarkHostDown
	})
	return resp, err
}

func (r *Router) PauseUpdate(ctx context.Context, req *pb.PauseUpdateRequest) (*pb.PauseUpdateResponse, error) {
	job, err := updateJob(req.UpdateId)
	if err != nil {
		return nil, err
	}
	return jobCall(r, ctx, job, req, r.shard().PauseUpdate, func(c *grpc.ClientConn) func(context.Context, *pb.PauseUpdateRequest, ...grpc.CallOption) (*pb.PauseUpdateResponse, error) {
		return pb.NewJobServiceClient(c).PauseUpdate
	})
}

func (r *Router) ResumeUpdate(ctx context.Context, req *pb.ResumeUpdateRequest) (*pb.ResumeUpdateResponse, error) {
	job, err := updateJob(req.UpdateId)
	if err != nil {
		return nil, err
	}
	return jobCall(r, ctx, job, req, r.shard().ResumeUpdate, func(c *grpc.ClientConn) func(context.Context, *pb.ResumeUpdateRequest, ...grpc.CallOption) (*pb.ResumeUpdateResponse, error) {
		return pb.NewJobServiceClient(c).ResumeUpdate
	})
}

func (r *Router) RollbackUpdate(ctx context.Context, req *pb.RollbackUpdateRequest) (*pb.RollbackUpdateResponse, error) {
	job, err := updateJob(req.UpdateId)
	if err != nil {
		return nil, err
	}
	return jobCall(r, ctx, job, req, r.shard().RollbackUpdate, func(c *grpc.ClientConn) func(context.Context, *pb.RollbackUpdateRequest, ...grpc.CallOption) (*pb.RollbackUpdateResponse, error) {
		return pb.NewJobServiceClient(c).RollbackUpdate
	})
}

func (r *Router) SetHostPool(ctx context.Context, req *pb.SetHostPoolRequest) (*pb.SetHostPoolResponse, error) {
	if routed(ctx) {
		return r.shard().SetHostPool(ctx, req)
	}
	region, err := r.hostRegion(ctx, req.HostId, req.Region)
	if err != nil {
		return nil, err
	}
	resp, _, err := regionCall(r, ctx, region, req, r.shard().SetHostPool, func(c *grpc.ClientConn) func(context.Context, *pb.SetHostPoolRequest, ...grpc.CallOption) (*pb.SetHostPoolResponse, error) {
		return pb.NewHostServiceClient(c).SetHostPool
	})
	return resp, err
}
