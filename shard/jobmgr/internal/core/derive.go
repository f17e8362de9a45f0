package core

import (
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
)

// TaskCounts counts a job's tasks per state.
type TaskCounts [model.NumTaskStates]uint32

func (c *TaskCounts) Sum(states ...model.TaskState) uint32 {
	var n uint32
	for _, s := range states {
		n += c[s]
	}
	return n
}

// active is how many tasks are between admission queue and running: what
// maxRunning bounds.
func (c *TaskCounts) active() uint32 {
	return c.Sum(model.TaskPending, model.TaskReady, model.TaskPlacing, model.TaskPlaced, model.TaskLaunching, model.TaskRunning)
}

func (c *TaskCounts) terminal() uint32 {
	return c.Sum(model.TaskSucceeded, model.TaskFailed, model.TaskKilled, model.TaskLost)
}

// DeriveJobState computes a job's state from its task counts. It is a pure
// function: the same counts always give the same state.
func DeriveJobState(spec *model.JobSpec, killed bool, created uint32, everRan bool, c *TaskCounts) (model.JobState, string) {
	if spec.Periodic() { // its runs are jobs of their own
		if killed {
			return model.JobKilled, "stopped: no more runs"
		}
		return model.JobRunning, ""
	}
	// Instances an update removed count until they are forgotten.
	n := max(spec.Instances, created)
	// A daemon job runs until stopped, even while no host wants it.
	daemonWaits := spec.Type == model.JobDaemon && !killed
	if created == n && c.terminal() == n && !daemonWaits {
		switch {
		case c[model.TaskFailed] > 0:
			return model.JobFailed, fmt.Sprintf("%d of %d tasks failed", c[model.TaskFailed], n)
		case c[model.TaskKilled] > 0:
			return model.JobKilled, fmt.Sprintf("%d of %d tasks killed", c[model.TaskKilled], n)
		case c[model.TaskSucceeded] == n:
			return model.JobSucceeded, ""
		}
		return model.JobFailed, fmt.Sprintf("%d of %d tasks lost", c[model.TaskLost], n)
	}
	if killed {
		return model.JobKilling, ""
	}
	if everRan || c[model.TaskRunning] > 0 || c.terminal() > 0 {
		return model.JobRunning, ""
	}
	if created > 0 {
		return model.JobPending, ""
	}
	return model.JobInitialized, ""
}
