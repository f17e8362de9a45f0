package k8s

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

const waitTimeout = 20 * time.Second

// recordingSink keeps what a plugin reports and lets tests wait for it.
type recordingSink struct {
	mu       sync.Mutex
	hosts    map[model.HostID]model.Host
	removed  []model.HostID
	statuses []hostmgr.TaskStatus
	changed  chan struct{}
}

func newRecordingSink() *recordingSink {
	return &recordingSink{hosts: map[model.HostID]model.Host{}, changed: make(chan struct{})}
}

func (s *recordingSink) HostsUpdated(hosts []model.Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hosts {
		s.hosts[h.ID] = h
	}
	s.signalLocked()
}

func (s *recordingSink) HostsRemoved(ids []model.HostID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.hosts, id)
	}
	s.removed = append(s.removed, ids...)
	s.signalLocked()
}

func (s *recordingSink) TaskStatuses(sts []hostmgr.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, sts...)
	s.signalLocked()
}

func (s *recordingSink) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitUntil waits until cond holds; cond runs with the sink locked.
func (s *recordingSink) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("timed out waiting for %s; hosts %v statuses %+v", what, s.hosts, s.statuses)
		}
	}
}

// lastState is the last state reported for a run; 0 if none. Sink locked.
func (s *recordingSink) lastState(run model.RunID) (hostmgr.TaskStatus, bool) {
	for i := len(s.statuses) - 1; i >= 0; i-- {
		if s.statuses[i].Run == run {
			return s.statuses[i], true
		}
	}
	return hostmgr.TaskStatus{}, false
}

func (s *recordingSink) waitState(t *testing.T, run model.RunID, want model.TaskState) hostmgr.TaskStatus {
	t.Helper()
	var got hostmgr.TaskStatus
	s.waitUntil(t, string(run)+" "+want.String(), func() bool {
		st, ok := s.lastState(run)
		got = st
		return ok && st.State == want
	})
	return got
}

func (s *recordingSink) count(run model.RunID, state model.TaskState) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.statuses {
		if st.Run == run && st.State == state {
			n++
		}
	}
	return n
}

func fakeNode(name string, ready bool) *corev1.Node {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}},
		Status: corev1.NodeStatus{
			Allocatable: quantities("4", "8Gi"),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		},
	}
}

// world is a plugin running against a fake API server.
type world struct {
	t      *testing.T
	client *fake.Clientset
	clock  *clock.Fake
	plugin *Plugin
	sink   *recordingSink
	ctx    context.Context
}

func newWorld(t *testing.T, objects ...runtime.Object) *world {
	t.Helper()
	client := fake.NewSimpleClientset(objects...)
	clk := clock.NewFake(t0)
	p, err := New(Config{Cluster: "kube", Client: client, Namespace: "jobs", Clock: clk, NodeGrace: 30 * time.Second, FinishedPodTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{t: t, client: client, clock: clk, plugin: p, sink: newRecordingSink(), ctx: ctx}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, w.sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if err := p.waitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) launch(run model.RunID, node string) {
	w.t.Helper()
	task := &model.TaskSpec{Command: "sleep", Args: []string{"60"}, Resources: model.Resources{MilliCPU: 1000, MemMB: 512}}
	err := w.plugin.Launch(w.ctx, []hostmgr.Launch{{Run: run, Host: hostID("kube", node), Task: task,
		Labels: map[string]string{"peloton.job": "j", "peloton.instance": "0", "peloton.run": "1"}}})
	if err != nil {
		w.t.Fatal(err)
	}
}

// setPodStatus plays the kubelet.
func (w *world) setPodStatus(run model.RunID, phase corev1.PodPhase, state corev1.ContainerState) {
	w.t.Helper()
	pods := w.client.CoreV1().Pods("jobs")
	pod, err := pods.Get(w.ctx, podName(run), metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: TaskContainer, State: state}}
	if _, err := pods.UpdateStatus(w.ctx, pod, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

var runningState = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}

func TestHostsSubtractOthersRequests(t *testing.T) {
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: quantities("1500m", "1Gi")}}}}}
	w := newWorld(t, fakeNode("n1", true), fakeNode("n2", false), other)
	w.sink.waitUntil(t, "two hosts", func() bool { return len(w.sink.hosts) == 2 })
	w.sink.mu.Lock()
	n1, n2 := w.sink.hosts["kube/n1"], w.sink.hosts["kube/n2"]
	w.sink.mu.Unlock()
	if n1.State != model.HostUp || n1.Capacity.MilliCPU != 2500 || n1.Capacity.MemMB != 7*1024 || n1.Kind != "kubernetes" || n1.Labels["zone"] != "a" {
		t.Fatalf("n1 = %+v", n1)
	}
	if n2.State != model.HostDown || n2.Capacity.MilliCPU != 4000 {
		t.Fatalf("n2 = %+v", n2)
	}
	// Our own pods do not shrink the host: the shard accounts for them.
	w.launch("j-0-1", "n1")
	// Another pod ending gives its resources back.
	other.Status.Phase = corev1.PodSucceeded
	if _, err := w.client.CoreV1().Pods("default").UpdateStatus(w.ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.sink.waitUntil(t, "n1 back to full size", func() bool { return w.sink.hosts["kube/n1"].Capacity.MilliCPU == 4000 })
}

