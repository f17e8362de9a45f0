package mesos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
)

// Errors returned by the Mesos plugin.
var (
	ErrInvalidConfig  = errors.New("mesos host manager: invalid config")
	ErrAlreadyRunning = errors.New("mesos host manager: already running")
	ErrNotConnected   = errors.New("mesos host manager: not subscribed")
	ErrHeartbeatLost  = errors.New("mesos host manager: no heartbeat from the master")
	ErrSubscribe      = errors.New("mesos host manager: subscribe failed")
	ErrMasterError    = errors.New("mesos host manager: master sent an error")
	ErrCall           = errors.New("mesos host manager: call refused")
	ErrUnknownHost    = errors.New("mesos host manager: unknown host")
)

// HostKind is the Kind of the hosts this plugin reports.
const HostKind = "mesos"

// Defaults of Config.
const (
	DefaultFrameworkName = "peloton"
	// DefaultRole is a role of its own: persistent volumes need one, as
	// role "*" cannot reserve resources.
	DefaultRole              = "peloton"
	DefaultUser              = "root"
	DefaultFailoverTimeout   = 7 * 24 * time.Hour
	DefaultOfferHold         = 30 * time.Second
	DefaultDeclineRefuse     = 30 * time.Second
	DefaultLaunchWait        = 10 * time.Second
	DefaultReconcileInterval = 5 * time.Minute
	DefaultUnreachableWait   = 5 * time.Minute
	DefaultHeartbeatMisses   = 5
	DefaultMinBackoff        = 100 * time.Millisecond
	DefaultMaxBackoff        = 15 * time.Second
	DefaultCallTimeout       = 30 * time.Second
	DefaultCallWorkers       = 8
)

// FrameworkIDStore keeps the framework id across restarts, so that the
// shard re-subscribes as the same framework and keeps its tasks.
type FrameworkIDStore interface {
	// LoadFrameworkID returns the stored id, "" when there is none.
	LoadFrameworkID(ctx context.Context) (string, error)
	// SaveFrameworkID stores the id ("" forgets it).
	SaveFrameworkID(ctx context.Context, id string) error
}

// MemoryFrameworkIDStore is a FrameworkIDStore in memory.
type MemoryFrameworkIDStore struct {
	mu sync.Mutex
	id string
}

// LoadFrameworkID implements FrameworkIDStore.
func (s *MemoryFrameworkIDStore) LoadFrameworkID(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, nil
}

// SaveFrameworkID implements FrameworkIDStore.
func (s *MemoryFrameworkIDStore) SaveFrameworkID(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id = id
	return nil
}

// Config configures a Mesos plugin. Zero values take the defaults.
type Config struct {
	// Cluster names the plugin's cluster; hosts are "<Cluster>/<hostname>".
	Cluster string
	// Masters are the master endpoints, e.g. "http://m1:5050"; the path
	// /api/v1/scheduler is added when a URL has none. Tried in turn.
	Masters []string
	// FrameworkIDs keeps the framework id; nil keeps it in memory only.
	FrameworkIDs FrameworkIDStore
	// FrameworkName, Role, User and Principal go into FrameworkInfo.
	FrameworkName string
	Role          string
	User          string
	Principal     string
	// FailoverTimeout is how long the master keeps the framework's tasks
	// while it is disconnected.
	FailoverTimeout time.Duration
	// JSON selects JSON instead of protobuf on the wire.
	JSON bool
	// OfferHold is how long an unused offer is held before it is declined.
	OfferHold time.Duration
	// DeclineRefuse is the refuse filter sent with declined offers.
	DeclineRefuse time.Duration
	// LaunchWait is how long a launch waits for an offer with enough
	// resources on its agent before it is reported LOST.
	LaunchWait time.Duration
	// ReconcileInterval is the period of implicit reconciliation.
	ReconcileInterval time.Duration
	// UnreachableWait is how long a run whose agent is unreachable
	// (TASK_UNREACHABLE, or FAILURE of its agent) is left running in the
	// shard before it is reported LOST and its host removed, so that a
	// short partition does not run it twice. Mesos itself marks an agent
	// unreachable after about 75 s without pongs.
	UnreachableWait time.Duration
	// HeartbeatMisses is how many heartbeat intervals without any event
	// make the stream count as lost.
	HeartbeatMisses int
	// MinBackoff and MaxBackoff bound the reconnection backoff.
	MinBackoff, MaxBackoff time.Duration
	// CallTimeout bounds each call other than SUBSCRIBE.
	CallTimeout time.Duration
	// CallWorkers is how many calls (ACCEPT, ACKNOWLEDGE) run at once.
	CallWorkers int
	// WithoutGPUCapability subscribes without GPU_RESOURCES, so that the
	// master offers nothing of agents with GPUs. For tests only.
	WithoutGPUCapability bool
	Clock                clock.Clock
	Logger               *slog.Logger
}

