package k8s

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/peloton-federated/peloton/shard/model"
)

// How a pod's probes become a run's Health and Ready.
//
// Kubernetes reports readiness as the container's ready flag: true is
// HEALTHY. The flag is false both before the first probe and after failed
// ones, so false is UNKNOWN until the probe has had the time to fail
// failureThreshold times since the container started, UNHEALTHY after.
//
// Kubernetes reports no liveness verdict: the kubelet kills a container
// that fails its liveness probe failureThreshold times in a row. A
// container still running once that could have happened has passed its
// probe (HEALTHY); before, UNKNOWN. Pods run with restartPolicy Never, so
// a killed container ends its pod: a container that ended by a signal
// (exit code 137 or 143, not an OOM kill) which Peloton did not ask for,
// in a pod with a liveness probe, failed its health check. Its FAILED
// status carries Health UNHEALTHY and reason UNHEALTHY. The shard then
// starts a new run, as it does for a health check failing on any host
// manager; with restartPolicy Always the kubelet would restart the
// container inside the same run, unseen by the shard's run count, attempt
// limits and backoff.

// probeVerdictAfter is how long after the container started a probe has
// had the time to fail failureThreshold times.
func probeVerdictAfter(pr *corev1.Probe) time.Duration {
	period := max(pr.PeriodSeconds, 1)
	threshold := max(pr.FailureThreshold, 1)
	return time.Duration(pr.InitialDelaySeconds+period*threshold+max(pr.TimeoutSeconds, 1)) * time.Second
}

// taskContainerSpec finds the spec of the task's container.
func taskContainerSpec(p *corev1.Pod) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == TaskContainer {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// podHealth is what a running pod's probes say at now; HealthNone for a
// probe the pod does not have.
func podHealth(p *corev1.Pod, now time.Time) (health, ready model.HealthState) {
	c, cs := taskContainerSpec(p), taskContainerStatus(p)
	if c == nil {
		return model.HealthNone, model.HealthNone
	}
	var ranFor time.Duration
	running := cs != nil && cs.State.Running != nil
	if running {
		ranFor = now.Sub(cs.State.Running.StartedAt.Time)
	}
	if pr := c.LivenessProbe; pr != nil {
		health = model.HealthUnknown
		if running && ranFor >= probeVerdictAfter(pr) {
			health = model.HealthHealthy
		}
	}
	if pr := c.ReadinessProbe; pr != nil {
		ready = model.HealthUnknown
		switch {
		case running && cs.Ready:
			ready = model.HealthHealthy
		case running && ranFor >= probeVerdictAfter(pr):
			ready = model.HealthUnhealthy
		}
	}
	return health, ready
}

// killedByLiveness reports whether a container ended by a signal that, in
// a pod with a liveness probe, the kubelet sent for a failed probe.
func killedByLiveness(p *corev1.Pod, term *corev1.ContainerStateTerminated) bool {
	c := taskContainerSpec(p)
	if c == nil || c.LivenessProbe == nil || term == nil || term.Reason == "OOMKilled" {
		return false
	}
	return term.ExitCode == 128+9 || term.ExitCode == 128+15
}
