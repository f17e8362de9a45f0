package service

import (
	"context"
	"fmt"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// Bounds of one ListEvents answer.
const (
	DefaultEventLimit = 1000
	MaxEventLimit     = 10000
)

func (s *jobService) UpdateJob(ctx context.Context, req *pb.UpdateJobRequest) (*pb.UpdateJobResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	if err := s.checkJobSpec(req.Spec); err != nil {
		return nil, err
	}
	if req.BatchSize != nil && *req.BatchSize == 0 {
		return nil, invalid("batch_size", "must be at least 1 (leave it out to restart every instance at once)")
	}
	if req.MinHealthySeconds > uint32(jobmgr.MaxMinHealthy/time.Second) {
		return nil, invalid("min_healthy_seconds", fmt.Sprintf("%d is more than %d", req.MinHealthySeconds, jobmgr.MaxMinHealthy/time.Second))
	}
	if req.AutoPromoteAfterSeconds > uint32(jobmgr.MaxAutoPromoteAfter/time.Second) {
		return nil, invalid("auto_promote_after_seconds", fmt.Sprintf("%d is more than %d", req.AutoPromoteAfterSeconds, jobmgr.MaxAutoPromoteAfter/time.Second))
	}
	if req.AutoPromoteAfterSeconds > 0 && req.Canary == 0 {
		return nil, invalid("auto_promote_after_seconds", "needs canary: only a canary update is promoted")
	}
	if req.CanaryExtra && req.Canary == 0 {
		return nil, invalid("canary_extra", "needs canary: the number of extra instances to start")
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.UpdateJob{Job: model.JobID(req.JobId), Spec: specToModel(req.Spec), Options: jobmgr.UpdateOptions{
		BatchSize: req.GetBatchSize(), MaxFailures: req.MaxFailures, RollbackOnFailure: req.RollbackOnFailure, StartPaused: req.StartPaused,
		MinHealthy: time.Duration(req.MinHealthySeconds) * time.Second, InPlace: req.InPlace,
		Canary: req.Canary, AutoPromoteAfter: time.Duration(req.AutoPromoteAfterSeconds) * time.Second, CanaryExtra: req.CanaryExtra,
	}})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.UpdateJobResponse{Update: updateToProto(u)}, nil
}

// updateID checks an update id: "<job>.<version>".
func updateID(path, id string) (model.UpdateID, error) {
	if err := requireID(path, id); err != nil {
		return "", err
	}
	if _, _, ok := model.UpdateID(id).Parse(); !ok {
		return "", invalid(path, "want <job id>.<version>, as job update printed it")
	}
	return model.UpdateID(id), nil
}

func (s *jobService) GetUpdate(ctx context.Context, req *pb.GetUpdateRequest) (*pb.GetUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := s.engine.Reads().GetUpdate(ctx, id)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetUpdateResponse{Update: updateToProto(u)}, nil
}

func (s *jobService) ListUpdates(ctx context.Context, req *pb.ListUpdatesRequest) (*pb.ListUpdatesResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	us, err := s.engine.Reads().ListUpdates(ctx, model.JobID(req.JobId))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListUpdatesResponse{Updates: make([]*pb.Update, len(us))}
	for i, u := range us {
		out.Updates[i] = updateToProto(u)
	}
	return out, nil
}

func (s *jobService) AbortUpdate(ctx context.Context, req *pb.AbortUpdateRequest) (*pb.AbortUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.AbortUpdate{ID: id})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.AbortUpdateResponse{Update: updateToProto(u)}, nil
}

func (s *jobService) GetJobConfig(ctx context.Context, req *pb.GetJobConfigRequest) (*pb.GetJobConfigResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	spec, version, versions, err := s.engine.Reads().GetJobConfig(ctx, model.JobID(req.JobId), req.Version)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetJobConfigResponse{Spec: specToProto(spec), Version: version, Versions: versions}, nil
}

func (s *jobService) ListEvents(ctx context.Context, req *pb.ListEventsRequest) (*pb.ListEventsResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	limit := int(req.Limit)
	switch {
	case limit == 0:
		limit = DefaultEventLimit
	case limit > MaxEventLimit:
		limit = MaxEventLimit
	}
	// One more than asked tells whether more follow.
	evs, err := s.engine.Reads().ListEvents(ctx, store.EventQuery{Job: model.JobID(req.JobId), Instance: req.Instance, After: req.AfterSeq, Limit: limit + 1})
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListEventsResponse{More: len(evs) > limit}
	evs = evs[:min(len(evs), limit)]
	out.Events = make([]*pb.Event, len(evs))
	for i, ev := range evs {
		out.Events[i] = eventToProto(ev)
	}
	return out, nil
}

func (s *jobService) PromoteUpdate(ctx context.Context, req *pb.PromoteUpdateRequest) (*pb.PromoteUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.PromoteUpdate{ID: id, By: s.caller(ctx)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.PromoteUpdateResponse{Update: updateToProto(u)}, nil
}

func (s *jobService) PauseUpdate(ctx context.Context, req *pb.PauseUpdateRequest) (*pb.PauseUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.PauseUpdate{ID: id})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.PauseUpdateResponse{Update: updateToProto(u)}, nil
}

func (s *jobService) ResumeUpdate(ctx context.Context, req *pb.ResumeUpdateRequest) (*pb.ResumeUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.ResumeUpdate{ID: id})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ResumeUpdateResponse{Update: updateToProto(u)}, nil
}

func (s *jobService) RollbackUpdate(ctx context.Context, req *pb.RollbackUpdateRequest) (*pb.RollbackUpdateResponse, error) {
	id, err := updateID("update_id", req.UpdateId)
	if err != nil {
		return nil, err
	}
	u, err := jobmgr.Do(ctx, s.engine, jobmgr.RollbackUpdate{ID: id})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.RollbackUpdateResponse{Update: updateToProto(u)}, nil
}
