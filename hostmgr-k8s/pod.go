package k8s

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// podSpecConfig is what building a pod and its objects needs beyond the
// launch.
type podSpecConfig struct {
	Namespace     string
	SchedulerName string
	// Image runs the command of a task without an image of its own.
	Image          string
	GPUResource    corev1.ResourceName
	VolumeBasePath string
	StorageClass   string
}

// Names of the pod's volumes: user volumes by their index, so no user
// name can clash with the gang file's.
const (
	gangVolume     = "peloton-gang"
	gangConfigKey  = "gang.json"
	volumeNameBase = "volume-"
)

var pullPolicies = map[model.PullPolicy]corev1.PullPolicy{
	model.PullIfNotPresent: corev1.PullIfNotPresent,
	model.PullAlways:       corev1.PullAlways,
	model.PullNever:        corev1.PullNever,
}

// launchPod builds the pod of a launch on a node, or says why it cannot.
// The claims of its volumes (claimName) and its gang's config map (named
// like the pod) are made apart, by volumeObjects and gangConfigMap.
func launchPod(cfg podSpecConfig, node string, l hostmgr.Launch) (*corev1.Pod, error) {
	task := l.Task
	if task == nil {
		return nil, fmt.Errorf("no task spec")
	}
	c, err := taskContainer(cfg, l)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{LabelManagedBy: ManagedByValue}
	for k, v := range l.Labels {
		if len(validation.IsQualifiedName(k)) != 0 {
			continue
		}
		labels[k] = labelValue(v)
	}
	name := podName(l.Run)
	var volumes []corev1.Volume
	for i, vm := range l.Volumes {
		if !strings.HasPrefix(vm.Volume.Path, "/") {
			return nil, fmt.Errorf("volume %q: mount path %q must be absolute", vm.Volume.Name, vm.Volume.Path)
		}
		if vm.ID == "" || vm.Volume.SizeMB <= 0 {
			return nil, fmt.Errorf("volume %q: id %q and size %d MB must be given", vm.Volume.Name, vm.ID, vm.Volume.SizeMB)
		}
		vol := fmt.Sprint(volumeNameBase, i)
		volumes = append(volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(vm.ID)}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: path.Clean(vm.Volume.Path)})
	}
	annotations := map[string]string{AnnotationRunID: string(l.Run), AnnotationHostID: string(l.Host)}
	if l.Gang != nil {
		annotations[AnnotationGangConfig] = name
		volumes = append(volumes, corev1.Volume{Name: gangVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
		// A file mount (subPath) leaves the rest of the image's
		// directory in place.
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: gangVolume, MountPath: hostmgr.GangFilePath,
			SubPath: gangConfigKey, ReadOnly: true})
	}
	grace := int64(math.Ceil(task.KillGrace.Seconds()))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   cfg.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			NodeName:      node,
			SchedulerName: cfg.SchedulerName,
			// One pod is one run: the shard restarts what fails, a
			// failed health check included, as on every host manager.
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{c},
			Volumes:                       volumes,
		},
	}, nil
}

