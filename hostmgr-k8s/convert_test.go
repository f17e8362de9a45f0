package k8s

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/peloton-federated/peloton/shard/model"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func terminated(code int32, reason, msg string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg, FinishedAt: metav1.NewTime(t0)}}
}

func podIn(phase corev1.PodPhase, state corev1.ContainerState) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Phase: phase,
		ContainerStatuses: []corev1.ContainerStatus{{Name: TaskContainer, State: state}}}}
}

func TestPodRunStatus(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	waiting := func(reason, msg string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	evicted := podIn(corev1.PodFailed, corev1.ContainerState{})
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "node low on memory"
	outOfCPU := podIn(corev1.PodFailed, corev1.ContainerState{})
	outOfCPU.Status.Reason = "OutOfcpu"
	bare := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		report  bool
		state   model.TaskState
		reason  string
		code    int32
		message string
	}{
		{"pending without trouble", podIn(corev1.PodPending, waiting("ContainerCreating", "")), false, 0, "", 0, ""},
		{"running", podIn(corev1.PodRunning, running), true, model.TaskRunning, "", 0, ""},
		{"succeeded", podIn(corev1.PodSucceeded, terminated(0, "Completed", "")), true, model.TaskSucceeded, model.ReasonExitZero, 0, ""},
		{"failed with exit code", podIn(corev1.PodFailed, terminated(3, "Error", "boom")), true, model.TaskFailed, model.ReasonExitNonZero, 3, "Error: boom"},
		{"oom killed", podIn(corev1.PodFailed, terminated(137, "OOMKilled", "")), true, model.TaskFailed, ReasonOOMKilled, 137, "OOMKilled"},
		{"image pull back-off", podIn(corev1.PodPending, waiting("ImagePullBackOff", "no such image")), true, model.TaskFailed, ReasonImagePull, -1, "ImagePullBackOff: no such image"},
		{"bad image name", podIn(corev1.PodPending, waiting("InvalidImageName", "")), true, model.TaskFailed, ReasonImagePull, -1, "InvalidImageName"},
		{"evicted is lost", evicted, true, model.TaskLost, ReasonPodEvicted, 0, "Evicted: node low on memory"},
		{"rejected by kubelet is lost", outOfCPU, true, model.TaskLost, ReasonPodRejected, 0, "OutOfcpu"},
		{"failed without detail", bare, true, model.TaskFailed, model.ReasonLaunchError, -1, "pod failed"},
		{"unknown phase", podIn(corev1.PodUnknown, running), false, 0, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := podRunStatus(tc.pod, t0)
			if ok != tc.report {
				t.Fatalf("reported = %v, want %v (%+v)", ok, tc.report, st)
			}
			if !ok {
				return
			}
			if st.State != tc.state || st.Reason != tc.reason || st.ExitCode != tc.code || st.Message != tc.message {
				t.Fatalf("got %v/%q code %d msg %q, want %v/%q code %d msg %q",
					st.State, st.Reason, st.ExitCode, st.Message, tc.state, tc.reason, tc.code, tc.message)
			}
		})
	}
}

func quantities(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func TestNodeHost(t *testing.T) {
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	notReady := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
	tests := []struct {
		name   string
		spec   corev1.NodeSpec
		conds  []corev1.NodeCondition
		used   model.Resources
		state  model.HostState
		cpu    int64 // millicores
		memMB  int64
		labels map[string]string
	}{
		{"ready", corev1.NodeSpec{}, ready, model.Resources{}, model.HostUp, 8000, 16384, map[string]string{"zone": "a"}},
		{"others' requests are not ours to use", corev1.NodeSpec{}, ready, model.Resources{MilliCPU: 2500, MemMB: 1024}, model.HostUp, 5500, 15360, map[string]string{"zone": "a"}},
		{"overcommitted by others clamps at zero", corev1.NodeSpec{}, ready, model.Resources{MilliCPU: 9000}, model.HostUp, 0, 16384, map[string]string{"zone": "a"}},
		{"cordoned drains", corev1.NodeSpec{Unschedulable: true}, ready, model.Resources{}, model.HostDraining, 8000, 16384, map[string]string{"zone": "a"}},
		{"not ready is down", corev1.NodeSpec{Unschedulable: true}, notReady, model.Resources{}, model.HostDown, 8000, 16384, map[string]string{"zone": "a"}},
		{"no conditions yet is down", corev1.NodeSpec{}, nil, model.Resources{}, model.HostDown, 8000, 16384, map[string]string{"zone": "a"}},
		{"NoSchedule taint drains and shows", corev1.NodeSpec{Taints: []corev1.Taint{{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}},
			ready, model.Resources{}, model.HostDraining, 8000, 16384, map[string]string{"zone": "a", "taint.gpu": "yes:NoSchedule"}},
		{"PreferNoSchedule taint only shows", corev1.NodeSpec{Taints: []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}},
			ready, model.Resources{}, model.HostUp, 8000, 16384, map[string]string{"zone": "a", "taint.spot": ":PreferNoSchedule"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}, Spec: tc.spec,
				Status: corev1.NodeStatus{Conditions: tc.conds, Allocatable: quantities("8", "16Gi")}}
			h := nodeHost("east", n, tc.used, DefaultGPUResource, model.DefaultPorts)
			if h.ID != "east/n1" || h.Cluster != "east" || h.Kind != HostKind || h.Hostname != "n1" {
				t.Fatalf("identity: %+v", h)
			}
			if h.State != tc.state || h.Capacity.MilliCPU != tc.cpu || h.Capacity.MemMB != tc.memMB {
				t.Fatalf("got %v cpu %v mem %v, want %v cpu %v mem %v", h.State, h.Capacity.MilliCPU, h.Capacity.MemMB, tc.state, tc.cpu, tc.memMB)
			}
			if len(h.Labels) != len(tc.labels) {
				t.Fatalf("labels %v, want %v", h.Labels, tc.labels)
			}
			for k, v := range tc.labels {
				if h.Labels[k] != v {
					t.Fatalf("labels %v, want %v", h.Labels, tc.labels)
				}
			}
			if _, leaked := n.Labels["taint.gpu"]; leaked {
				t.Fatal("nodeHost changed the node's own labels")
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: quantities("500m", "256Mi")}},
			{Resources: corev1.ResourceRequirements{Requests: quantities("1", "256Mi")}},
		},
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("2", "64Mi")}}},
		Overhead:       corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")},
	}}
	got := podRequests(pod, DefaultGPUResource)
	// MilliCPU: the init container's 2 beats 1.5; memory: 512Mi beats 64Mi, plus 10Mi overhead.
	if got.MilliCPU != 2000 || got.MemMB != 522 {
		t.Fatalf("podRequests = %+v, want cpu 2 mem 522", got)
	}
}

// Pod names must be valid DNS labels, stay readable for ordinary run ids,
// and keep distinct runs apart.
func TestPodNameIsValidAndDistinct(t *testing.T) {
	if got := podName("3f2a-9c-1-0"); got != "3f2a-9c-1-0" {
		t.Fatalf("an already valid run id changed: %q", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019-_./ é")
	seen := map[string]model.RunID{}
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := rng.IntN(90); n >= 0; n-- {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		run := model.RunID(b.String())
		name := podName(run)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("podName(%q) = %q: %v", run, name, errs)
		}
		if other, dup := seen[name]; dup && other != run {
			t.Fatalf("runs %q and %q share pod name %q", other, run, name)
		}
		seen[name] = run
	}
}
