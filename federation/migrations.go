package federation

import (
	"context"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
)

// Migrations and clusters belong to a region: a request names it (region),
// else it is served by the local one; a migration of one job goes to the
// job's region.

// inRegion runs a call in the region a request names, else locally.
func inRegion[Req, Resp any](r *Router, ctx context.Context, region string, req Req,
	local func(context.Context, Req) (Resp, error),
	remote func(*grpc.ClientConn) func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	if routed(ctx) {
		return local(ctx, req)
	}
	if region == "" {
		region = r.dir.Local()
	}
	resp, _, err := regionCall(r, ctx, region, req, local, remote)
	return resp, err
}

func (r *Router) StartMigration(ctx context.Context, req *pb.StartMigrationRequest) (*pb.StartMigrationResponse, error) {
	remote := func(c *grpc.ClientConn) func(context.Context, *pb.StartMigrationRequest, ...grpc.CallOption) (*pb.StartMigrationResponse, error) {
		return pb.NewJobServiceClient(c).StartMigration
	}
	if req.JobId != "" && req.Region == "" {
		return jobCall(r, ctx, req.JobId, req, r.shard().StartMigration, remote)
	}
	return inRegion(r, ctx, req.Region, req, r.shard().StartMigration, remote)
}

func (r *Router) GetMigration(ctx context.Context, req *pb.GetMigrationRequest) (*pb.GetMigrationResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().GetMigration, func(c *grpc.ClientConn) func(context.Context, *pb.GetMigrationRequest, ...grpc.CallOption) (*pb.GetMigrationResponse, error) {
		return pb.NewJobServiceClient(c).GetMigration
	})
}

func (r *Router) ListMigrations(ctx context.Context, req *pb.ListMigrationsRequest) (*pb.ListMigrationsResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().ListMigrations, func(c *grpc.ClientConn) func(context.Context, *pb.ListMigrationsRequest, ...grpc.CallOption) (*pb.ListMigrationsResponse, error) {
		return pb.NewJobServiceClient(c).ListMigrations
	})
}

func (r *Router) PauseMigration(ctx context.Context, req *pb.PauseMigrationRequest) (*pb.PauseMigrationResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().PauseMigration, func(c *grpc.ClientConn) func(context.Context, *pb.PauseMigrationRequest, ...grpc.CallOption) (*pb.PauseMigrationResponse, error) {
		return pb.NewJobServiceClient(c).PauseMigration
	})
}

func (r *Router) ResumeMigration(ctx context.Context, req *pb.ResumeMigrationRequest) (*pb.ResumeMigrationResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().ResumeMigration, func(c *grpc.ClientConn) func(context.Context, *pb.ResumeMigrationRequest, ...grpc.CallOption) (*pb.ResumeMigrationResponse, error) {
		return pb.NewJobServiceClient(c).ResumeMigration
	})
}

func (r *Router) AbortMigration(ctx context.Context, req *pb.AbortMigrationRequest) (*pb.AbortMigrationResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().AbortMigration, func(c *grpc.ClientConn) func(context.Context, *pb.AbortMigrationRequest, ...grpc.CallOption) (*pb.AbortMigrationResponse, error) {
		return pb.NewJobServiceClient(c).AbortMigration
	})
}

func (r *Router) RollbackMigration(ctx context.Context, req *pb.RollbackMigrationRequest) (*pb.RollbackMigrationResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().RollbackMigration, func(c *grpc.ClientConn) func(context.Context, *pb.RollbackMigrationRequest, ...grpc.CallOption) (*pb.RollbackMigrationResponse, error) {
		return pb.NewJobServiceClient(c).RollbackMigration
	})
}

func (r *Router) ListClusters(ctx context.Context, req *pb.ListClustersRequest) (*pb.ListClustersResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().ListClusters, func(c *grpc.ClientConn) func(context.Context, *pb.ListClustersRequest, ...grpc.CallOption) (*pb.ListClustersResponse, error) {
		return pb.NewHostServiceClient(c).ListClusters
	})
}

func (r *Router) GetCluster(ctx context.Context, req *pb.GetClusterRequest) (*pb.GetClusterResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().GetCluster, func(c *grpc.ClientConn) func(context.Context, *pb.GetClusterRequest, ...grpc.CallOption) (*pb.GetClusterResponse, error) {
		return pb.NewHostServiceClient(c).GetCluster
	})
}