// taskContainer builds the task's container: its image (or the plugin's
// with the task's command), command, environment, ports, probes and
// resources.
func taskContainer(cfg podSpecConfig, l hostmgr.Launch) (corev1.Container, error) {
	task := l.Task
	c := corev1.Container{Name: TaskContainer, Image: cfg.Image}
	if task.Container != nil && task.Container.Image != "" {
		c.Image = task.Container.Image
		if task.Container.PullPolicy != 0 {
			pp, ok := pullPolicies[task.Container.PullPolicy]
			if !ok {
				return c, fmt.Errorf("image pull policy %d is not known", task.Container.PullPolicy)
			}
			c.ImagePullPolicy = pp
		}
	} else if task.Command == "" {
		return c, fmt.Errorf("task has neither an image nor a command")
	}
	if task.Command != "" {
		c.Command = []string{task.Command}
	}
	c.Args = slices.Clone(task.Args)
	env, err := containerEnv(l)
	if err != nil {
		return c, err
	}
	c.Env = env
	if len(task.Ports) != len(l.Ports) {
		return c, fmt.Errorf("task has %d ports but %d host ports were assigned", len(task.Ports), len(l.Ports))
	}
	for _, p := range l.Ports {
		if p.Port == 0 || p.Port > 65535 {
			return c, fmt.Errorf("port %q: host port %d is out of range", p.Name, p.Port)
		}
		cp := corev1.ContainerPort{HostPort: int32(p.Port), ContainerPort: int32(p.Port), Protocol: corev1.ProtocolTCP}
		if len(validation.IsValidPortName(p.Name)) == 0 {
			cp.Name = p.Name
		}
		c.Ports = append(c.Ports, cp)
	}
	if c.LivenessProbe, err = probeOf(task.HealthCheck, l.Ports); err != nil {
		return c, fmt.Errorf("health check: %w", err)
	}
	if c.ReadinessProbe, err = probeOf(task.Readiness, l.Ports); err != nil {
		return c, fmt.Errorf("readiness: %w", err)
	}
	requests, limits := podResources(task.Resources, cfg.GPUResource)
	c.Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return c, nil
}

// containerEnv is the task's environment, then the run's identity, then
// what the shard adds (its PELOTON_* and PORT_<NAME>), later ones winning;
// with a gang, PELOTON_GANG_FILE. Sorted by name.
func containerEnv(l hostmgr.Launch) ([]corev1.EnvVar, error) {
	all := maps.Clone(l.Task.Env)
	if all == nil {
		all = map[string]string{}
	}
	all["PELOTON_RUN_ID"] = string(l.Run)
	all["PELOTON_HOST_ID"] = string(l.Host)
	maps.Copy(all, l.Env)
	if l.Gang != nil {
		all[hostmgr.EnvGangFile] = hostmgr.GangFilePath
	}
	env := make([]corev1.EnvVar, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("env name %q is not valid", k)
		}
		env = append(env, corev1.EnvVar{Name: k, Value: all[k]})
	}
	return env, nil
}

// probeOf converts a health check to a probe of the task's container.
// Kubernetes counts in whole seconds: durations are rounded up, and
// period and timeout are at least one second.
func probeOf(h *model.HealthCheck, ports []model.NamedPort) (*corev1.Probe, error) {
	if h == nil {
		return nil, nil
	}
	hc := h.WithDefaults()
	pr := &corev1.Probe{
		InitialDelaySeconds: wholeSeconds(hc.InitialDelay, 0),
		PeriodSeconds:       wholeSeconds(hc.Interval, 1),
		TimeoutSeconds:      wholeSeconds(hc.Timeout, 1),
		FailureThreshold:    int32(min(hc.FailureThreshold, math.MaxInt32)),
	}
	port := func() (intstr.IntOrString, error) {
		n := hc.ResolvePort(ports)
		if n == 0 || n > 65535 {
			return intstr.IntOrString{}, fmt.Errorf("port %q is neither a port of the task nor a port number", hc.Port)
		}
		return intstr.FromInt32(int32(n)), nil
	}
	switch hc.Kind {
	case model.ProbeCommand:
		if hc.Command == "" {
			return nil, fmt.Errorf("command probe has no command")
		}
		pr.Exec = &corev1.ExecAction{Command: append([]string{hc.Command}, hc.Args...)}
	case model.ProbeHTTP:
		p, err := port()
		if err != nil {
			return nil, err
		}
		pr.HTTPGet = &corev1.HTTPGetAction{Path: cmp.Or(hc.Path, "/"), Port: p, Scheme: corev1.URISchemeHTTP}
	case model.ProbeTCP:
		p, err := port()
		if err != nil {
			return nil, err
		}
		pr.TCPSocket = &corev1.TCPSocketAction{Port: p}
	default:
		return nil, fmt.Errorf("probe kind %d is not known", hc.Kind)
	}
	return pr, nil
}

// wholeSeconds rounds d up to whole seconds, at least least.
func wholeSeconds(d time.Duration, least int32) int32 {
	s := math.Ceil(d.Seconds())
	return int32(max(min(s, math.MaxInt32), float64(least)))
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
