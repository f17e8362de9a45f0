package k8s

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// How the plugin marks the pods it creates.
const (
	// LabelManagedBy marks pods started by Peloton, whose requests are not
	// subtracted from a node's capacity (the shard accounts for them).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "peloton"
	// AnnotationRunID holds the run id exactly; pod names and label values
	// are restricted forms of it.
	AnnotationRunID = "peloton.io/run-id"
	// AnnotationHostID holds the host the run was placed on.
	AnnotationHostID = "peloton.io/host-id"
	// AnnotationGangConfig names the config map holding a run's gang.
	AnnotationGangConfig = "peloton.io/gang-config"
	// AnnotationVolumeID holds the volume id a claim and its volume are for.
	AnnotationVolumeID = "peloton.io/volume-id"
	// LabelGang marks the config maps of gangs.
	LabelGang = "peloton.io/gang"
	// TaskContainer is the name of the pod's one container.
	TaskContainer = "task"
	// HostKind is model.Host.Kind for Kubernetes nodes.
	HostKind = "kubernetes"
)

// Reasons this plugin records on task statuses, beside model's.
const (
	ReasonOOMKilled     = "OOM_KILLED"
	ReasonImagePull     = "IMAGE_PULL_FAILED"
	ReasonPodRejected   = "POD_REJECTED"
	ReasonPodEvicted    = "POD_EVICTED"
	ReasonPodDeleted    = "POD_DELETED"
	ReasonNodeNotReady  = "NODE_NOT_READY"
	ReasonNodeDeleted   = "NODE_DELETED"
	ReasonCreateRefused = "POD_CREATE_REFUSED"
)

const mib = 1024 * 1024

// hostID is the host id of a node in a cluster.
func hostID(cluster, node string) model.HostID { return model.HostID(cluster + "/" + node) }

// nodeOf splits a host id into cluster and node name.
func nodeOf(h model.HostID) (cluster, node string, ok bool) {
	cluster, node, ok = strings.Cut(string(h), "/")
	return cluster, node, ok && cluster != "" && node != ""
}

// resourcesOf converts a Kubernetes resource list to model.Resources, the
// plugin's edge for amounts: cpu by MilliValue (millicores, rounded up as
// Kubernetes rounds), memory and ephemeral storage in whole MiB (rounded
// up: a request of 100M holds 96 MiB of the node), GPUs as a count.
func resourcesOf(l corev1.ResourceList, gpuName corev1.ResourceName) model.Resources {
	var r model.Resources
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.MilliCPU = q.MilliValue()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.MemMB = ceilMiB(q.Value())
	}
	if q, ok := l[corev1.ResourceEphemeralStorage]; ok {
		r.DiskMB = ceilMiB(q.Value())
	}
	if q, ok := l[gpuName]; ok {
		r.GPU = q.Value()
	}
	return r
}

// ceilMiB converts bytes to MiB, rounding up.
func ceilMiB(bytes int64) int64 {
	if bytes <= 0 {
		return bytes / mib
	}
	return (bytes-1)/mib + 1
}

// podRequests is what a pod asks of its node: its containers' requests,
// or its largest init container's when that is more, plus its overhead.
func podRequests(p *corev1.Pod, gpuName corev1.ResourceName) model.Resources {
	var sum, initMax model.Resources
	for i := range p.Spec.Containers {
		sum = sum.Add(resourcesOf(p.Spec.Containers[i].Resources.Requests, gpuName))
	}
	for i := range p.Spec.InitContainers {
		initMax = initMax.Max(resourcesOf(p.Spec.InitContainers[i].Resources.Requests, gpuName))
	}
	sum = sum.Max(initMax)
	return sum.Add(resourcesOf(p.Spec.Overhead, gpuName))
}

// podEnded reports whether a pod's containers are done for good.
func podEnded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// isOurs reports whether this plugin started the pod: Peloton did, in the
// plugin's namespace. Pods of other Peloton shards sharing the cluster
// count as anyone else's.
func isOurs(p *corev1.Pod, namespace string) bool {
	return p.Namespace == namespace && p.Labels[LabelManagedBy] == ManagedByValue && p.Annotations[AnnotationRunID] != ""
}

// nodeReady reports the node's Ready condition.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeHost converts a node to a host that runs images and offers ports.
// used is what pods not started by Peloton request on the node; it is not
// part of the host's capacity.
func nodeHost(cluster string, n *corev1.Node, used model.Resources, gpuName corev1.ResourceName, ports []model.PortRange) model.Host {
	alloc := resourcesOf(n.Status.Allocatable, gpuName)
	// Allocatable memory and storage count whole MiB only, rounded down, so
	// a node is never thought bigger than it is.
	if q, ok := n.Status.Allocatable[corev1.ResourceMemory]; ok {
		alloc.MemMB = q.Value() / mib
	}
	if q, ok := n.Status.Allocatable[corev1.ResourceEphemeralStorage]; ok {
		alloc.DiskMB = q.Value() / mib
	}
	capacity := alloc.Sub(used).Max(model.Resources{})
	labels := maps.Clone(n.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	state := model.HostUp
	for _, t := range n.Spec.Taints {
		labels["taint."+t.Key] = t.Value + ":" + string(t.Effect)
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && state == model.HostUp {
			state = model.HostDraining
		}
	}
	if n.Spec.Unschedulable {
		state = model.HostDraining
	}
	if !nodeReady(n) {
		state = model.HostDown
	}
	return model.Host{
		ID:         hostID(cluster, n.Name),
		Hostname:   n.Name,
		Cluster:    cluster,
		Kind:       HostKind,
		State:      state,
		Capacity:   capacity,
		Labels:     labels,
		Ports:      slices.Clone(ports),
		RunsImages: true,
	}
}

// runStatus is what a pod says about its run.
type runStatus struct {
	State    model.TaskState
	Reason   string
	Message  string
	ExitCode int32
	Time     time.Time
	// Health and Ready are what its probes say (see health.go).
	Health, Ready model.HealthState
}

// changedFrom reports whether the status says something new after last.
func (st runStatus) changedFrom(last hostmgr.TaskStatus) bool {
	return st.State != last.State || st.Health != last.Health || st.Ready != last.Ready
}

// imagePullReasons are waiting reasons that mean the image will not come.
var imagePullReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// evictionReasons are pod-level failure reasons that are not the task's
// fault: the run is lost and goes elsewhere.
var evictionReasons = map[string]string{
	"Evicted":                  ReasonPodEvicted,
	"Preempting":               ReasonPodEvicted,
	"Terminated":               ReasonPodEvicted,
	"NodeLost":                 model.ReasonHostLost,
	"NodeAffinity":             ReasonPodRejected,
	"UnexpectedAdmissionError": ReasonPodRejected,
}

// taskContainerStatus finds the status of the task's container.
func taskContainerStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == TaskContainer {
			return &p.Status.ContainerStatuses[i]
		}
	}
	if len(p.Status.ContainerStatuses) > 0 {
		return &p.Status.ContainerStatuses[0]
	}
	return nil
}

