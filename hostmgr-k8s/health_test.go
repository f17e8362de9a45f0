package k8s

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/peloton-federated/peloton/shard/model"
)

// probedPod is a pod whose container has the probes and status given.
func probedPod(liveness, readiness *corev1.Probe, phase corev1.PodPhase, state corev1.ContainerState, ready bool) *corev1.Pod {
	p := podIn(phase, state)
	p.Status.ContainerStatuses[0].Ready = ready
	p.Spec.Containers = []corev1.Container{{Name: TaskContainer, LivenessProbe: liveness, ReadinessProbe: readiness}}
	return p
}

func TestPodHealth(t *testing.T) {
	// A verdict is due 2 + 1×3 + 1 = 6 s after the container started.
	probe := &corev1.Probe{InitialDelaySeconds: 2, PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 3}
	started := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	creating := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	tests := []struct {
		name          string
		pod           *corev1.Pod
		at            time.Duration
		health, ready model.HealthState
	}{
		{"no probes, no verdicts", probedPod(nil, nil, corev1.PodRunning, started, true), time.Hour, model.HealthNone, model.HealthNone},
		{"starting: unknown", probedPod(probe, probe, corev1.PodPending, creating, false), time.Hour, model.HealthUnknown, model.HealthUnknown},
		{"ready at once is healthy", probedPod(nil, probe, corev1.PodRunning, started, true), 0, model.HealthNone, model.HealthHealthy},
		{"not ready within the probe's time is unknown", probedPod(nil, probe, corev1.PodRunning, started, false), 5 * time.Second, model.HealthNone, model.HealthUnknown},
		{"not ready past it is unhealthy", probedPod(nil, probe, corev1.PodRunning, started, false), 6 * time.Second, model.HealthNone, model.HealthUnhealthy},
		{"alive within the probe's time is unknown", probedPod(probe, nil, corev1.PodRunning, started, true), 5 * time.Second, model.HealthUnknown, model.HealthNone},
		{"alive past it is healthy", probedPod(probe, nil, corev1.PodRunning, started, true), 6 * time.Second, model.HealthHealthy, model.HealthNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			health, ready := podHealth(tc.pod, t0.Add(tc.at))
			if health != tc.health || ready != tc.ready {
				t.Fatalf("health %v ready %v, want %v %v", health, ready, tc.health, tc.ready)
			}
		})
	}
}

// A container that a liveness probe's kill ended fails its run UNHEALTHY;
// an OOM kill or an exit of its own does not.
func TestLivenessKillFailsUnhealthy(t *testing.T) {
	probe := &corev1.Probe{PeriodSeconds: 1}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		reason string
		health model.HealthState
	}{
		{"killed with a liveness probe", probedPod(probe, nil, corev1.PodFailed, terminated(137, "Error", ""), false), model.ReasonUnhealthy, model.HealthUnhealthy},
		{"terminated with a liveness probe", probedPod(probe, nil, corev1.PodFailed, terminated(143, "Error", ""), false), model.ReasonUnhealthy, model.HealthUnhealthy},
		{"killed without a liveness probe", probedPod(nil, probe, corev1.PodFailed, terminated(137, "Error", ""), false), model.ReasonExitNonZero, model.HealthNone},
		{"oom killed", probedPod(probe, nil, corev1.PodFailed, terminated(137, "OOMKilled", ""), false), ReasonOOMKilled, model.HealthNone},
		{"own exit", probedPod(probe, nil, corev1.PodFailed, terminated(1, "Error", ""), false), model.ReasonExitNonZero, model.HealthNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := podRunStatus(tc.pod, t0)
			if !ok || st.State != model.TaskFailed || st.Reason != tc.reason || st.Health != tc.health {
				t.Fatalf("status %+v, want FAILED %s health %v", st, tc.reason, tc.health)
			}
		})
	}
}
