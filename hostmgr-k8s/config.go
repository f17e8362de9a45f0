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
	DefaultNamespace = "default"
	// DefaultLaunchParallelism bounds the requests Launch has in flight.
	// With the API server's default limits (400 read + 200 mutating
	// requests in flight), priority and fairness gives the workload-low
	// level (service accounts) about 245 of them and global-default
	// (other users) about 49: 32 fits in either, so Peloton alone never
	// queues at its level and leaves room for its informers and kills. At
	// the 5-30 ms a pod create takes (one etcd write), 32 in flight are
	// 1,000-6,000 creates/s: the server, not the client, sets the pace.
	DefaultLaunchParallelism = 32
	// ProtobufContentType is what the client built from a kubeconfig
	// sends and prefers to receive (JSON stays acceptable): built-in
	// types in protobuf cost the API server and the informers a fraction
	// of JSON's decoding, as for Kubernetes' own components.
	ProtobufContentType   = "application/vnd.kubernetes.protobuf"
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
	// QPS and Burst set a client-side token bucket on the client built
	// from the kubeconfig (every request: pod creates and deletes
	// included); Burst 0 means twice QPS. QPS 0, the default, sets none:
	// the API server's priority and fairness (on by default since
	// Kubernetes 1.20, GA in 1.29) gives Peloton's requests their share of
	// the server's concurrency, queues what is beyond it and answers 429
	// with Retry-After when its queues are full, which client-go waits out
	// and retries (up to 10 times); LaunchParallelism bounds what Peloton
	// has in flight. A fixed client rate is an open-loop guess: too low it
	// throttles Peloton on an idle server (at kube-scheduler's 50 QPS,
	// 10,000 pods take 200 s), too high it protects nothing. Set one for
	// an API server that runs without priority and fairness.
	QPS   float32
	Burst int
	// LaunchParallelism bounds concurrent creates of Launch (pods,
	// volumes, gang config maps); 0 means DefaultLaunchParallelism.
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
	if cfg.QPS > 0 {
		setDefault(&cfg.Burst, max(int(2*cfg.QPS), 1))
	}
	setDefault(&cfg.LaunchParallelism, DefaultLaunchParallelism)
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
	rest.QPS, rest.Burst = -1, 0 // client-go: a negative QPS sets no rate limiter
	if cfg.QPS > 0 {
		rest.QPS, rest.Burst = cfg.QPS, cfg.Burst
	}
	rest.ContentType = ProtobufContentType
	rest.AcceptContentTypes = ProtobufContentType + ",application/json"
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