// podRunStatus converts a pod's phase, container state and probes at now
// to a run status; ok is false while there is nothing to report (the pod
// is still starting).
func podRunStatus(p *corev1.Pod, now time.Time) (runStatus, bool) {
	cs := taskContainerStatus(p)
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		st := runStatus{State: model.TaskSucceeded, Reason: model.ReasonExitZero, Time: podTime(p, cs)}
		if cs != nil && cs.State.Terminated != nil {
			st.Message = cs.State.Terminated.Message
		}
		return st, true
	case corev1.PodFailed:
		if cs != nil && cs.State.Terminated != nil {
			term := cs.State.Terminated
			st := runStatus{State: model.TaskFailed, Reason: model.ReasonExitNonZero, ExitCode: term.ExitCode, Time: podTime(p, cs)}
			st.Message = joinNonEmpty(": ", term.Reason, term.Message)
			switch {
			case term.Reason == "OOMKilled":
				st.Reason = ReasonOOMKilled
			case killedByLiveness(p, term):
				st.Reason, st.Health = model.ReasonUnhealthy, model.HealthUnhealthy
				st.Message = joinNonEmpty(": ", "killed after failing its health check", st.Message)
			}
			return st, true
		}
		if reason, ok := evictionReasons[p.Status.Reason]; ok {
			return runStatus{State: model.TaskLost, Reason: reason, Message: joinNonEmpty(": ", p.Status.Reason, p.Status.Message), Time: podTime(p, cs)}, true
		}
		if strings.HasPrefix(p.Status.Reason, "OutOf") {
			return runStatus{State: model.TaskLost, Reason: ReasonPodRejected, Message: joinNonEmpty(": ", p.Status.Reason, p.Status.Message), Time: podTime(p, cs)}, true
		}
		return runStatus{State: model.TaskFailed, Reason: model.ReasonLaunchError, ExitCode: -1,
			Message: cmp.Or(joinNonEmpty(": ", p.Status.Reason, p.Status.Message), "pod failed"), Time: podTime(p, cs)}, true
	case corev1.PodRunning:
		if cs != nil && cs.State.Running == nil && cs.State.Terminated == nil {
			if w := cs.State.Waiting; w != nil && imagePullReasons[w.Reason] {
				return pullFailure(p, w), true
			}
		}
		st := runStatus{State: model.TaskRunning, Time: podTime(p, cs)}
		st.Health, st.Ready = podHealth(p, now)
		return st, true
	default: // Pending or Unknown
		if cs != nil && cs.State.Waiting != nil && imagePullReasons[cs.State.Waiting.Reason] {
			return pullFailure(p, cs.State.Waiting), true
		}
		return runStatus{}, false
	}
}

func pullFailure(p *corev1.Pod, w *corev1.ContainerStateWaiting) runStatus {
	return runStatus{State: model.TaskFailed, Reason: ReasonImagePull, ExitCode: -1,
		Message: joinNonEmpty(": ", w.Reason, w.Message), Time: podTime(p, nil)}
}

// podTime is when the pod's current state began, as well as it is known.
func podTime(p *corev1.Pod, cs *corev1.ContainerStatus) time.Time {
	if cs != nil {
		switch {
		case cs.State.Terminated != nil && !cs.State.Terminated.FinishedAt.IsZero():
			return cs.State.Terminated.FinishedAt.Time
		case cs.State.Running != nil && !cs.State.Running.StartedAt.IsZero():
			return cs.State.Running.StartedAt.Time
		}
	}
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Time{}
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, sep)
}

// podName turns a run id into a valid, stable pod name.
func podName(run model.RunID) string { return dnsLabel(string(run)) }

// dnsLabel turns an id into a valid, stable object name: lowercase
// letters, digits and '-', at most 63 characters. When that changes the
// id, a hash of the id keeps names of different ids apart.
func dnsLabel(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	const max = 63
	if name == id && len(name) <= max {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	if len(name) > max-len(suffix) {
		name = strings.TrimRight(name[:max-len(suffix)], "-")
	}
	if name == "" {
		name = "run"
	}
	return name + suffix
}

// labelValue restricts a value to what Kubernetes accepts in a label.
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	var b strings.Builder
	for _, r := range v {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > validation.LabelValueMaxLength {
		s = s[:validation.LabelValueMaxLength]
	}
	return strings.Trim(s, "-_.")
}
