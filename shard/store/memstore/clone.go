package memstore

import (
	"maps"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// normalTime is how every backend returns a time: UTC, no monotonic reading.
func normalTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

// cloneJob returns a deep copy of a job record with normalised times; the
// spec is not part of a record (configs are kept apart).
func cloneJob(j *model.Job) *model.Job {
	out := *j
	out.Spec = model.JobSpec{}
	out.Status = cloneStatus(&j.Status)
	return &out
}

func cloneStatus(s *model.JobStatus) model.JobStatus {
	out := *s
	out.TaskStates = maps.Clone(s.TaskStates)
	out.CreateTime = normalTime(s.CreateTime)
	out.StartTime = normalTime(s.StartTime)
	out.CompletionTime = normalTime(s.CompletionTime)
	if p := s.Periodic; p != nil {
		pc := *p
		pc.LastTick = normalTime(p.LastTick)
		out.Periodic = &pc
	}
	if r := s.RunOf; r != nil {
		out.RunOf = &model.RunOf{Parent: r.Parent, Tick: normalTime(r.Tick)}
	}
	return out
}

// cloneTask returns a copy of t with normalised times; TaskRuntime holds no
// reference types, so a value copy is deep.
func cloneTask(t *model.TaskRuntime) *model.TaskRuntime {
	out := *t
	out.StartTime = normalTime(out.StartTime)
	out.CompletionTime = normalTime(out.CompletionTime)
	out.UpdateTime = normalTime(out.UpdateTime)
	out.RetryAfter = normalTime(out.RetryAfter)
	return &out
}

// cloneUpdate returns a copy of u with normalised times; Update holds no
// reference types.
func cloneUpdate(u *model.Update) *model.Update {
	out := *u
	out.CreateTime = normalTime(u.CreateTime)
	out.CompletionTime = normalTime(u.CompletionTime)
	return &out
}

// cloneEvent returns a deep copy of e with normalised times.
func cloneEvent(e *model.Event) model.Event {
	out := *e
	out.Time = normalTime(e.Time)
	if e.JobStatus != nil {
		st := cloneStatus(e.JobStatus)
		out.JobStatus = &st
	}
	if e.Task != nil {
		out.Task = cloneTask(e.Task)
	}
	if e.HostPoolMove != nil {
		m := *e.HostPoolMove
		out.HostPoolMove = &m
	}
	return out
}