// validate checks the config and fills in the defaults of zero values,
// in the order of the fields it reports on first.
func (c *Config) validate() error {
	if c.Cluster == "" || strings.Contains(c.Cluster, "/") {
		return fmt.Errorf("%w: Cluster %q must be non-empty and hold no '/'", ErrInvalidConfig, c.Cluster)
	}
	if err := c.masterURLs(); err != nil {
		return err
	}
	if err := c.durations(); err != nil {
		return err
	}
	if c.HeartbeatMisses < 0 || c.CallWorkers < 0 {
		return fmt.Errorf("%w: HeartbeatMisses and CallWorkers must not be negative", ErrInvalidConfig)
	}
	c.HeartbeatMisses = cmp.Or(c.HeartbeatMisses, DefaultHeartbeatMisses)
	c.CallWorkers = cmp.Or(c.CallWorkers, DefaultCallWorkers)
	c.FrameworkName = cmp.Or(c.FrameworkName, DefaultFrameworkName)
	c.Role = cmp.Or(c.Role, DefaultRole)
	if strings.ContainsAny(c.Role, " /\\\t\n") || c.Role == "." || c.Role == ".." {
		return fmt.Errorf("%w: Role %q is not a valid Mesos role", ErrInvalidConfig, c.Role)
	}
	c.User = cmp.Or(c.User, DefaultUser)
	if c.FrameworkIDs == nil {
		c.FrameworkIDs = &MemoryFrameworkIDStore{}
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// masterURLs checks that there is a master and that each is an http(s)
// URL, and gives one without a path the scheduler API's.
func (c *Config) masterURLs() error {
	if len(c.Masters) == 0 {
		return fmt.Errorf("%w: Masters: at least one master URL is needed", ErrInvalidConfig)
	}
	for i, m := range c.Masters {
		u, err := url.Parse(m)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: Masters[%d] %q is not an http(s) URL", ErrInvalidConfig, i, m)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/api/v1/scheduler"
		}
		c.Masters[i] = u.String()
	}
	return nil
}

// durations refuses negative durations, gives zero ones their defaults
// and checks that the backoff's bounds are in order.
func (c *Config) durations() error {
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"FailoverTimeout", &c.FailoverTimeout, DefaultFailoverTimeout},
		{"OfferHold", &c.OfferHold, DefaultOfferHold},
		{"DeclineRefuse", &c.DeclineRefuse, DefaultDeclineRefuse},
		{"LaunchWait", &c.LaunchWait, DefaultLaunchWait},
		{"ReconcileInterval", &c.ReconcileInterval, DefaultReconcileInterval},
		{"UnreachableWait", &c.UnreachableWait, DefaultUnreachableWait},
		{"MinBackoff", &c.MinBackoff, DefaultMinBackoff},
		{"MaxBackoff", &c.MaxBackoff, DefaultMaxBackoff},
		{"CallTimeout", &c.CallTimeout, DefaultCallTimeout},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, d.name, *d.v)
		}
		*d.v = cmp.Or(*d.v, d.def)
	}
	if c.MaxBackoff < c.MinBackoff {
		return fmt.Errorf("%w: MaxBackoff %v is below MinBackoff %v", ErrInvalidConfig, c.MaxBackoff, c.MinBackoff)
	}
	return nil
}
