package service

import (
	"context"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/protobuf/types/known/durationpb"
)

func (s *jobService) StartMigration(ctx context.Context, req *pb.StartMigrationRequest) (*pb.StartMigrationResponse, error) {
	switch {
	case req.JobId == "" && req.Pool == "":
		return nil, invalid("job_id", "name a job (job_id) or a pool (pool) to migrate")
	case req.JobId != "" && req.Pool != "":
		return nil, invalid("pool", "name a job or a pool, not both")
	case req.ToCluster == "":
		return nil, invalid("to_cluster", "required")
	case req.BatchSize != nil && *req.BatchSize == 0:
		return nil, invalid("batch_size", "must be at least 1 (leave it out to move as many as the SLA allows)")
	}
	if msg := pb.ClusterRefProblem(req.ToCluster); msg != "" {
		return nil, invalid("to_cluster", msg)
	}
	pool := req.Pool
	if pool != "" {
		if !pb.ValidPoolPath(pool) {
			return nil, invalid("pool", "not an absolute pool path like /team/sub")
		}
		pool = pb.NormalizePoolPath(pool)
	}
	m, err := jobmgr.Do(ctx, s.engine, jobmgr.StartMigration{MigrationRequest: jobmgr.MigrationRequest{
		Job: model.JobID(req.JobId), Pool: pool, To: req.ToCluster, BatchSize: req.GetBatchSize(),
		Surge: req.Surge, StartPaused: req.StartPaused, MoveRunning: req.MoveRunning, AllowStateful: req.AllowStateful,
	}})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.StartMigrationResponse{Migration: s.migrationToProto(m)}, nil
}

func (s *jobService) GetMigration(ctx context.Context, req *pb.GetMigrationRequest) (*pb.GetMigrationResponse, error) {
	if err := requireID("migration_id", req.MigrationId); err != nil {
		return nil, err
	}
	m, err := s.engine.Reads().GetMigration(ctx, model.MigrationID(req.MigrationId))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetMigrationResponse{Migration: s.migrationToProto(m)}, nil
}

