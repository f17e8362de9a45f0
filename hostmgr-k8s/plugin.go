package k8s

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Pod indexes kept by the pod informer.
const (
	indexByNode = "node"
	indexByRun  = "run"
)

// Plugin runs tasks as pods on one Kubernetes cluster and implements
// hostmgr.Plugin.
type Plugin struct {
	cfg     Config
	podCfg  podSpecConfig
	log     *slog.Logger
	clock   clock.Clock
	running atomic.Bool
	notify  chan struct{}
	synced  chan struct{} // closed once the informers hold the cluster's state

	// Set by Run before synced is closed.
	nodes listersv1.NodeLister
	pods  cache.Indexer

	mu            sync.Mutex
	runs          map[model.RunID]*trackedRun
	dirtyNodes    map[string]bool
	removedNodes  []string
	queued        []hostmgr.TaskStatus
	notReadySince map[string]time.Time
	lostNodes     map[string]bool // nodes whose runs were already given up
	doomedGangs   []string        // gang config maps to delete
	// undecided are running runs whose probes have no verdict yet.
	undecided map[model.RunID]bool
}

// trackedRun is what the plugin remembers of a run it knows a pod of.
type trackedRun struct {
	host    model.HostID
	killing bool
	// last is the last status reported; State 0 before any.
	last    hostmgr.TaskStatus
	endedAt time.Time // when a terminal status was first reported
}

var _ hostmgr.Plugin = (*Plugin)(nil)

// New checks cfg and prepares a client; it does not contact the cluster.
func New(cfg Config) (*Plugin, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Plugin{
		cfg: cfg,
		podCfg: podSpecConfig{Namespace: cfg.Namespace, SchedulerName: cfg.SchedulerName,
			Image: cfg.Image, GPUResource: corev1.ResourceName(cfg.GPUResource),
			VolumeBasePath: cfg.VolumeBasePath, StorageClass: cfg.StorageClass},
		log:           cfg.Logger.With("cluster", cfg.Cluster),
		clock:         cfg.Clock,
		notify:        make(chan struct{}, 1),
		synced:        make(chan struct{}),
		runs:          map[model.RunID]*trackedRun{},
		dirtyNodes:    map[string]bool{},
		notReadySince: map[string]time.Time{},
		lostNodes:     map[string]bool{},
		undecided:     map[model.RunID]bool{},
	}, nil
}

// Cluster implements hostmgr.Plugin.
func (p *Plugin) Cluster() string { return p.cfg.Cluster }

// Run follows the cluster's nodes and pods and reports hosts and statuses
// until ctx ends. Cancelling ctx leaves pods alone: a later instance finds
// them through Reconcile.
func (p *Plugin) Run(ctx context.Context, sink hostmgr.Sink) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer p.running.Store(false)
	factory := informers.NewSharedInformerFactoryWithOptions(p.cfg.Client, p.cfg.Resync,
		informers.WithTransform(dropManagedFields))
	nodeInformer := factory.Core().V1().Nodes()
	podInformer := factory.Core().V1().Pods().Informer()
	if err := podInformer.AddIndexers(cache.Indexers{indexByNode: podNodeIndex, indexByRun: p.podRunIndex}); err != nil {
		return err
	}
	if _, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.nodeChanged(obj) },
		UpdateFunc: func(_, obj any) { p.nodeChanged(obj) },
		DeleteFunc: func(obj any) { p.nodeDeleted(obj) },
	}); err != nil {
		return err
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.podChanged(nil, obj) },
		UpdateFunc: func(old, obj any) { p.podChanged(old, obj) },
		DeleteFunc: func(obj any) { p.podDeleted(obj) },
	}); err != nil {
		return err
	}
	p.nodes = nodeInformer.Lister()
	p.pods = podInformer.GetIndexer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), nodeInformer.Informer().HasSynced, podInformer.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return ErrNotSynced
	}
	p.sweepGangs(ctx)
	close(p.synced)
	p.log.Info("kubernetes cluster synced", "nodes", len(p.nodeNames()), "namespace", p.cfg.Namespace)
	check := p.clock.After(p.cfg.CheckInterval)
	for {
		p.flush(sink)
		p.deleteGangs(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-p.notify:
		case <-check:
			now := p.clock.Now()
			p.giveUpNotReadyNodes(ctx, now)
			p.recheckHealth(now)
			p.deleteFinishedPods(ctx, now)
			check = p.clock.After(p.cfg.CheckInterval)
		}
	}
}

// waitSynced waits until Run has the cluster's state.
func (p *Plugin) waitSynced(ctx context.Context) error {
	select {
	case <-p.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dropManagedFields keeps the informer caches small.
func dropManagedFields(obj any) (any, error) {
	if acc, ok := obj.(metav1.Object); ok {
		acc.SetManagedFields(nil)
	}
	return obj, nil
}

func podNodeIndex(obj any) ([]string, error) {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		return []string{pod.Spec.NodeName}, nil
	}
	return nil, nil
}

func (p *Plugin) podRunIndex(obj any) ([]string, error) {
	if pod, ok := obj.(*corev1.Pod); ok && isOurs(pod, p.cfg.Namespace) {
		return []string{pod.Annotations[AnnotationRunID]}, nil
	}
	return nil, nil
}

// nodeNames lists the nodes the informer knows.
func (p *Plugin) nodeNames() []string {
	nodes, _ := p.nodes.List(labels.Everything())
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// wake tells Run there is something to flush.
func (p *Plugin) wake() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// flush reports changed hosts, removed hosts and queued statuses, in that
// order, each in one batch.
func (p *Plugin) flush(sink hostmgr.Sink) {
	p.mu.Lock()
	dirty := p.dirtyNodes
	p.dirtyNodes = map[string]bool{}
	removed := p.removedNodes
	p.removedNodes = nil
	statuses := p.queued
	p.queued = nil
	p.mu.Unlock()
	if len(dirty) > 0 {
		hosts := make([]model.Host, 0, len(dirty))
		for name := range dirty {
			n, err := p.nodes.Get(name)
			if err != nil {
				continue // deleted since; reported through removed
			}
			hosts = append(hosts, nodeHost(p.cfg.Cluster, n, p.foreignRequests(name), p.podCfg.GPUResource, p.cfg.Ports))
		}
		if len(hosts) > 0 {
			sink.HostsUpdated(hosts)
		}
	}
	if len(removed) > 0 {
		ids := make([]model.HostID, len(removed))
		for i, n := range removed {
			ids[i] = hostID(p.cfg.Cluster, n)
		}
		sink.HostsRemoved(ids)
	}
	if len(statuses) > 0 {
		sink.TaskStatuses(statuses)
	}
}

// foreignRequests sums what pods not started by Peloton and not ended
// request on a node.
func (p *Plugin) foreignRequests(node string) model.Resources {
	objs, _ := p.pods.ByIndex(indexByNode, node)
	var used model.Resources
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok || isOurs(pod, p.cfg.Namespace) || podEnded(pod) {
			continue
		}
		used = used.Add(podRequests(pod, p.podCfg.GPUResource))
	}
	return used
}
