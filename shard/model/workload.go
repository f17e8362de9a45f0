package model

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// PullPolicy says when a host fetches a task's image.
type PullPolicy uint8

const (
	// PullIfNotPresent fetches the image only when the host lacks it.
	PullIfNotPresent PullPolicy = iota + 1
	PullAlways
	PullNever
)

var pullPolicyNames = [...]string{"", "IfNotPresent", "Always", "Never"}

func (p PullPolicy) String() string {
	if int(p) < len(pullPolicyNames) {
		return pullPolicyNames[p]
	}
	return "Unknown"
}

// Container is the image a task runs in. Without one a task is a command
// on the host.
type Container struct {
	Image      string
	PullPolicy PullPolicy
}

// PortSpec is a named port a task listens on. Port 0 asks for a free host
// port, allocated from the host's port ranges.
type PortSpec struct {
	Name string
	Port uint32
}

// NamedPort is a host port assigned to one of a task's named ports.
type NamedPort struct {
	Name string
	Port uint32
}

// PortRange is the host ports From..To, both included.
type PortRange struct{ From, To uint32 }

// Size is how many ports the range holds.
func (r PortRange) Size() int {
	if r.To < r.From {
		return 0
	}
	return int(r.To-r.From) + 1
}

// ProbeKind is how a health check tests a task.
type ProbeKind uint8

const (
	// ProbeCommand runs a command beside the task; exit 0 is healthy.
	ProbeCommand ProbeKind = iota + 1
	// ProbeHTTP sends GET Path to the task's port; 2xx and 3xx are healthy.
	ProbeHTTP
	// ProbeTCP opens a connection to the task's port.
	ProbeTCP
)

var probeKindNames = [...]string{"", "command", "http", "tcp"}

func (k ProbeKind) String() string {
	if int(k) < len(probeKindNames) {
		return probeKindNames[k]
	}
	return "unknown"
}

// HealthCheck is a liveness or readiness probe of a task.
type HealthCheck struct {
	Kind ProbeKind
	// Command and Args for ProbeCommand.
	Command string
	Args    []string
	// Port for ProbeHTTP and ProbeTCP: the name of one of the task's
	// ports, or a port number.
	Port string
	// Path for ProbeHTTP.
	Path string
	// InitialDelay passes after the task starts before the first probe.
	InitialDelay time.Duration
	Interval     time.Duration
	Timeout      time.Duration
	// FailureThreshold is how many probes in a row must fail before the
	// task counts as unhealthy.
	FailureThreshold uint32
}

// Defaults of a health check's timing, as Kubernetes probes have them.
const (
	DefaultProbeInterval         = 10 * time.Second
	DefaultProbeTimeout          = time.Second
	DefaultProbeFailureThreshold = 3
)

// WithDefaults returns the check with zero timings set to their defaults.
func (h HealthCheck) WithDefaults() HealthCheck {
	if h.Interval <= 0 {
		h.Interval = DefaultProbeInterval
	}
	if h.Timeout <= 0 {
		h.Timeout = DefaultProbeTimeout
	}
	if h.FailureThreshold == 0 {
		h.FailureThreshold = DefaultProbeFailureThreshold
	}
	return h
}

// ResolvePort returns the host port the check probes: the assigned port of
// the named port, or the number it gives. Zero when it names no port.
func (h *HealthCheck) ResolvePort(ports []NamedPort) uint32 {
	for _, p := range ports {
		if p.Name == h.Port {
			return p.Port
		}
	}
	n, err := strconv.ParseUint(h.Port, 10, 16)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// Volume is a persistent volume of a stateful task: created on the host
// the instance first lands on, mounted at Path, kept across runs and
// stops, removed with the job.
type Volume struct {
	Name   string
	SizeMB int64
	Path   string
}

// VolumeID names the volume of one instance of a job on its host:
// "<job>-<instance>-<name>".
func VolumeID(t TaskID, name string) string {
	return string(t.Job) + "-" + strconv.FormatUint(uint64(t.Instance), 10) + "-" + name
}

// HealthState is what a task's probes say. HealthNone: it has no probe.
type HealthState uint8

const (
	HealthNone HealthState = iota
	// HealthUnknown: probed, but no verdict yet (starting up).
	HealthUnknown
	HealthHealthy
	HealthUnhealthy
)

var healthStateNames = [...]string{"", "UNKNOWN", "HEALTHY", "UNHEALTHY"}

func (h HealthState) String() string {
	if int(h) < len(healthStateNames) {
		return healthStateNames[h]
	}
	return "?"
}

// SpreadSpec allows at most Max instances of a job per value of the host
// label Label.
type SpreadSpec struct {
	Label string
	Max   uint32
}

// Labels every host carries besides its own, so that placement can pin a
// task to a host or to hosts that can run it with ordinary constraints.
const (
	// LabelHost is the host's ID.
	LabelHost = "peloton.io/host"
	// LabelRunsImages is "true" on hosts that run container images.
	LabelRunsImages = "peloton.io/runs-images"
)

// PortEnv is the environment variable a task finds its named port in:
// PORT_<NAME>, upper case, with '-' and '.' as '_'.
func PortEnv(name string) string {
	return "PORT_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r == '-' || r == '.':
			return '_'
		}
		return r
	}, name)
}

// SortPorts orders assigned ports by name.
func SortPorts(ps []NamedPort) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
}
