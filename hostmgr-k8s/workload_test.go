package k8s

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func (w *world) launchAll(ls ...hostmgr.Launch) {
	w.t.Helper()
	if err := w.plugin.Launch(w.ctx, ls); err != nil {
		w.t.Fatal(err)
	}
}

// setReady plays the kubelet running the task's container, ready or not.
func (w *world) setReady(run model.RunID, ready bool) {
	w.t.Helper()
	pods := w.client.CoreV1().Pods("jobs")
	pod, err := pods.Get(w.ctx, podName(run), metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: TaskContainer, State: runningState, Ready: ready}}
	if _, err := pods.UpdateStatus(w.ctx, pod, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// waitHealth waits for a RUNNING status with these verdicts.
func (s *recordingSink) waitHealth(t *testing.T, run model.RunID, health, ready model.HealthState) {
	t.Helper()
	s.waitUntil(t, string(run)+" health "+health.String()+" ready "+ready.String(), func() bool {
		st, ok := s.lastState(run)
		return ok && st.State == model.TaskRunning && st.Health == health && st.Ready == ready
	})
}

// Readiness and liveness verdicts come back as RUNNING statuses whenever
// they change: from pod updates, and with time for a container that
// never turns ready.
func TestHealthReportedOnChange(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true))
	check := &model.HealthCheck{Kind: model.ProbeTCP, Port: "web", Interval: time.Second, FailureThreshold: 2}
	task := &model.TaskSpec{Command: "serve", Ports: []model.PortSpec{{Name: "web"}}, HealthCheck: check, Readiness: check}
	w.launchAll(hostmgr.Launch{Run: "s-0-1", Host: "kube/n1", Task: task, Ports: []model.NamedPort{{Name: "web", Port: 31000}}})
	w.setReady("s-0-1", false)
	w.sink.waitHealth(t, "s-0-1", model.HealthUnknown, model.HealthUnknown)
	w.setReady("s-0-1", true)
	w.sink.waitHealth(t, "s-0-1", model.HealthUnknown, model.HealthHealthy)
	// Past 1×2+1 s without a kill the health check has passed.
	w.clock.Advance(3 * time.Second)
	w.sink.waitHealth(t, "s-0-1", model.HealthHealthy, model.HealthHealthy)
	w.setReady("s-0-1", false)
	w.sink.waitHealth(t, "s-0-1", model.HealthHealthy, model.HealthUnhealthy)
	if n := w.sink.count("s-0-1", model.TaskRunning); n != 4 {
		t.Fatalf("%d RUNNING statuses, want one per change (4)", n)
	}
}

