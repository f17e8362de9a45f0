package service

import (
	"strings"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// resourcesToModel converts the API's decimal amounts (cpu in cores,
// validated to whole millicores) to integer units; +Inf is Unlimited.
func resourcesToModel(r *pb.Resources) model.Resources {
	if r == nil {
		return model.Resources{}
	}
	return model.ResourcesFromDecimal(r.Cpu, r.MemMb, r.DiskMb, r.Gpu)
}

func resourcesToProto(r model.Resources) *pb.Resources {
	out := &pb.Resources{}
	out.Cpu, out.MemMb, out.DiskMb, out.Gpu = r.Decimal()
	return out
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

func taskSpecToModel(t *pb.TaskSpec) model.TaskSpec {
	out := model.TaskSpec{
		Command:     t.GetCommand(),
		Args:        t.GetArgs(),
		Env:         t.GetEnv(),
		Resources:   resourcesToModel(t.GetResources()),
		Constraints: constraintsToModel(t.GetConstraints()),
		KillGrace:   time.Duration(t.GetKillGracePeriodSeconds()) * time.Second,
	}
	workloadToModel(t, &out)
	return out
}

func taskSpecToProto(t *model.TaskSpec) *pb.TaskSpec {
	out := &pb.TaskSpec{
		Command:                t.Command,
		Args:                   t.Args,
		Env:                    t.Env,
		Resources:              resourcesToProto(t.Resources),
		Constraints:            constraintsToProto(t.Constraints),
		KillGracePeriodSeconds: uint32(t.KillGrace / time.Second),
	}
	workloadToProto(t, out)
	return out
}

// overridesToModel converts validated overrides, parsing their instances.
func overridesToModel(os []*pb.InstanceOverride) []model.InstanceOverride {
	if len(os) == 0 {
		return nil
	}
	out := make([]model.InstanceOverride, len(os))
	for i, o := range os {
		ranges, _ := pb.ParseInstanceRanges(o.GetInstances()) // validated
		out[i].Instances = make([]model.InstanceRange, len(ranges))
		for k, r := range ranges {
			out[i].Instances[k] = model.InstanceRange(r)
		}
		out[i].Task = taskSpecToModel(o.GetTask())
	}
	return out
}

func overridesToProto(os []model.InstanceOverride) []*pb.InstanceOverride {
	if len(os) == 0 {
		return nil
	}
	out := make([]*pb.InstanceOverride, len(os))
	ranges := make([]pb.InstanceRange, 0, 8)
	for i := range os {
		ranges = ranges[:0]
		for _, r := range os[i].Instances {
			ranges = append(ranges, pb.InstanceRange(r))
		}
		task := taskSpecToProto(&os[i].Task)
		if os[i].Task.Resources == (model.Resources{}) {
			task.Resources = nil // keeps the job's; printed specs stay short
		}
		out[i] = &pb.InstanceOverride{Instances: pb.FormatInstanceRanges(ranges), Task: task}
	}
	return out
}

// specToModel converts a validated spec with defaults applied.
func specToModel(s *pb.JobSpec) model.JobSpec {
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
		Task:        taskSpecToModel(s.GetTask()),
		Overrides:   overridesToModel(s.GetOverrides()),
		MaxPerHost:  s.MaxPerHost,
		Spread:      spreadToModel(s.Spread),
		SLA:         slaToModel(s.GetSla()),
		Clusters:    clusterPolicyToModel(s.GetClusters()),
		Schedule:    scheduleToModel(s.GetSchedule()),
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
		Task:        taskSpecToProto(&s.Task),
		Overrides:   overridesToProto(s.Overrides),
		MaxPerHost:  s.MaxPerHost,
		Spread:      spreadToProto(s.Spread),
		Sla:         slaToProto(s.SLA),
		Clusters:    clusterPolicyToProto(s.Clusters),
		Schedule:    scheduleToProto(s.Schedule),
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
		UpdateId:       string(s.Update),
	}
	for st, n := range s.TaskStates {
		out.TaskStates[st.String()] = n
	}
	return out
}

func jobToProto(j *model.Job) *pb.Job {
	out := &pb.Job{Id: string(j.ID), Spec: specToProto(&j.Spec), Status: jobStatusToProto(&j.Status), ConfigVersion: j.ConfigVersion}
	out.Status.Periodic = periodicToProto(j)
	out.Status.RunOf = runOfToProto(j.Status.RunOf)
	return out
}

// tasksToProto converts a list of tasks.
func tasksToProto(ts []*model.TaskRuntime) []*pb.Task {
	out := make([]*pb.Task, len(ts))
	for i, t := range ts {
		out[i] = taskToProto(t)
	}
	return out
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
		ConfigVersion:  t.ConfigVersion,
		Health:         pb.HealthState(t.Health),
		Ready:          pb.HealthState(t.Ready),
		Ports:          portsToProto(t.Ports()),
		PinnedHost:     hostName(t.PinnedHost()),
	}
}

func updateToProto(u *model.Update) *pb.Update {
	return &pb.Update{
		Id:                      string(u.ID),
		JobId:                   string(u.Job),
		FromVersion:             u.FromVersion,
		ToVersion:               u.ToVersion,
		BatchSize:               u.BatchSize,
		State:                   pb.UpdateState(u.State),
		InstancesTotal:          u.InstancesTotal,
		InstancesDone:           u.InstancesDone,
		CreateTime:              ts(u.CreateTime),
		CompletionTime:          ts(u.CompletionTime),
		Message:                 u.Message,
		InstancesFailed:         u.InstancesFailed,
		MaxFailures:             u.MaxFailures,
		RollbackOnFailure:       u.RollbackOnFailure,
		Paused:                  u.Paused,
		MinHealthySeconds:       uint32(u.MinHealthy / time.Second),
		InPlace:                 u.InPlace,
		InstancesInFlight:       u.InstancesInFlight,
		Canary:                  u.Canary,
		AutoPromoteAfterSeconds: uint32(u.AutoPromoteAfter / time.Second),
		CanaryExtra:             u.CanaryExtra,
		Promoted:                u.Promoted,
		PromotedBy:              u.PromotedBy,
	}
}

func eventToProto(ev model.Event) *pb.Event {
	out := &pb.Event{Seq: ev.Seq, Time: ts(ev.Time), JobId: string(ev.Job)}
	if ev.JobStatus != nil {
		out.Kind = &pb.Event_Job{Job: jobStatusToProto(ev.JobStatus)}
	} else if ev.Task != nil {
		out.Kind = &pb.Event_Task{Task: taskToProto(ev.Task)}
	} else if ev.HostPoolMove != nil {
		out.Kind = &pb.Event_HostPoolMove{HostPoolMove: hostPoolMoveToProto(ev, "")}
	}
	return out
}

// hostPoolMoveToProto renders a move event of region.
func hostPoolMoveToProto(ev model.Event, region string) *pb.HostPoolMove {
	m := ev.HostPoolMove
	out := &pb.HostPoolMove{HostId: string(m.Host), From: m.From, To: m.To, Phase: pb.HostPoolMovePhase(m.Phase),
		Reason: m.Reason, Time: ts(ev.Time), Region: region}
	if m.Waited > 0 {
		out.Waited = durationpb.New(m.Waited)
	}
	return out
}

// hostName strips the cluster prefix of a host id.
func hostName(id model.HostID) string {
	s := string(id)
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