func TestLaunchRunsAndEnds(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true))
	w.launch("j-0-1", "n1")
	pod, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "j-0-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "n1" || pod.Spec.SchedulerName != DefaultSchedulerName || pod.Labels["peloton.run"] != "1" {
		t.Fatalf("pod: %+v", pod.Spec)
	}
	w.setPodStatus("j-0-1", corev1.PodRunning, runningState)
	w.sink.waitState(t, "j-0-1", model.TaskRunning)
	w.setPodStatus("j-0-1", corev1.PodFailed, terminated(3, "Error", ""))
	st := w.sink.waitState(t, "j-0-1", model.TaskFailed)
	if st.ExitCode != 3 || st.Host != "kube/n1" {
		t.Fatalf("failed status: %+v", st)
	}
	// Launching the same run again does not create a second pod or fail.
	w.launch("j-0-1", "n1")
	if n := w.sink.count("j-0-1", model.TaskRunning); n != 1 {
		t.Fatalf("RUNNING reported %d times", n)
	}
}

func TestLaunchOnUnknownNodeIsLost(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true))
	w.launch("j-0-1", "gone")
	st := w.sink.waitState(t, "j-0-1", model.TaskLost)
	if st.Reason != model.ReasonHostLost {
		t.Fatalf("status: %+v", st)
	}
	err := w.plugin.Launch(w.ctx, []hostmgr.Launch{{Run: "j-1-1", Host: "kube/n1", Task: &model.TaskSpec{}}})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.sink.waitState(t, "j-1-1", model.TaskFailed); st.Reason != model.ReasonLaunchError {
		t.Fatalf("status: %+v", st)
	}
}

func TestDeletedPodIsLostAndKilledPodIsKilled(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true))
	w.launch("j-0-1", "n1")
	w.launch("j-1-1", "n1")
	w.setPodStatus("j-0-1", corev1.PodRunning, runningState)
	w.setPodStatus("j-1-1", corev1.PodRunning, runningState)
	w.sink.waitState(t, "j-1-1", model.TaskRunning)
	if err := w.client.CoreV1().Pods("jobs").Delete(w.ctx, "j-0-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := w.sink.waitState(t, "j-0-1", model.TaskLost); st.Reason != ReasonPodDeleted {
		t.Fatalf("status: %+v", st)
	}
	if err := w.plugin.Kill(w.ctx, "j-1-1", "kube/n1", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	w.sink.waitState(t, "j-1-1", model.TaskKilled)
	if _, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "j-1-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("killed pod still there: %v", err)
	}
	// Killing an unknown run reports it LOST, without error.
	if err := w.plugin.Kill(w.ctx, "nope-0-1", "kube/n1", time.Second); err != nil {
		t.Fatal(err)
	}
	w.sink.waitState(t, "nope-0-1", model.TaskLost)
}

