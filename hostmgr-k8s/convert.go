package k8s

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

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

// isOurs reports whether Peloton started the pod.
func isOurs(p *corev1.Pod) bool {
	return p.Labels[LabelManagedBy] == ManagedByValue && p.Annotations[AnnotationRunID] != ""
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

// nodeHost converts a node to a host. used is what pods not started by
// Peloton request on the node; it is not part of the host's capacity.
func nodeHost(cluster string, n *corev1.Node, used model.Resources, gpuName corev1.ResourceName) model.Host {
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
		ID:       hostID(cluster, n.Name),
		Hostname: n.Name,
		Cluster:  cluster,
		Kind:     HostKind,
		State:    state,
		Capacity: capacity,
		Labels:   labels,
	}
}

// runStatus is what a pod says about its run.
type runStatus struct {
	State    model.TaskState
	Reason   string
	Message  string
	ExitCode int32
	Time     time.Time
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

// podRunStatus converts a pod's phase and container state to a run status;
// ok is false while there is nothing to report (the pod is still starting).
func podRunStatus(p *corev1.Pod) (runStatus, bool) {
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
			if term.Reason == "OOMKilled" {
				st.Reason = ReasonOOMKilled
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
		return runStatus{State: model.TaskRunning, Time: podTime(p, cs)}, true
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

// podName turns a run id into a valid, stable pod name: lowercase letters,
// digits and '-'. When that changes the id, a hash of the id keeps names
// of different runs apart.
func podName(run model.RunID) string {
	var b strings.Builder
	for _, r := range strings.ToLower(string(run)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	const max = 63
	if name == string(run) && len(name) <= max {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(run))
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

// podSpecConfig is what building a pod needs beyond the launch.
type podSpecConfig struct {
	Namespace     string
	SchedulerName string
	Image         string
	GPUResource   corev1.ResourceName
}

// launchPod builds the pod of a launch on a node, or says why it cannot.
func launchPod(cfg podSpecConfig, node string, run model.RunID, host model.HostID, task *model.TaskSpec, runLabels map[string]string) (*corev1.Pod, error) {
	if task == nil {
		return nil, fmt.Errorf("no task spec")
	}
	if task.Command == "" {
		return nil, fmt.Errorf("task has no command")
	}
	labels := map[string]string{LabelManagedBy: ManagedByValue}
	for k, v := range runLabels {
		if len(validation.IsQualifiedName(k)) != 0 {
			continue
		}
		labels[k] = labelValue(v)
	}
	names := slices.Sorted(maps.Keys(task.Env))
	env := make([]corev1.EnvVar, 0, len(names)+2)
	for _, k := range names {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("task env name %q is not valid", k)
		}
		env = append(env, corev1.EnvVar{Name: k, Value: task.Env[k]})
	}
	env = append(env, corev1.EnvVar{Name: "PELOTON_RUN_ID", Value: string(run)}, corev1.EnvVar{Name: "PELOTON_HOST_ID", Value: string(host)})
	requests, limits := podResources(task.Resources, cfg.GPUResource)
	grace := int64(math.Ceil(task.KillGrace.Seconds()))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        podName(run),
			Namespace:   cfg.Namespace,
			Labels:      labels,
			Annotations: map[string]string{AnnotationRunID: string(run), AnnotationHostID: string(host)},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			SchedulerName:                 cfg.SchedulerName,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:      TaskContainer,
				Image:     cfg.Image,
				Command:   []string{task.Command},
				Args:      slices.Clone(task.Args),
				Env:       env,
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
			}},
		},
	}, nil
}

// podResources converts a task's resources to requests and limits. Memory
// and GPUs are limited to what is requested; CPU is not, so a task may use
// idle cycles.
func podResources(r model.Resources, gpuName corev1.ResourceName) (requests, limits corev1.ResourceList) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	if r.MilliCPU > 0 {
		requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI)
	}
	if r.MemMB > 0 {
		q := *resource.NewQuantity(r.MemMB*mib, resource.BinarySI)
		requests[corev1.ResourceMemory], limits[corev1.ResourceMemory] = q, q
	}
	if r.DiskMB > 0 {
		requests[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.DiskMB*mib, resource.BinarySI)
	}
	if r.GPU > 0 {
		q := *resource.NewQuantity(r.GPU, resource.DecimalSI)
		requests[gpuName], limits[gpuName] = q, q
	}
	return requests, limits
}
