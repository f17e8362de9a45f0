package k8s

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/model"
)

// Errors returned by the Kubernetes plugin.
var (
	ErrInvalidConfig  = errors.New("kubernetes host manager: invalid config")
	ErrAlreadyRunning = errors.New("kubernetes host manager: already running")
	ErrNotSynced      = errors.New("kubernetes host manager: informers did not sync")
)

// Defaults for Config fields left zero.
const (
	DefaultNamespace      = "default"
	DefaultQPS            = 50
	DefaultBurst          = 100
	DefaultNodeGrace      = 40 * time.Second
	DefaultFinishedPodTTL = time.Hour
	DefaultSchedulerName  = "peloton"
	DefaultImage          = "busybox:stable"
	DefaultGPUResource    = "nvidia.com/gpu"
	DefaultResync         = 10 * time.Minute
	DefaultCheckInterval  = time.Second
	DefaultVolumeBasePath = "/var/lib/peloton/volumes"
	DefaultStorageClass   = "peloton-local"
)

// Config configures a Kubernetes plugin.
type Config struct {
	// Cluster names the plugin's cluster; hosts are "<Cluster>/<node>".
	Cluster string
	// Client talks to the API server. When nil, one is made from
	// Kubeconfig and Context with QPS and Burst.
	Client kubernetes.Interface
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG or
	// ~/.kube/config.
	Kubeconfig string
	// Context picks a context of the kubeconfig; empty means its current one.
	Context string
	// Namespace receives the pods; empty means the context's namespace,
	// else "default".
	Namespace string
	// QPS and Burst bound the client's request rate (pod creates and
	// deletes included).
	QPS   float32
	Burst int
	// LaunchParallelism bounds concurrent pod creates; 0 means Burst.
	LaunchParallelism int
	// NodeGrace is how long a node may stay not Ready before its runs are
	// reported LOST.
	NodeGrace time.Duration
	// FinishedPodTTL is how long a finished pod is kept after its end was
	// reported, so a restarted shard can still read it.
	FinishedPodTTL time.Duration
	// SchedulerName is set on every pod, so no Kubernetes scheduler acts on it.
	SchedulerName string
	// Image runs the command of a task that names no image of its own.
	Image string
	// Ports are the host ports every node offers to tasks; nil means
	// model.DefaultPorts.
	Ports []model.PortRange
	// VolumeBasePath is the directory on each node under which the local
	// persistent volumes of stateful tasks live:
	// <VolumeBasePath>/<namespace>/<claim name>.
	VolumeBasePath string
	// StorageClass names the storage class of those volumes and claims.
	StorageClass string
	// GPUResource is the extended resource counted as GPUs.
	GPUResource string
	// Resync is the informers' resync period.
	Resync time.Duration
	// CheckInterval is how often node grace and finished pods are checked.
	CheckInterval time.Duration
	// Clock times node grace and pod retention.
	Clock clock.Clock
	// Logger receives state transitions; nil discards them.
	Logger *slog.Logger
}

// withDefaults checks cfg and fills in defaults and the client.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Cluster == "" || strings.Contains(cfg.Cluster, "/") {
		return cfg, fmt.Errorf("%w: Cluster %q must be non-empty and hold no '/'", ErrInvalidConfig, cfg.Cluster)
	}
	for name, d := range map[string]time.Duration{"NodeGrace": cfg.NodeGrace, "FinishedPodTTL": cfg.FinishedPodTTL,
		"Resync": cfg.Resync, "CheckInterval": cfg.CheckInterval} {
		if d < 0 {
			return cfg, fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, name, d)
		}
	}
	if cfg.QPS < 0 || cfg.Burst < 0 || cfg.LaunchParallelism < 0 {
		return cfg, fmt.Errorf("%w: QPS, Burst and LaunchParallelism must not be negative", ErrInvalidConfig)
	}
	setDefault(&cfg.QPS, DefaultQPS)
	setDefault(&cfg.Burst, DefaultBurst)
	setDefault(&cfg.LaunchParallelism, cfg.Burst)
	setDefault(&cfg.NodeGrace, DefaultNodeGrace)
	setDefault(&cfg.FinishedPodTTL, DefaultFinishedPodTTL)
	setDefault(&cfg.SchedulerName, DefaultSchedulerName)
	setDefault(&cfg.Image, DefaultImage)
	setDefault(&cfg.GPUResource, DefaultGPUResource)
	setDefault(&cfg.Resync, DefaultResync)
	setDefault(&cfg.CheckInterval, DefaultCheckInterval)
	setDefault(&cfg.VolumeBasePath, DefaultVolumeBasePath)
	setDefault(&cfg.StorageClass, DefaultStorageClass)
	if !strings.HasPrefix(cfg.VolumeBasePath, "/") {
		return cfg, fmt.Errorf("%w: VolumeBasePath %q must be an absolute path", ErrInvalidConfig, cfg.VolumeBasePath)
	}
	if cfg.Ports == nil {
		cfg.Ports = slices.Clone(model.DefaultPorts)
	}
	for _, r := range cfg.Ports {
		if r.From == 0 || r.To < r.From || r.To > 65535 {
			return cfg, fmt.Errorf("%w: port range %d-%d must lie within 1-65535, low end first", ErrInvalidConfig, r.From, r.To)
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		client, ns, err := clientFromKubeconfig(cfg)
		if err != nil {
			return cfg, err
		}
		cfg.Client = client
		setDefault(&cfg.Namespace, ns)
	}
	setDefault(&cfg.Namespace, DefaultNamespace)
	return cfg, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// clientFromKubeconfig builds a client and reads the context's namespace.
// It reads the kubeconfig file but does not contact the server.
func clientFromKubeconfig(cfg Config) (kubernetes.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context})
	rest, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%w: kubeconfig: %v", ErrInvalidConfig, err)
	}
	rest.QPS, rest.Burst = cfg.QPS, cfg.Burst
	rest.UserAgent = "peloton-hostmgr/" + cfg.Cluster
	client, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return nil, "", fmt.Errorf("%w: client: %v", ErrInvalidConfig, err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		ns = ""
	}
	return client, ns, nil
}

// ParsePortRanges reads port ranges written "FROM-TO" (or a single port),
// several joined by '+', as in "31000-32000+40000-40100".
func ParsePortRanges(s string) ([]model.PortRange, error) {
	var out []model.PortRange
	for _, part := range strings.Split(s, "+") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		from, err := strconv.ParseUint(lo, 10, 16)
		to := from
		if err == nil && isRange {
			to, err = strconv.ParseUint(hi, 10, 16)
		}
		if err != nil || from == 0 || to < from {
			return nil, fmt.Errorf("%w: port range %q must be FROM-TO within 1-65535, low end first", ErrInvalidConfig, part)
		}
		out = append(out, model.PortRange{From: uint32(from), To: uint32(to)})
	}
	return out, nil
}