func (r *Router) DrainCluster(ctx context.Context, req *pb.DrainClusterRequest) (*pb.DrainClusterResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().DrainCluster, func(c *grpc.ClientConn) func(context.Context, *pb.DrainClusterRequest, ...grpc.CallOption) (*pb.DrainClusterResponse, error) {
		return pb.NewHostServiceClient(c).DrainCluster
	})
}

func (r *Router) UndrainCluster(ctx context.Context, req *pb.UndrainClusterRequest) (*pb.UndrainClusterResponse, error) {
	return inRegion(r, ctx, req.Region, req, r.shard().UndrainCluster, func(c *grpc.ClientConn) func(context.Context, *pb.UndrainClusterRequest, ...grpc.CallOption) (*pb.UndrainClusterResponse, error) {
		return pb.NewHostServiceClient(c).UndrainCluster
	})
}

// The same calls on a standby go to the region's leader.

func (s *RemoteShard) StartMigration(ctx context.Context, r *pb.StartMigrationRequest) (*pb.StartMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.StartMigrationRequest, ...grpc.CallOption) (*pb.StartMigrationResponse, error) {
		return pb.NewJobServiceClient(c).StartMigration
	})
}

func (s *RemoteShard) GetMigration(ctx context.Context, r *pb.GetMigrationRequest) (*pb.GetMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetMigrationRequest, ...grpc.CallOption) (*pb.GetMigrationResponse, error) {
		return pb.NewJobServiceClient(c).GetMigration
	})
}

func (s *RemoteShard) ListMigrations(ctx context.Context, r *pb.ListMigrationsRequest) (*pb.ListMigrationsResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListMigrationsRequest, ...grpc.CallOption) (*pb.ListMigrationsResponse, error) {
		return pb.NewJobServiceClient(c).ListMigrations
	})
}

func (s *RemoteShard) PauseMigration(ctx context.Context, r *pb.PauseMigrationRequest) (*pb.PauseMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.PauseMigrationRequest, ...grpc.CallOption) (*pb.PauseMigrationResponse, error) {
		return pb.NewJobServiceClient(c).PauseMigration
	})
}

func (s *RemoteShard) ResumeMigration(ctx context.Context, r *pb.ResumeMigrationRequest) (*pb.ResumeMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ResumeMigrationRequest, ...grpc.CallOption) (*pb.ResumeMigrationResponse, error) {
		return pb.NewJobServiceClient(c).ResumeMigration
	})
}

func (s *RemoteShard) AbortMigration(ctx context.Context, r *pb.AbortMigrationRequest) (*pb.AbortMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.AbortMigrationRequest, ...grpc.CallOption) (*pb.AbortMigrationResponse, error) {
		return pb.NewJobServiceClient(c).AbortMigration
	})
}

func (s *RemoteShard) RollbackMigration(ctx context.Context, r *pb.RollbackMigrationRequest) (*pb.RollbackMigrationResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.RollbackMigrationRequest, ...grpc.CallOption) (*pb.RollbackMigrationResponse, error) {
		return pb.NewJobServiceClient(c).RollbackMigration
	})
}

func (s *RemoteShard) ListClusters(ctx context.Context, r *pb.ListClustersRequest) (*pb.ListClustersResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.ListClustersRequest, ...grpc.CallOption) (*pb.ListClustersResponse, error) {
		return pb.NewHostServiceClient(c).ListClusters
	})
}

func (s *RemoteShard) GetCluster(ctx context.Context, r *pb.GetClusterRequest) (*pb.GetClusterResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.GetClusterRequest, ...grpc.CallOption) (*pb.GetClusterResponse, error) {
		return pb.NewHostServiceClient(c).GetCluster
	})
}

func (s *RemoteShard) DrainCluster(ctx context.Context, r *pb.DrainClusterRequest) (*pb.DrainClusterResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.DrainClusterRequest, ...grpc.CallOption) (*pb.DrainClusterResponse, error) {
		return pb.NewHostServiceClient(c).DrainCluster
	})
}

func (s *RemoteShard) UndrainCluster(ctx context.Context, r *pb.UndrainClusterRequest) (*pb.UndrainClusterResponse, error) {
	return remoteCall(s, ctx, r, func(c *grpc.ClientConn) func(context.Context, *pb.UndrainClusterRequest, ...grpc.CallOption) (*pb.UndrainClusterResponse, error) {
		return pb.NewHostServiceClient(c).UndrainCluster
	})
}