// A stateful instance's volume is made on its node at the first launch,
// found again by the next run there, refused on another node, and
// removed with its job.
func TestVolumesMadeReusedAndRemoved(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true), fakeNode("n2", true))
	vols := []hostmgr.VolumeMount{{ID: "db-0-data", Volume: model.Volume{Name: "data", SizeMB: 100, Path: "/data"}}}
	task := &model.TaskSpec{Command: "db"}
	w.launchAll(hostmgr.Launch{Run: "db-0-1", Host: "kube/n1", Task: task, Volumes: vols})
	pv, err := w.client.CoreV1().PersistentVolumes().Get(w.ctx, "jobs-db-0-data", metav1.GetOptions{})
	if err != nil || volumeNode(pv) != "n1" {
		t.Fatalf("volume: %v %v", pv, err)
	}
	pvc, err := w.client.CoreV1().PersistentVolumeClaims("jobs").Get(w.ctx, "db-0-data", metav1.GetOptions{})
	if err != nil || pvc.Spec.VolumeName != pv.Name {
		t.Fatalf("claim: %v %v", pvc, err)
	}
	// The run ends; the next one on the same node uses the same claim.
	w.setPodStatus("db-0-1", corev1.PodFailed, terminated(1, "Error", ""))
	w.sink.waitState(t, "db-0-1", model.TaskFailed)
	w.launchAll(hostmgr.Launch{Run: "db-0-2", Host: "kube/n1", Task: task, Volumes: vols})
	pod, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "db-0-2", metav1.GetOptions{})
	if err != nil || pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "db-0-data" {
		t.Fatalf("second run's pod: %v %v", pod, err)
	}
	// On another node the volume is not there: the launch fails.
	w.launchAll(hostmgr.Launch{Run: "db-0-3", Host: "kube/n2", Task: task, Volumes: vols})
	if st := w.sink.waitState(t, "db-0-3", model.TaskFailed); st.Reason != model.ReasonLaunchError {
		t.Fatalf("status %+v", st)
	}
	if _, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "db-0-3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a pod was made away from its volume: %v", err)
	}
	if err := w.plugin.RemoveVolumes(w.ctx, "kube/n1", []string{"db-0-data", "never-made"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.CoreV1().PersistentVolumes().Get(w.ctx, pv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("volume left: %v", err)
	}
	if _, err := w.client.CoreV1().PersistentVolumeClaims("jobs").Get(w.ctx, pvc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("claim left: %v", err)
	}
	if err := w.plugin.RemoveVolumes(w.ctx, "other/n1", []string{"db-0-data"}); err == nil {
		t.Fatal("removed volumes of another cluster's host")
	}
}

// A gang member's config map exists while its pod does.
func TestGangConfigMapFollowsItsPod(t *testing.T) {
	leftover, _ := gangConfigMap("jobs", "old-0-1", nil)
	w := newWorld(t, fakeNode("n1", true), leftover)
	waitGone := func(name string) {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		for {
			_, err := w.client.CoreV1().ConfigMaps("jobs").Get(w.ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("config map %s still there: %v", name, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitGone("old-0-1") // its pod is gone: swept at start
	members := []hostmgr.GangMember{{Instance: 0, Host: "kube/n1", Hostname: "n1"}, {Instance: 1, Host: "kube/n1", Hostname: "n1"}}
	w.launchAll(hostmgr.Launch{Run: "g-0-1", Host: "kube/n1", Task: &model.TaskSpec{Command: "x"}, Gang: members})
	cm, err := w.client.CoreV1().ConfigMaps("jobs").Get(w.ctx, "g-0-1", metav1.GetOptions{})
	if err != nil || cm.Data[gangConfigKey] == "" {
		t.Fatalf("config map: %v %v", cm, err)
	}
	w.setPodStatus("g-0-1", corev1.PodRunning, runningState)
	w.sink.waitState(t, "g-0-1", model.TaskRunning)
	if err := w.plugin.Kill(w.ctx, "g-0-1", "kube/n1", 0); err != nil {
		t.Fatal(err)
	}
	w.sink.waitState(t, "g-0-1", model.TaskKilled)
	waitGone("g-0-1")
}

// Two shards may share a cluster in different namespaces: the other's pods
// are anyone else's to this plugin, their requests count against the node
// and their runs are not reported.
func TestPodsOfAnotherNamespaceAreForeign(t *testing.T) {
	other := podFixture("x-0-1", "n1", corev1.PodRunning, runningState)
	other.Namespace = "other-shard"
	other.Spec.Containers[0].Resources.Requests = quantities("1", "1Gi")
	w := newWorld(t, fakeNode("n1", true), other)
	w.sink.waitUntil(t, "n1 less the other shard's pod", func() bool { return w.sink.hosts["kube/n1"].Capacity.MilliCPU == 3000 })
	if err := w.plugin.Reconcile(w.ctx, []hostmgr.RunRef{{Run: "x-0-1", Host: "kube/n1"}}); err != nil {
		t.Fatal(err)
	}
	if st := w.sink.waitState(t, "x-0-1", model.TaskLost); st.Reason != model.ReasonUnknownTask {
		t.Fatalf("status %+v", st)
	}
	if n := w.sink.count("x-0-1", model.TaskRunning); n != 0 {
		t.Fatalf("the other shard's run was reported RUNNING %d times", n)
	}
}