func (s *jobService) ListMigrations(ctx context.Context, req *pb.ListMigrationsRequest) (*pb.ListMigrationsResponse, error) {
	ms, err := s.engine.Reads().ListMigrations(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListMigrationsResponse{}
	for _, m := range ms {
		out.Migrations = append(out.Migrations, s.migrationToProto(m))
	}
	return out, nil
}

// migrationCall runs one of the calls that steer a migration.
func (s *api) migrationCall(ctx context.Context, id string, command func(model.MigrationID) jobmgr.Command[*model.Migration]) (*pb.Migration, error) {
	if err := requireID("migration_id", id); err != nil {
		return nil, err
	}
	m, err := jobmgr.Do(ctx, s.engine, command(model.MigrationID(id)))
	if err != nil {
		return nil, toStatus(err)
	}
	return s.migrationToProto(m), nil
}

func (s *jobService) PauseMigration(ctx context.Context, req *pb.PauseMigrationRequest) (*pb.PauseMigrationResponse, error) {
	m, err := s.migrationCall(ctx, req.MigrationId, func(id model.MigrationID) jobmgr.Command[*model.Migration] { return jobmgr.PauseMigration{ID: id} })
	return &pb.PauseMigrationResponse{Migration: m}, err
}

func (s *jobService) ResumeMigration(ctx context.Context, req *pb.ResumeMigrationRequest) (*pb.ResumeMigrationResponse, error) {
	m, err := s.migrationCall(ctx, req.MigrationId, func(id model.MigrationID) jobmgr.Command[*model.Migration] { return jobmgr.ResumeMigration{ID: id} })
	return &pb.ResumeMigrationResponse{Migration: m}, err
}

func (s *jobService) AbortMigration(ctx context.Context, req *pb.AbortMigrationRequest) (*pb.AbortMigrationResponse, error) {
	m, err := s.migrationCall(ctx, req.MigrationId, func(id model.MigrationID) jobmgr.Command[*model.Migration] { return jobmgr.AbortMigration{ID: id} })
	return &pb.AbortMigrationResponse{Migration: m}, err
}

func (s *jobService) RollbackMigration(ctx context.Context, req *pb.RollbackMigrationRequest) (*pb.RollbackMigrationResponse, error) {
	m, err := s.migrationCall(ctx, req.MigrationId, func(id model.MigrationID) jobmgr.Command[*model.Migration] { return jobmgr.RollbackMigration{ID: id} })
	return &pb.RollbackMigrationResponse{Migration: m}, err
}

func (s *api) migrationToProto(m *model.Migration) *pb.Migration {
	out := &pb.Migration{
		Id: string(m.ID), JobId: string(m.Job), Pool: m.Pool, ToCluster: m.To, BatchSize: m.BatchSize,
		Surge: m.Surge, MoveRunning: m.MoveRunning, AllowStateful: m.AllowStateful, Paused: m.Paused,
		State: pb.MigrationState(m.State), Message: m.Message,
		CreateTime: ts(m.CreateTime), CompletionTime: ts(m.CompletionTime), Region: s.engine.Region(),
	}
	end := m.CompletionTime
	if end.IsZero() {
		end = s.engine.Now()
	}
	if !m.CreateTime.IsZero() {
		out.Duration = durationpb.New(end.Sub(m.CreateTime).Round(time.Millisecond))
	}
	for i := range m.Jobs {
		j := &m.Jobs[i]
		out.Jobs = append(out.Jobs, &pb.MigrationJob{
			JobId: string(j.Job), Type: pb.JobType(j.Type), FromCluster: j.From, Instances: j.Instances,
			Moved: uint32(len(j.Moved)), InFlight: j.InFlight, MaxUnavailable: j.MaxUnavailable,
			SlaMaxUnavailable: j.SLAMaxUnavailable, Failures: j.Failures, Retries: j.Retries,
			Surge: uint32(len(j.Surge)), Done: j.Done, Message: j.Message,
		})
		out.InstancesTotal += j.Instances
		out.InstancesMoved += uint32(len(j.Moved))
		out.InstancesInFlight += j.InFlight
	}
	return out
}

func (s *hostService) ListClusters(ctx context.Context, req *pb.ListClustersRequest) (*pb.ListClustersResponse, error) {
	out := &pb.ListClustersResponse{}
	for _, c := range s.engine.Reads().ListClusters() {
		out.Clusters = append(out.Clusters, s.clusterToProto(c))
	}
	return out, nil
}

func (s *hostService) GetCluster(ctx context.Context, req *pb.GetClusterRequest) (*pb.GetClusterResponse, error) {
	if err := requireID("cluster", req.Cluster); err != nil {
		return nil, err
	}
	c, err := s.engine.Reads().GetCluster(req.Cluster)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetClusterResponse{Cluster: s.clusterToProto(c)}, nil
}

func (s *hostService) DrainCluster(ctx context.Context, req *pb.DrainClusterRequest) (*pb.DrainClusterResponse, error) {
	c, err := s.setClusterDrained(ctx, req.Cluster, true)
	return &pb.DrainClusterResponse{Cluster: c}, err
}

func (s *hostService) UndrainCluster(ctx context.Context, req *pb.UndrainClusterRequest) (*pb.UndrainClusterResponse, error) {
	c, err := s.setClusterDrained(ctx, req.Cluster, false)
	return &pb.UndrainClusterResponse{Cluster: c}, err
}

func (s *api) setClusterDrained(ctx context.Context, ref string, drained bool) (*pb.ClusterSummary, error) {
	if err := requireID("cluster", ref); err != nil {
		return nil, err
	}
	if msg := pb.ClusterRefProblem(ref); msg != "" {
		return nil, invalid("cluster", msg)
	}
	c, err := jobmgr.Do(ctx, s.engine, jobmgr.SetClusterDrained{Cluster: ref, Drained: drained})
	if err != nil {
		return nil, toStatus(err)
	}
	return s.clusterToProto(c), nil
}

func (s *api) clusterToProto(c *jobmgr.ClusterView) *pb.ClusterSummary {
	out := &pb.ClusterSummary{
		Name: c.Name, Kind: c.Kind, Region: s.engine.Region(), Drained: c.Drained, Hosts: uint32(c.Hosts),
		Capacity: resourcesToProto(c.Capacity), Allocated: resourcesToProto(c.Allocated), Tasks: uint32(c.Tasks),
	}
	usage := func(us []jobmgr.ClusterUsage) []*pb.ClusterUsage {
		var out []*pb.ClusterUsage
		for _, u := range us {
			out = append(out, &pb.ClusterUsage{Name: u.Name, Tasks: uint32(u.Tasks), Allocated: resourcesToProto(u.Allocated)})
		}
		return out
	}
	out.Jobs, out.Pools = usage(c.Jobs), usage(c.Pools)
	return out
}
