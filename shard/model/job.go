package model

import "time"

// JobType says how a job's tasks are expected to behave.
type JobType uint8

const (
	JobBatch JobType = iota + 1
	JobService
	JobStateful
	JobDaemon
)

var jobTypeNames = [...]string{"", "batch", "service", "stateful", "daemon"}

func (t JobType) String() string {
	if int(t) < len(jobTypeNames) && t > 0 {
		return jobTypeNames[t]
	}
	return "unknown"
}

// JobState is the state of a job, derived from its tasks.
type JobState uint8

const (
	JobInitialized JobState = iota + 1
	JobPending
	JobRunning
	JobKilling
	JobSucceeded
	JobFailed
	JobKilled
)

var jobStateNames = [...]string{"", "INITIALIZED", "PENDING", "RUNNING", "KILLING", "SUCCEEDED", "FAILED", "KILLED"}

func (s JobState) String() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s]
	}
	return "UNKNOWN"
}

// IsTerminal reports whether the job has finished for good.
func (s JobState) IsTerminal() bool { return s == JobSucceeded || s == JobFailed || s == JobKilled }

// JobID identifies a job; unique across regions.
type JobID string

// TaskSpec is what every instance of a job runs.
type TaskSpec struct {
	Command     string
	Args        []string
	Env         map[string]string
	Resources   Resources
	Constraints []Constraint
	KillGrace   time.Duration
	// Container is the image to run Command in; nil runs Command on the
	// host. With an image, Command and Args override its entrypoint.
	Container *Container
	// Ports are the named ports the task listens on.
	Ports []PortSpec
	// HealthCheck restarts a service instance that fails it; Readiness
	// says when an instance may take traffic.
	HealthCheck *HealthCheck
	Readiness   *HealthCheck
	// Volumes are persistent volumes of a stateful job's instances.
	Volumes []Volume
}

// PortCount is how many host ports the task needs.
func (t *TaskSpec) PortCount() int { return len(t.Ports) }

// JobSpec is a validated job as submitted.
type JobSpec struct {
	Name        string
	Type        JobType
	Pool        string
	Region      string
	Priority    int32
	Preemptible bool
	Instances   uint32
	MaxRunning  uint32
	MaxAttempts uint32
	Task        TaskSpec
	Labels      map[string]string
	// GangSize > 1 groups consecutive instances into gangs of that size
	// (instances 0..n-1, n..2n-1, ...), admitted, placed, preempted and
	// killed as one.
	GangSize uint32
	// GangRestart restarts a whole gang when one member fails; otherwise a
	// failed member fails its gang.
	GangRestart bool
	// Revocable work runs on allocated-but-unused (slack) resources and is
	// the first killed when a host's slack shrinks.
	Revocable bool
	// Overrides give some instances a task that differs from Task.
	Overrides []InstanceOverride
	// MaxPerHost allows at most this many instances on one host; zero
	// means no limit.
	MaxPerHost uint32
	// Spread limits instances per value of a host label.
	Spread []SpreadSpec
	// SLA bounds disruptions of the job's instances; nil means the
	// default (one instance at a time for long-running jobs).
	SLA *SLA
	// Clusters steers new placements among clusters; nil: the pool's.
	Clusters *ClusterPolicy
	// Schedule makes the job periodic: it launches a run at each tick
	// and runs no tasks of its own. Nil: an ordinary job.
	Schedule *Schedule
}

// Periodic reports whether the job launches runs on a schedule rather
// than running tasks of its own.
func (s *JobSpec) Periodic() bool { return s.Schedule != nil }

// OwnTasks is how many tasks the job itself runs: its instances, none for
// a periodic job (its runs are jobs of their own).
func (s *JobSpec) OwnTasks() uint32 {
	if s.Periodic() {
		return 0
	}
	return s.Instances
}

// SLA is how many instances of a job may be unavailable at once: a count,
// or a percentage of its instances when Percent is set.
type SLA struct {
	MaxUnavailable uint32
	Percent        bool
}

// Pinned reports whether each instance of the job stays on the host it
// first ran on (stateful jobs, for their volumes) or is made for one host
// (daemon jobs).
func (s *JobSpec) Pinned() bool { return s.Type == JobStateful || s.Type == JobDaemon }

// LongRunning reports whether the job's instances run until stopped.
func (s *JobSpec) LongRunning() bool { return s.Type != JobBatch }

// Job is a job with its status.
type Job struct {
	ID     JobID
	Spec   JobSpec
	Status JobStatus
	// ConfigVersion is the version of Spec among the job's stored configs:
	// 1 when created, one more on every update.
	ConfigVersion uint64
	// Revision increases on every stored change.
	Revision uint64
}

// JobStatus is what the job manager derives and records about a job.
type JobStatus struct {
	State JobState
	// Killed is set once a stop was requested; the goal becomes KILLED.
	Killed bool
	// TasksCreated is how many task records exist (tasks are created
	// asynchronously after the job is accepted).
	TasksCreated   uint32
	TaskStates     map[TaskState]uint32
	CreateTime     time.Time
	StartTime      time.Time
	CompletionTime time.Time
	Region         string
	Message        string
	// Update is the job's latest update, if it was ever updated.
	Update UpdateID
	// Periodic is the schedule's state of a periodic job; nil otherwise.
	Periodic *PeriodicStatus
	// RunOf links a run of a periodic job to it; nil for other jobs.
	RunOf *RunOf
}