func TestNodeNotReadyPastGraceLosesRuns(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true))
	w.launch("j-0-1", "n1")
	w.setPodStatus("j-0-1", corev1.PodRunning, runningState)
	w.sink.waitState(t, "j-0-1", model.TaskRunning)
	if _, err := w.client.CoreV1().Nodes().UpdateStatus(w.ctx, fakeNode("n1", false), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.sink.waitUntil(t, "n1 down", func() bool { return w.sink.hosts["kube/n1"].State == model.HostDown })
	// Within the grace period nothing is lost.
	w.clock.Advance(29 * time.Second)
	if n := w.sink.count("j-0-1", model.TaskLost); n != 0 {
		t.Fatalf("lost within grace")
	}
	w.clock.Advance(2 * time.Second)
	if st := w.sink.waitState(t, "j-0-1", model.TaskLost); st.Reason != ReasonNodeNotReady {
		t.Fatalf("status: %+v", st)
	}
	// Its pod is deleted, so it cannot come back beside its replacement.
	deadline := time.Now().Add(waitTimeout)
	for {
		_, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "j-0-1", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pod of the lost run was not deleted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := w.sink.count("j-0-1", model.TaskLost); n != 1 {
		t.Fatalf("LOST reported %d times", n)
	}
}

func TestNodeDeletedRemovesHostAndLosesRuns(t *testing.T) {
	w := newWorld(t, fakeNode("n1", true), fakeNode("n2", true))
	w.launch("j-0-1", "n1")
	w.sink.waitUntil(t, "two hosts", func() bool { return len(w.sink.hosts) == 2 })
	if err := w.client.CoreV1().Nodes().Delete(w.ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.sink.waitUntil(t, "n1 removed", func() bool { return len(w.sink.removed) == 1 && w.sink.removed[0] == "kube/n1" })
	if st := w.sink.waitState(t, "j-0-1", model.TaskLost); st.Reason != ReasonNodeDeleted {
		t.Fatalf("status: %+v", st)
	}
}

func TestReconcileAfterRestart(t *testing.T) {
	running := podFixture("old-0-1", "n1", corev1.PodRunning, runningState)
	done := podFixture("old-1-1", "n1", corev1.PodSucceeded, terminated(0, "Completed", ""))
	w := newWorld(t, fakeNode("n1", true), running, done)
	err := w.plugin.Reconcile(w.ctx, []hostmgr.RunRef{{Run: "old-0-1", Host: "kube/n1"}, {Run: "old-1-1", Host: "kube/n1"}, {Run: "old-2-1", Host: "kube/n1"}})
	if err != nil {
		t.Fatal(err)
	}
	w.sink.waitState(t, "old-0-1", model.TaskRunning)
	w.sink.waitState(t, "old-1-1", model.TaskSucceeded)
	if st := w.sink.waitState(t, "old-2-1", model.TaskLost); st.Reason != model.ReasonUnknownTask {
		t.Fatalf("status: %+v", st)
	}
	// A finished pod is deleted once its end has been reported for the TTL.
	w.clock.Advance(2 * time.Hour)
	deadline := time.Now().Add(waitTimeout)
	for {
		_, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "old-1-1", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("finished pod was not deleted after its TTL")
		}
		if w.clock.Waiters() > 0 {
			w.clock.Advance(time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := w.client.CoreV1().Pods("jobs").Get(w.ctx, "old-0-1", metav1.GetOptions{}); err != nil {
		t.Fatalf("running pod was deleted: %v", err)
	}
}

func podFixture(run model.RunID, node string, phase corev1.PodPhase, state corev1.ContainerState) *corev1.Pod {
	pod, _ := launchPod(podSpecConfig{Namespace: "jobs", SchedulerName: DefaultSchedulerName, Image: "x"}, node,
		hostmgr.Launch{Run: run, Host: hostID("kube", node), Task: &model.TaskSpec{Command: "true"}})
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: TaskContainer, State: state}}
	return pod
}
