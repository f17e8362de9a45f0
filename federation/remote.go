package federation

import (
	"context"
	"io"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RemoteShard is the shard of this region served by another process: a
// standby member forwards what its local shard would serve to the member
// that holds the region's lease. Calls are marked routed, so the leader
// serves them from its own shard.
type RemoteShard struct {
	pb.UnimplementedJobServiceServer
	pb.UnimplementedTaskServiceServer
	pb.UnimplementedPoolServiceServer
	pb.UnimplementedHostServiceServer
	pb.UnimplementedRegionServiceServer
	pb.UnimplementedEventServiceServer
	pb.UnimplementedSystemServiceServer

	router *Router
	// Leader returns the gRPC address of the member serving the shard.
	Leader func() string
}

// NewRemoteShard returns a shard served by the region's leader.
func NewRemoteShard(r *Router, leader func() string) *RemoteShard {
	return &RemoteShard{router: r, Leader: leader}
}

func (s *RemoteShard) conn() (*grpc.ClientConn, error) {
	addr := s.Leader()
	if addr == "" {
		return nil, status.Error(codes.Unavailable, "this member is a standby and no leader holds the region's lease yet; retry shortly")
	}
	return s.router.conn(Region{Name: s.router.dir.Local() + " (leader)", Addr: addr})
}

func remoteCall[Req, Resp any](s *RemoteShard, ctx context.Context, req Req, call func(*grpc.ClientConn) func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	c, err := s.conn()
	if err != nil {
		var zero Resp
		return zero, err
	}
	return call(c)(outgoing(ctx), req)
}

func (s *RemoteShard) CreateJob(ctx context.Context, r *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.CreateJobRequest, ...grpc.CallOption) (*pb.CreateJobResponse, error) {
		return pb.NewJobServiceClient(c).CreateJob
	})
}

func (s *RemoteShard) GetJob(ctx context.Context, r *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetJobRequest, ...grpc.CallOption) (*pb.GetJobResponse, error) {
		return pb.NewJobServiceClient(c).GetJob
	})
}

func (s *RemoteShard) ListJobs(ctx context.Context, r *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListJobsRequest, ...grpc.CallOption) (*pb.ListJobsResponse, error) {
		return pb.NewJobServiceClient(c).ListJobs
	})
}

func (s *RemoteShard) StopJob(ctx context.Context, r *pb.StopJobRequest) (*pb.StopJobResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.StopJobRequest, ...grpc.CallOption) (*pb.StopJobResponse, error) {
		return pb.NewJobServiceClient(c).StopJob
	})
}

func (s *RemoteShard) DeleteJob(ctx context.Context, r *pb.DeleteJobRequest) (*pb.DeleteJobResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.DeleteJobRequest, ...grpc.CallOption) (*pb.DeleteJobResponse, error) {
		return pb.NewJobServiceClient(c).DeleteJob
	})
}

func (s *RemoteShard) ListTasks(ctx context.Context, r *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListTasksRequest, ...grpc.CallOption) (*pb.ListTasksResponse, error) {
		return pb.NewTaskServiceClient(c).ListTasks
	})
}

func (s *RemoteShard) GetTask(ctx context.Context, r *pb.GetTaskRequest) (*pb.GetTaskResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetTaskRequest, ...grpc.CallOption) (*pb.GetTaskResponse, error) {
		return pb.NewTaskServiceClient(c).GetTask
	})
}

func (s *RemoteShard) GetTaskLogs(ctx context.Context, r *pb.GetTaskLogsRequest) (*pb.GetTaskLogsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetTaskLogsRequest, ...grpc.CallOption) (*pb.GetTaskLogsResponse, error) {
		return pb.NewTaskServiceClient(c).GetTaskLogs
	})
}

func (s *RemoteShard) StopTasks(ctx context.Context, r *pb.StopTasksRequest) (*pb.StopTasksResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.StopTasksRequest, ...grpc.CallOption) (*pb.StopTasksResponse, error) {
		return pb.NewTaskServiceClient(c).StopTasks
	})
}

func (s *RemoteShard) CreatePool(ctx context.Context, r *pb.CreatePoolRequest) (*pb.CreatePoolResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.CreatePoolRequest, ...grpc.CallOption) (*pb.CreatePoolResponse, error) {
		return pb.NewPoolServiceClient(c).CreatePool
	})
}

func (s *RemoteShard) UpdatePool(ctx context.Context, r *pb.UpdatePoolRequest) (*pb.UpdatePoolResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.UpdatePoolRequest, ...grpc.CallOption) (*pb.UpdatePoolResponse, error) {
		return pb.NewPoolServiceClient(c).UpdatePool
	})
}

func (s *RemoteShard) DeletePool(ctx context.Context, r *pb.DeletePoolRequest) (*pb.DeletePoolResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.DeletePoolRequest, ...grpc.CallOption) (*pb.DeletePoolResponse, error) {
		return pb.NewPoolServiceClient(c).DeletePool
	})
}

func (s *RemoteShard) ListPools(ctx context.Context, r *pb.ListPoolsRequest) (*pb.ListPoolsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListPoolsRequest, ...grpc.CallOption) (*pb.ListPoolsResponse, error) {
		return pb.NewPoolServiceClient(c).ListPools
	})
}

func (s *RemoteShard) GetPool(ctx context.Context, r *pb.GetPoolRequest) (*pb.GetPoolResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetPoolRequest, ...grpc.CallOption) (*pb.GetPoolResponse, error) {
		return pb.NewPoolServiceClient(c).GetPool
	})
}

