package core

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// Limits bound what one region accepts. Zero values take the defaults.
type Limits struct {
	// InstancesPerJob is the most instances one job may have.
	InstancesPerJob uint32
	// PendingTasksPerPool is the most tasks of one pool that may wait to
	// run (not yet created, initialised or pending) at once.
	PendingTasksPerPool int64
	// JobsPerRequest is the most job specs one CreateJobs call may carry.
	JobsPerRequest int
}

// Default limits of a region.
const (
	DefaultInstancesPerJob     = 100_000
	DefaultPendingTasksPerPool = 1_000_000
	DefaultJobsPerRequest      = 1000
)

func (l *Limits) Defaults() {
	if l.InstancesPerJob == 0 {
		l.InstancesPerJob = DefaultInstancesPerJob
	}
	if l.PendingTasksPerPool == 0 {
		l.PendingTasksPerPool = DefaultPendingTasksPerPool
	}
	if l.JobsPerRequest == 0 {
		l.JobsPerRequest = DefaultJobsPerRequest
	}
}

// CountPending counts the pending tasks of every job. Callers hold e.mu.
func (e *State) CountPending() map[string]int64 {
	out := map[string]int64{}
	for _, je := range e.Jobs {
		j := je.Job
		if je.Evicted || j.Status.State.IsTerminal() || j.Status.Killed {
			continue
		}
		n := int64(je.Counts[model.TaskInitialized]) + int64(je.Counts[model.TaskPending])
		if own := j.Spec.OwnTasks(); own > j.Status.TasksCreated {
			n += int64(own - j.Status.TasksCreated)
		}
		if n > 0 {
			out[j.Spec.Pool] += n
		}
	}
	return out
}
