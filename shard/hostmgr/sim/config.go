package sim

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/model"
)

// Errors returned by the simulation.
var (
	ErrInvalidConfig  = errors.New("sim host manager: invalid config")
	ErrAlreadyRunning = errors.New("sim host manager: already running")
	ErrUnknownHost    = errors.New("sim host manager: unknown host")
	ErrDuplicateHost  = errors.New("sim host manager: duplicate host")
	ErrNotRunning     = errors.New("sim host manager: run is not running")
)

// Task environment variables a simulated run obeys.
const (
	// EnvDuration is how long a run lasts, as a Go duration ("90s").
	EnvDuration = "PELOTON_SIM_DURATION"
	// EnvExitCode is the exit code a run ends with (default 0).
	EnvExitCode = "PELOTON_SIM_EXIT_CODE"
)

// HostKind is the Kind of simulated hosts.
const HostKind = "sim"

// DefaultRetainFinished is how many ended runs are remembered for Reconcile
// and Kill when Config.RetainFinished is 0.
const DefaultRetainFinished = 1 << 20

// HostSpec declares one simulated host.
type HostSpec struct {
	// Name is unique in the cluster; the host id is "<cluster>/<name>".
	Name     string
	Capacity model.Resources
	Labels   map[string]string
}

// Generator declares Count identical hosts named NamePrefix + index.
type Generator struct {
	Count int
	// NamePrefix defaults to "host-".
	NamePrefix string
	Shape      model.Resources
	// Labels cycle per host: host i gets Labels[key][i % len(values)], so
	// {"zone": {"a", "b", "c"}} spreads hosts over three zones.
	Labels map[string][]string
}

// Config configures a simulation.
type Config struct {
	Cluster string
	// Hosts are declared one by one; Generate adds more.
	Hosts    []HostSpec
	Generate Generator
	// Clock decides when runs end; tests use a clock.Fake.
	Clock clock.Clock
	// DefaultDuration is how long a run without EnvDuration lasts.
	DefaultDuration time.Duration
	// RetainFinished bounds how many ended runs are remembered (oldest
	// forgotten first; a forgotten run reconciles as LOST). 0 means
	// DefaultRetainFinished.
	RetainFinished int
}

// specs returns every declared and generated host.
func (c Config) specs() ([]HostSpec, error) {
	if c.Generate.Count < 0 {
		return nil, fmt.Errorf("%w: Generate.Count %d is negative", ErrInvalidConfig, c.Generate.Count)
	}
	out := make([]HostSpec, 0, len(c.Hosts)+c.Generate.Count)
	out = append(out, c.Hosts...)
	prefix := c.Generate.NamePrefix
	if prefix == "" {
		prefix = "host-"
	}
	for key, values := range c.Generate.Labels {
		if len(values) == 0 {
			return nil, fmt.Errorf("%w: Generate.Labels[%q] has no values", ErrInvalidConfig, key)
		}
	}
	width := len(strconv.Itoa(max(c.Generate.Count-1, 0)))
	for i := range c.Generate.Count {
		labels := make(map[string]string, len(c.Generate.Labels))
		for key, values := range c.Generate.Labels {
			labels[key] = values[i%len(values)]
		}
		out = append(out, HostSpec{
			Name:     fmt.Sprintf("%s%0*d", prefix, width, i),
			Capacity: c.Generate.Shape,
			Labels:   labels,
		})
	}
	return out, nil
}

// checkSpec returns why a host spec is not valid.
func checkSpec(s HostSpec) error {
	if s.Name == "" || strings.Contains(s.Name, "/") {
		return fmt.Errorf("%w: host name %q must be non-empty and hold no '/'", ErrInvalidConfig, s.Name)
	}
	if i := s.Capacity.Invalid(); i >= 0 {
		return fmt.Errorf("%w: host %q capacity %s is %s", ErrInvalidConfig, s.Name, model.ResourceKinds[i], model.FormatAmount(i, s.Capacity.Get(i)))
	}
	return nil
}

// hostOf builds the model host of a spec.
func hostOf(cluster string, s HostSpec) model.Host {
	labels := maps.Clone(s.Labels)
	if labels == nil {
		labels = make(map[string]string, 1)
	}
	labels["hostname"] = s.Name
	return model.Host{
		ID:       model.HostID(cluster + "/" + s.Name),
		Hostname: s.Name,
		Cluster:  cluster,
		Kind:     HostKind,
		State:    model.HostUp,
		Capacity: s.Capacity,
		Labels:   labels,
		// A simulated host runs whatever it is given, images included.
		RunsImages: true,
		Ports:      model.DefaultPorts,
	}
}