func (s *RemoteShard) ListHosts(ctx context.Context, r *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListHostsRequest, ...grpc.CallOption) (*pb.ListHostsResponse, error) {
		return pb.NewHostServiceClient(c).ListHosts
	})
}

func (s *RemoteShard) UpdateJob(ctx context.Context, r *pb.UpdateJobRequest) (*pb.UpdateJobResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.UpdateJobRequest, ...grpc.CallOption) (*pb.UpdateJobResponse, error) {
		return pb.NewJobServiceClient(c).UpdateJob
	})
}

func (s *RemoteShard) GetUpdate(ctx context.Context, r *pb.GetUpdateRequest) (*pb.GetUpdateResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetUpdateRequest, ...grpc.CallOption) (*pb.GetUpdateResponse, error) {
		return pb.NewJobServiceClient(c).GetUpdate
	})
}

func (s *RemoteShard) ListUpdates(ctx context.Context, r *pb.ListUpdatesRequest) (*pb.ListUpdatesResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListUpdatesRequest, ...grpc.CallOption) (*pb.ListUpdatesResponse, error) {
		return pb.NewJobServiceClient(c).ListUpdates
	})
}

func (s *RemoteShard) AbortUpdate(ctx context.Context, r *pb.AbortUpdateRequest) (*pb.AbortUpdateResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.AbortUpdateRequest, ...grpc.CallOption) (*pb.AbortUpdateResponse, error) {
		return pb.NewJobServiceClient(c).AbortUpdate
	})
}

func (s *RemoteShard) GetJobConfig(ctx context.Context, r *pb.GetJobConfigRequest) (*pb.GetJobConfigResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetJobConfigRequest, ...grpc.CallOption) (*pb.GetJobConfigResponse, error) {
		return pb.NewJobServiceClient(c).GetJobConfig
	})
}

func (s *RemoteShard) ListEvents(ctx context.Context, r *pb.ListEventsRequest) (*pb.ListEventsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListEventsRequest, ...grpc.CallOption) (*pb.ListEventsResponse, error) {
		return pb.NewJobServiceClient(c).ListEvents
	})
}

func (s *RemoteShard) DrainHost(ctx context.Context, r *pb.DrainHostRequest) (*pb.DrainHostResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.DrainHostRequest, ...grpc.CallOption) (*pb.DrainHostResponse, error) {
		return pb.NewHostServiceClient(c).DrainHost
	})
}

func (s *RemoteShard) UndrainHost(ctx context.Context, r *pb.UndrainHostRequest) (*pb.UndrainHostResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.UndrainHostRequest, ...grpc.CallOption) (*pb.UndrainHostResponse, error) {
		return pb.NewHostServiceClient(c).UndrainHost
	})
}

func (s *RemoteShard) MarkHostDown(ctx context.Context, r *pb.MarkHostDownRequest) (*pb.MarkHostDownResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.MarkHostDownRequest, ...grpc.CallOption) (*pb.MarkHostDownResponse, error) {
		return pb.NewHostServiceClient(c).MarkHostDown
	})
}

func (s *RemoteShard) SetHostPool(ctx context.Context, r *pb.SetHostPoolRequest) (*pb.SetHostPoolResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.SetHostPoolRequest, ...grpc.CallOption) (*pb.SetHostPoolResponse, error) {
		return pb.NewHostServiceClient(c).SetHostPool
	})
}

func (s *RemoteShard) ListHostPools(ctx context.Context, r *pb.ListHostPoolsRequest) (*pb.ListHostPoolsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListHostPoolsRequest, ...grpc.CallOption) (*pb.ListHostPoolsResponse, error) {
		return pb.NewHostServiceClient(c).ListHostPools
	})
}

func (s *RemoteShard) ListRegions(ctx context.Context, r *pb.ListRegionsRequest) (*pb.ListRegionsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListRegionsRequest, ...grpc.CallOption) (*pb.ListRegionsResponse, error) {
		return pb.NewRegionServiceClient(c).ListRegions
	})
}

func (s *RemoteShard) GetVersion(ctx context.Context, r *pb.GetVersionRequest) (*pb.GetVersionResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetVersionRequest, ...grpc.CallOption) (*pb.GetVersionResponse, error) {
		return pb.NewSystemServiceClient(c).GetVersion
	})
}

func (s *RemoteShard) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.Event]) error {
	c, err := s.conn()
	if err != nil {
		return err
	}
	in, err := pb.NewEventServiceClient(c).Watch(outgoing(stream.Context()), req)
	if err != nil {
		return err
	}
	for {
		ev, err := in.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
}

var _ Shard = (*RemoteShard)(nil)

func (s *RemoteShard) PauseUpdate(ctx context.Context, r *pb.PauseUpdateRequest) (*pb.PauseUpdateResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.PauseUpdateRequest, ...grpc.CallOption) (*pb.PauseUpdateResponse, error) {
		return pb.NewJobServiceClient(c).PauseUpdate
	})
}

func (s *RemoteShard) ResumeUpdate(ctx context.Context, r *pb.ResumeUpdateRequest) (*pb.ResumeUpdateResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ResumeUpdateRequest, ...grpc.CallOption) (*pb.ResumeUpdateResponse, error) {
		return pb.NewJobServiceClient(c).ResumeUpdate
	})
}

func (s *RemoteShard) RollbackUpdate(ctx context.Context, r *pb.RollbackUpdateRequest) (*pb.RollbackUpdateResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.RollbackUpdateRequest, ...grpc.CallOption) (*pb.RollbackUpdateResponse, error) {
		return pb.NewJobServiceClient(c).RollbackUpdate
	})
}
