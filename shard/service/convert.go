package service

import (
	"strings"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func resourcesToModel(r *pb.Resources) model.Resources {
	if r == nil {
		return model.Resources{}
	}
	return model.Resources{CPU: r.Cpu, MemMB: r.MemMb, DiskMB: r.DiskMb, GPU: r.Gpu}
}

func resourcesToProto(r model.Resources) *pb.Resources {
	return &pb.Resources{Cpu: r.CPU, MemMb: r.MemMB, DiskMb: r.DiskMB, Gpu: r.GPU}
}

func constraintsToModel(cs []*pb.Constraint) []model.Constraint {
	if len(cs) == 0 {
		return nil
	}
	out := make([]model.Constraint, len(cs))
	for i, c := range cs {
		out[i] = model.Constraint{
			Key:    c.Key,
			Op:     model.ConstraintOp(c.Op),
			Values: append([]string(nil), c.Values...),
			AllOf:  constraintsToModel(c.AllOf),
			AnyOf:  constraintsToModel(c.AnyOf),
		}
	}
	return out
}

func constraintsToProto(cs []model.Constraint) []*pb.Constraint {
	if len(cs) == 0 {
		return nil
	}
	out := make([]*pb.Constraint, len(cs))
	for i, c := range cs {
		out[i] = &pb.Constraint{
			Key:    c.Key,
			Op:     pb.ConstraintOp(c.Op),
			Values: c.Values,
			AllOf:  constraintsToProto(c.AllOf),
			AnyOf:  constraintsToProto(c.AnyOf),
		}
	}
	return out
}

// specToModel converts a validated spec with defaults applied.
func specToModel(s *pb.JobSpec) model.JobSpec {
	t := s.GetTask()
	return model.JobSpec{
		Name:        s.Name,
		Type:        model.JobType(s.Type),
		Pool:        s.Pool,
		Region:      s.Region,
		Priority:    s.Priority,
		Preemptible: s.Preemptible,
		Instances:   s.Instances,
		MaxRunning:  s.MaxRunning,
		MaxAttempts: s.MaxAttempts,
		Labels:      s.Labels,
		GangSize:    s.GangSize,
		GangRestart: s.GangRestart,
		Revocable:   s.Revocable,
		Task: model.TaskSpec{
			Command:     t.GetCommand(),
			Args:        t.GetArgs(),
			Env:         t.GetEnv(),
			Resources:   resourcesToModel(t.GetResources()),
			Constraints: constraintsToModel(t.GetConstraints()),
			KillGrace:   time.Duration(t.GetKillGracePeriodSeconds()) * time.Second,
		},
	}
}

func specToProto(s *model.JobSpec) *pb.JobSpec {
	return &pb.JobSpec{
		Name:        s.Name,
		Type:        pb.JobType(s.Type),
		Pool:        s.Pool,
		Region:      s.Region,
		Priority:    s.Priority,
		Preemptible: s.Preemptible,
		Instances:   s.Instances,
		MaxRunning:  s.MaxRunning,
		MaxAttempts: s.MaxAttempts,
		Labels:      s.Labels,
		GangSize:    s.GangSize,
		GangRestart: s.GangRestart,
		Revocable:   s.Revocable,
		Task: &pb.TaskSpec{
			Command:                s.Task.Command,
			Args:                   s.Task.Args,
			Env:                    s.Task.Env,
			Resources:              resourcesToProto(s.Task.Resources),
			Constraints:            constraintsToProto(s.Task.Constraints),
			KillGracePeriodSeconds: uint32(s.Task.KillGrace / time.Second),
		},
	}
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func jobStatusToProto(s *model.JobStatus) *pb.JobStatus {
	out := &pb.JobStatus{
		State:          pb.JobState(s.State),
		TaskStates:     map[string]uint32{},
		CreateTime:     ts(s.CreateTime),
		StartTime:      ts(s.StartTime),
		CompletionTime: ts(s.CompletionTime),
		Region:         s.Region,
		Message:        s.Message,
	}
	for st, n := range s.TaskStates {
		out.TaskStates[st.String()] = n
	}
	return out
}

func jobToProto(j *model.Job) *pb.Job {
	return &pb.Job{Id: string(j.ID), Spec: specToProto(&j.Spec), Status: jobStatusToProto(&j.Status)}
}

func taskToProto(t *model.TaskRuntime) *pb.Task {
	return &pb.Task{
		JobId:          string(t.ID.Job),
		Instance:       t.ID.Instance,
		State:          pb.TaskState(t.State),
		GoalState:      pb.TaskState(t.Goal),
		Run:            t.Run,
		Host:           hostName(t.Host),
		Cluster:        t.Cluster,
		Reason:         t.Reason,
		Message:        t.Message,
		ExitCode:       t.ExitCode,
		StartTime:      ts(t.StartTime),
		CompletionTime: ts(t.CompletionTime),
		UpdateTime:     ts(t.UpdateTime),
		RetryAfter:     ts(t.RetryAfter),
	}
}

// hostName strips the cluster prefix of a host id.
func hostName(id model.HostID) string {
	s := string(id)
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
