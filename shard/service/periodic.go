package service

import (
	"fmt"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/periodic"
)

// Bounds of a schedule.
const (
	maxKeepRuns         = 100
	maxStartingDeadline = 366 * 24 * time.Hour
)

// scheduleProblems checks a job's schedule: its expression, its time
// zone, its policy and bounds, and that the job is a batch job (a run
// ends; a service run on a schedule would pile up).
func scheduleProblems(spec *pb.JobSpec) []pb.FieldError {
	s := spec.GetSchedule()
	if s == nil {
		return nil
	}
	var out []pb.FieldError
	add := func(path, msg string) { out = append(out, pb.FieldError{Path: "schedule." + path, Message: msg}) }
	if t := spec.GetType(); t != pb.JobType_JOB_TYPE_BATCH && t != pb.JobType_JOB_TYPE_UNSPECIFIED {
		out = append(out, pb.FieldError{Path: "schedule", Message: fmt.Sprintf("only a batch job can have a schedule, not a %s job", model.JobType(t))})
	}
	sc := scheduleToModel(s)
	if _, err := periodic.ParseCron(sc.Cron); err != nil {
		add("cron", err.Error())
	}
	if _, err := periodic.LoadZone(sc.TimeZone); err != nil {
		add("time_zone", err.Error())
	}
	switch s.GetConcurrencyPolicy() {
	case pb.ConcurrencyPolicy_CONCURRENCY_POLICY_UNSPECIFIED, pb.ConcurrencyPolicy_CONCURRENCY_POLICY_ALLOW,
		pb.ConcurrencyPolicy_CONCURRENCY_POLICY_FORBID, pb.ConcurrencyPolicy_CONCURRENCY_POLICY_REPLACE:
	default:
		add("concurrency_policy", fmt.Sprintf("unknown value %d", s.GetConcurrencyPolicy()))
	}
	if s.GetKeepRuns() > maxKeepRuns {
		add("keep_runs", fmt.Sprintf("must be at most %d", maxKeepRuns))
	}
	if d := time.Duration(s.GetStartingDeadlineSeconds()) * time.Second; d > maxStartingDeadline {
		add("starting_deadline_seconds", fmt.Sprintf("must be at most %d (a year)", int64(maxStartingDeadline/time.Second)))
	}
	return out
}

func scheduleToModel(s *pb.Schedule) *model.Schedule {
	if s == nil {
		return nil
	}
	return &model.Schedule{
		Cron:             s.Cron,
		TimeZone:         s.TimeZone,
		Concurrency:      model.Concurrency(max(s.ConcurrencyPolicy, pb.ConcurrencyPolicy_CONCURRENCY_POLICY_ALLOW)),
		StartingDeadline: time.Duration(s.StartingDeadlineSeconds) * time.Second,
		KeepRuns:         s.KeepRuns,
	}
}

func scheduleToProto(s *model.Schedule) *pb.Schedule {
	if s == nil {
		return nil
	}
	return &pb.Schedule{
		Cron:                    s.Cron,
		TimeZone:                s.TimeZone,
		ConcurrencyPolicy:       pb.ConcurrencyPolicy(s.Concurrency),
		StartingDeadlineSeconds: uint32(s.StartingDeadline / time.Second),
		KeepRuns:                s.KeepRuns,
	}
}

// periodicToProto is a periodic job's schedule state with its next tick.
func periodicToProto(j *model.Job) *pb.PeriodicStatus {
	if !j.Spec.Periodic() {
		return nil
	}
	var p model.PeriodicStatus
	if j.Status.Periodic != nil {
		p = *j.Status.Periodic
	}
	out := &pb.PeriodicStatus{
		Suspended:    p.Suspended,
		LastTickTime: ts(p.LastTick),
		LastRunId:    string(p.LastRun),
		Launched:     p.Launched,
		Skipped:      p.Skipped,
		Missed:       p.Missed,
	}
	if p.Suspended || j.Status.Killed || j.Status.State.IsTerminal() {
		return out
	}
	if c, loc, err := periodic.Parse(j.Spec.Schedule); err == nil {
		from := p.LastTick
		if from.Before(j.Status.CreateTime) {
			from = j.Status.CreateTime
		}
		out.NextRunTime = ts(c.Next(from, loc))
	}
	return out
}

func runOfToProto(r *model.RunOf) *pb.RunOf {
	if r == nil {
		return nil
	}
	return &pb.RunOf{JobId: string(r.Parent), TickTime: ts(r.Tick)}
}
