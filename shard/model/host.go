package model

// HostID identifies a host across all host manager clusters of a shard:
// "<cluster>/<name>".
type HostID string

// HostState is whether a host takes new work.
type HostState uint8

const (
	HostUp HostState = iota + 1
	// HostDraining takes nothing new while what runs there is moved off
	// (services, under their SLA), finishes (batch, up to a deadline) or
	// is killed (revocable work): maintenance.
	HostDraining
	HostDown
	// HostDrained: drained, and nothing of the shard's runs there any more.
	HostDrained
)

var hostStateNames = [...]string{"", "UP", "DRAINING", "DOWN", "DRAINED"}

func (s HostState) String() string {
	if int(s) < len(hostStateNames) {
		return hostStateNames[s]
	}
	return "UNKNOWN"
}

// Host is a machine a host manager plugin offers to the shard.
type Host struct {
	ID       HostID
	Hostname string
	Cluster  string
	// Kind of host manager: local, sim, mesos, kubernetes.
	Kind  string
	State HostState
	// Capacity is what the shard may use on the host in total, including
	// what its own tasks hold there.
	Capacity Resources
	Labels   map[string]string
	// Ports are the host ports tasks may be given.
	Ports []PortRange
	// RunsImages: the host runs tasks in container images.
	RunsImages bool
}

// DefaultPorts is the port range of a host whose host manager does not
// say (the range Mesos agents offer by default).
var DefaultPorts = []PortRange{{From: 31000, To: 32000}}

// PortCount is how many ports the host's ranges hold.
func (h *Host) PortCount() int {
	n := 0
	for _, r := range h.Ports {
		n += r.Size()
	}
	return n
}
