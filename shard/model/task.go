package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TaskState is the state of one run of a task.
type TaskState uint8

const (
	TaskInitialized TaskState = iota + 1
	TaskPending
	TaskReady
	TaskPlacing
	TaskPlaced
	TaskLaunching
	TaskRunning
	TaskSucceeded
	TaskFailed
	TaskKilled
	TaskLost
)

// NumTaskStates bounds TaskState values, for arrays indexed by state.
const NumTaskStates = int(TaskLost) + 1

var taskStateNames = [...]string{"", "INITIALIZED", "PENDING", "READY", "PLACING", "PLACED", "LAUNCHING", "RUNNING", "SUCCEEDED", "FAILED", "KILLED", "LOST"}

func (s TaskState) String() string {
	if int(s) < len(taskStateNames) {
		return taskStateNames[s]
	}
	return "UNKNOWN"
}

// ParseTaskState is the inverse of String.
func ParseTaskState(s string) (TaskState, bool) {
	for i, n := range taskStateNames {
		if i > 0 && n == s {
			return TaskState(i), true
		}
	}
	return 0, false
}

// IsTerminal reports whether a run in this state has ended.
func (s TaskState) IsTerminal() bool {
	return s == TaskSucceeded || s == TaskFailed || s == TaskKilled || s == TaskLost
}

// HoldsResources reports whether a task in this state has host resources
// assigned (placed, launching or running).
func (s TaskState) HoldsResources() bool {
	return s == TaskPlaced || s == TaskLaunching || s == TaskRunning
}

// Reasons recorded on task transitions.
const (
	ReasonExitZero    = "EXIT_ZERO"
	ReasonExitNonZero = "EXIT_NONZERO"
	ReasonKilled      = "KILLED_BY_USER"
	ReasonPreempted   = "PREEMPTED"
	ReasonHostLost    = "HOST_LOST"
	ReasonLaunchError = "LAUNCH_FAILED"
	ReasonUnknownTask = "UNKNOWN_TO_HOST_MANAGER"
	ReasonRetrying    = "RETRYING"
	ReasonUnplaceable = "UNPLACEABLE"
	ReasonUnhealthy   = "UNHEALTHY"
	ReasonHostGone    = "HOST_GONE"
)

// TaskID identifies a task: one instance of a job.
type TaskID struct {
	Job      JobID
	Instance uint32
}

func (t TaskID) String() string { return fmt.Sprintf("%s/%d", t.Job, t.Instance) }

// RunID identifies one run of a task towards host managers:
// "<job>-<instance>-<run>".
type RunID string

// MakeRunID builds the run id of run `run` of task t.
func MakeRunID(t TaskID, run uint32) RunID {
	return RunID(string(t.Job) + "-" + strconv.FormatUint(uint64(t.Instance), 10) + "-" + strconv.FormatUint(uint64(run), 10))
}

// Parse splits a run id into its task and run number.
func (r RunID) Parse() (TaskID, uint32, bool) {
	s := string(r)
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return TaskID{}, 0, false
	}
	run, err := strconv.ParseUint(s[i+1:], 10, 32)
	if err != nil {
		return TaskID{}, 0, false
	}
	s = s[:i]
	j := strings.LastIndexByte(s, '-')
	if j < 0 {
		return TaskID{}, 0, false
	}
	inst, err := strconv.ParseUint(s[j+1:], 10, 32)
	if err != nil {
		return TaskID{}, 0, false
	}
	return TaskID{Job: JobID(s[:j]), Instance: uint32(inst)}, uint32(run), true
}

// TaskRuntime is the mutable state of a task, persisted on every transition.
type TaskRuntime struct {
	ID    TaskID
	Run   uint32
	State TaskState
	// Goal is TaskSucceeded for batch work, TaskKilled once stopped.
	Goal     TaskState
	Host     HostID
	Cluster  string
	Reason   string
	Message  string
	ExitCode int32
	// Failures counts runs that failed (not lost or preempted).
	Failures       uint32
	StartTime      time.Time
	CompletionTime time.Time
	UpdateTime     time.Time
	RetryAfter     time.Time
	// ConfigVersion is the job config the current run was started on (or
	// will start on, before it launches).
	ConfigVersion uint64
	// Health and Ready are what the current run's health check and
	// readiness probe say (HealthNone without one).
	Health HealthState
	Ready  HealthState
	// Extra holds what only some tasks have (assigned ports, a pinned
	// host), so that the many tasks without pay one pointer. It is replaced
	// whole, never changed in place: copies of a runtime may share it.
	// Read and set it through Ports, PinnedHost, SetPorts and SetPinnedHost.
	Extra *TaskExtra
	// Revision increases on every stored change; stores compare-and-set on it.
	Revision uint64
}

// RunID returns the id of the task's current run.
func (t *TaskRuntime) RunID() RunID { return MakeRunID(t.ID, t.Run) }

// TaskExtra is the part of a task's runtime only some tasks have.
type TaskExtra struct {
	// Ports are the host ports assigned to the current run.
	Ports []NamedPort
	// PinnedHost is the host the task must run on: where a stateful
	// instance's volumes are, or the host a daemon instance is for.
	PinnedHost HostID
}

// Ports are the host ports assigned to the task's current run.
func (t *TaskRuntime) Ports() []NamedPort {
	if t.Extra == nil {
		return nil
	}
	return t.Extra.Ports
}

// PinnedHost is the host the task must run on, "" when it may run anywhere.
func (t *TaskRuntime) PinnedHost() HostID {
	if t.Extra == nil {
		return ""
	}
	return t.Extra.PinnedHost
}

// SetPorts records the ports of the current run.
func (t *TaskRuntime) SetPorts(ports []NamedPort) { t.setExtra(ports, t.PinnedHost()) }

// SetPinnedHost pins the task to a host ("" unpins it).
func (t *TaskRuntime) SetPinnedHost(h HostID) { t.setExtra(t.Ports(), h) }

func (t *TaskRuntime) setExtra(ports []NamedPort, pinned HostID) {
	if len(ports) == 0 && pinned == "" {
		t.Extra = nil
		return
	}
	t.Extra = &TaskExtra{Ports: ports, PinnedHost: pinned}
}
