package hostmgr

import (
	"context"
	"errors"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Plugin connects a shard to one named cluster of hosts: a Mesos master, a
// Kubernetes API server, this machine, or a simulation. It is shaped after
// both Mesos (offers, ACCEPT/LAUNCH, KILL, RECONCILE, status updates) and
// Kubernetes (node and pod informers, pod create/delete): hosts and task
// statuses flow in through the Sink; launches and kills flow out.
type Plugin interface {
	// Cluster is the plugin's cluster name, unique within the shard.
	Cluster() string
	// Run connects to the cluster and reports hosts and task statuses to
	// sink until ctx is cancelled. It returns only on cancellation or an
	// unrecoverable error.
	Run(ctx context.Context, sink Sink) error
	// Launch starts runs on the hosts placement chose. It returns once the
	// cluster accepted them; progress arrives through the Sink. A run the
	// plugin cannot start is reported as a FAILED or LOST status.
	Launch(ctx context.Context, runs []Launch) error
	// Kill stops a run, politely first, forcibly after grace. The terminal
	// status arrives through the Sink.
	Kill(ctx context.Context, run model.RunID, host model.HostID, grace time.Duration) error
	// Reconcile asks for the current state of runs the shard believes are
	// launched or running; every one gets a status through the Sink, LOST
	// when the cluster does not know it.
	Reconcile(ctx context.Context, runs []RunRef) error
}

// Sink receives what plugins report. Implementations must not block for long.
type Sink interface {
	// HostsUpdated adds or replaces hosts of the plugin's cluster.
	HostsUpdated(hosts []model.Host)
	// HostsRemoved removes hosts; their runs will be reported LOST by the
	// plugin.
	HostsRemoved(ids []model.HostID)
	// TaskStatuses reports status changes of runs.
	TaskStatuses(statuses []TaskStatus)
}

// Launch is one run to start on a host.
type Launch struct {
	Run  model.RunID
	Host model.HostID
	Task *model.TaskSpec
	// Labels identify the run in the cluster (job, instance, run).
	Labels map[string]string
	// Env is what the shard adds to the task's own environment: the
	// documented PELOTON_* variables and PORT_<NAME> for each port.
	Env map[string]string
	// Ports are the host ports assigned to the task's named ports, in the
	// order of Task.Ports.
	Ports []model.NamedPort
	// Volumes are the persistent volumes of a stateful instance, created
	// on the host at the first launch and reused by later ones.
	Volumes []VolumeMount
	// Revocable: the run is revocable work (its job's spec says so); a
	// plugin whose cluster offers revocable resources (Mesos
	// oversubscription) runs it on those, and nothing else on them.
	Revocable bool
	// Gang lists every member of the run's gang, itself included; nil
	// without gangs. Plugins hand it to the task as a file, GangFileName in
	// its sandbox (or GangFilePath in an image), besides the environment.
	Gang []GangMember
}

// VolumeMount is a persistent volume of one instance.
type VolumeMount struct {
	// ID is model.VolumeID of the instance and the volume's name.
	ID     string
	Volume model.Volume
}

// GangMember is one placed member of a gang.
type GangMember struct {
	Instance uint32
	Host     model.HostID
	Hostname string
	Ports    []model.NamedPort
}

// Where a task finds its gang's members as JSON (a list of GangMember):
// the file plugins write, and the variable that names it.
const (
	GangFileName = "peloton-gang.json"
	GangFilePath = "/etc/peloton/gang.json"
	EnvGangFile  = "PELOTON_GANG_FILE"
)

// LabelDrainDeadline is the host label a plugin sets on a host it reports
// DRAINING when its cluster will take the host away at a known time (a
// Mesos maintenance window's start), as RFC 3339: the shard drains the
// host as an operator's drain with that deadline.
const LabelDrainDeadline = "peloton.drain-deadline"

// DrainDeadline reads LabelDrainDeadline; zero when it is absent or
// malformed.
func DrainDeadline(h *model.Host) time.Time {
	t, err := time.Parse(time.RFC3339, h.Labels[LabelDrainDeadline])
	if err != nil {
		return time.Time{}
	}
	return t
}

// VolumeRemover is an optional capability: plugins whose hosts keep
// persistent volumes remove them when their job is deleted.
type VolumeRemover interface {
	// RemoveVolumes deletes the volumes with these IDs on the host.
	RemoveVolumes(ctx context.Context, host model.HostID, ids []string) error
}

// RunRef names a run and the host it was launched on.
type RunRef struct {
	Run  model.RunID
	Host model.HostID
}

// TaskStatus is a status change of a run reported by a plugin.
type TaskStatus struct {
	Run      model.RunID
	Host     model.HostID
	State    model.TaskState
	Reason   string
	Message  string
	ExitCode int32
	Time     time.Time
	// Health and Ready are what the run's health check and readiness probe
	// say now; HealthNone when the plugin has no verdict to report.
	Health model.HealthState
	Ready  model.HealthState
}

// ErrUnknownRun is wrapped by the errors of plugins asked about a run their
// host does not hold (ReadLog of a run that never ran there).
var ErrUnknownRun = errors.New("unknown run")

// LogReader is an optional capability: plugins whose hosts keep task output
// serve it through ReadLog.
type LogReader interface {
	// ReadLog returns up to limit bytes of a run's stream ("stdout" or
	// "stderr") from offset (negative: from the end), the offset just past
	// the data, and the log's size; the error of a run the host does not
	// hold wraps ErrUnknownRun.
	ReadLog(ctx context.Context, run model.RunID, host model.HostID, stream string, offset, limit int64) (data []byte, next, size int64, err error)
}

// UsageReporter is an optional capability: plugins that measure what runs
// really use report it per host. Allocated-but-unused resources are the
// slack that revocable work runs on.
type UsageReporter interface {
	// MeasuredUsage returns what the host's runs use, if it was measured.
	MeasuredUsage(host model.HostID) (model.Resources, bool)
}
