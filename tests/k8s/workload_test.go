package k8stest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createFromYAML submits a job spec written as the CLI reads it.
func (s *shard) createFromYAML(spec string) string {
	s.T.Helper()
	path := filepath.Join(s.T.TempDir(), "job.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		s.T.Fatal(err)
	}
	return strings.TrimSpace(s.MustCLI("job", "create", "-f", path))
}

// podsByInstance maps the live pods of a job in namespace by instance.
func podsByInstance(t testing.TB, namespace, job string) map[int]corev1.Pod {
	t.Helper()
	out := map[int]corev1.Pod{}
	for _, p := range podsOf(t, namespace) {
		if p.Labels["peloton.job"] == job && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out[instanceOf(t, p)] = p
		}
	}
	return out
}

func envOf(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// A web service with an image, a named port and probes: its pods carry the
// image, the assigned host port, both probes on that port and its
// resources, as read back from the API server; the readiness kwok reports
// comes back as READY, and the health check as HEALTHY once it had the
// time to fail.
func TestWebServiceOnKubernetes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "web")
	addNodes(t, "4", "8Gi", nil, "web-1", "web-2", "web-3")
	s := startShard(t, t.TempDir(), "web", "ports=32000-32099")
	s.waitHosts(3, "UP")
	id := s.createFromYAML(`
name: web
type: service
instances: 3
maxPerHost: 1
task:
  container: {image: "nginx:1.27", pullPolicy: if-not-present}
  ports: [{name: http}]
  healthCheck:
    http: {port: http, path: /healthz}
    interval: 1s
    timeout: 500ms
    failureThreshold: 1
  readiness:
    tcp: {port: http}
    interval: 2s
  resources: {cpu: 0.5, memMb: 256}
`)
	start := time.Now()
	var tasks []testkit.Task
	waitFor(t, 60*time.Second, "3 instances running, healthy and ready", func() bool {
		tasks = s.TaskList(id)
		n := 0
		for _, tk := range tasks {
			if tk.State == "TASK_STATE_RUNNING" && tk.Health == "HEALTH_STATE_HEALTHY" && tk.Ready == "HEALTH_STATE_HEALTHY" {
				n++
			}
		}
		return n == 3
	})
	t.Logf("3 instances RUNNING, HEALTHY and READY %v after the job was created", time.Since(start).Round(10*time.Millisecond))
	pods := podsByInstance(t, "web", id)
	if len(pods) != 3 {
		t.Fatalf("%d running pods, want 3", len(pods))
	}
	nodes := map[string]bool{}
	for _, tk := range tasks {
		p := pods[int(tk.Instance)]
		port := tk.Ports["http"]
		if port < 32000 || port > 32099 {
			t.Errorf("instance %d: port %d outside the plugin's range 32000-32099", tk.Instance, port)
		}
		if nodes[p.Spec.NodeName] {
			t.Errorf("maxPerHost 1, yet two pods on %s", p.Spec.NodeName)
		}
		nodes[p.Spec.NodeName] = true
		c := p.Spec.Containers[0]
		if c.Image != "nginx:1.27" || c.ImagePullPolicy != corev1.PullIfNotPresent || c.Command != nil {
			t.Errorf("pod %s: image %q policy %q command %v; want nginx:1.27, IfNotPresent, its own entrypoint", p.Name, c.Image, c.ImagePullPolicy, c.Command)
		}
		if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].HostPort != int32(port) || c.Ports[0].ContainerPort != int32(port) {
			t.Errorf("pod %s ports %+v, want http host and container port %d", p.Name, c.Ports, port)
		}
		if got := envOf(c, "PORT_HTTP"); got != strconv.FormatUint(uint64(port), 10) {
			t.Errorf("pod %s PORT_HTTP=%q, want %d", p.Name, got, port)
		}
		l, r := c.LivenessProbe, c.ReadinessProbe
		if l == nil || l.HTTPGet == nil || l.HTTPGet.Path != "/healthz" || l.HTTPGet.Port.IntValue() != int(port) ||
			l.PeriodSeconds != 1 || l.TimeoutSeconds != 1 || l.FailureThreshold != 1 {
			t.Errorf("pod %s liveness %+v, want GET /healthz on %d every 1s, timeout rounded up to 1s", p.Name, l, port)
		}
		if r == nil || r.TCPSocket == nil || r.TCPSocket.Port.IntValue() != int(port) || r.PeriodSeconds != 2 {
			t.Errorf("pod %s readiness %+v, want tcp %d every 2s", p.Name, r, port)
		}
		if c.Resources.Requests.Cpu().MilliValue() != 500 || c.Resources.Limits.Memory().Value() != 256<<20 {
			t.Errorf("pod %s resources %+v", p.Name, c.Resources)
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("pod %s restart policy %s", p.Name, p.Spec.RestartPolicy)
		}
	}
	if out := s.MustCLI("task", "list", id); !strings.Contains(out, "HEALTHY/READY") {
		t.Errorf("task list does not show health and readiness:\n%s", out)
	}
}

// A stateful instance's volume is a claim bound in advance to a local
// volume on its node; when its pod is deleted the instance comes back on
// the same node with the same claim, and deleting the job deletes both.
func TestStatefulInstanceKeepsNodeAndClaim(t *testing.T) {
	needCluster(t)
	newNamespace(t, "stateful")
	addNodes(t, "4", "8Gi", nil, "state-1", "state-2", "state-3")
	s := startShard(t, t.TempDir(), "stateful")
	s.waitHosts(3, "UP")
	id := s.createFromYAML(`
name: counter
type: stateful
instances: 2
task:
  command: sh
  args: ["-c", "sleep 3600"]
  volumes: [{name: data, sizeMb: 64, path: /data}]
  resources: {cpu: 0.1, memMb: 32}
`)
	var tasks []testkit.Task
	waitFor(t, 60*time.Second, "2 instances running, pinned", func() bool {
		tasks = s.TaskList(id)
		n := 0
		for _, tk := range tasks {
			if tk.State == "TASK_STATE_RUNNING" && tk.Host != "" && tk.PinnedHost == tk.Host {
				n++
			}
		}
		return n == 2
	})
	ctx := context.Background()
	claims := map[int]string{}
	for inst, p := range podsByInstance(t, "stateful", id) {
		if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim == nil || p.Spec.Containers[0].VolumeMounts[0].MountPath != "/data" {
			t.Fatalf("pod %s volumes %+v mounts %+v", p.Name, p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts)
		}
		claim := p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName
		claims[inst] = claim
		pvc, err := kube.CoreV1().PersistentVolumeClaims("stateful").Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv, err := kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
		if pv.Spec.Local == nil || pv.Spec.ClaimRef.Name != claim || terms[0].MatchFields[0].Values[0] != p.Spec.NodeName ||
			pv.Spec.Capacity.Storage().Value() != 64<<20 {
			t.Fatalf("volume %s of %s: %+v", pv.Name, claim, pv.Spec)
		}
	}
	t.Cleanup(func() { dropVolumeFinalizers(t, "stateful", claims) })
	first := tasks[0]
	victim := podsByInstance(t, "stateful", id)[0]
	if err := kube.CoreV1().Pods("stateful").Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "instance 0 back in a new run", func() bool {
		tk := s.TaskList(id)[0]
		return tk.State == "TASK_STATE_RUNNING" && tk.Run > first.Run
	})
	again := podsByInstance(t, "stateful", id)[0]
	if again.Name == victim.Name || again.Spec.NodeName != victim.Spec.NodeName || again.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != claims[0] {
		t.Fatalf("instance 0 came back as %s on %s with claim %s; was %s on %s with %s", again.Name, again.Spec.NodeName,
			again.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, victim.Name, victim.Spec.NodeName, claims[0])
	}

	s.MustCLI("job", "stop", id)
	s.WaitJob(id, "JOB_STATE_KILLED", 60*time.Second)
	s.MustCLI("job", "delete", id)
	// Without a controller manager the protection finalizers keep them
	// terminating; what matters is that they were deleted.
	waitFor(t, 30*time.Second, "claims and volumes deleted", func() bool {
		for _, claim := range claims {
			pvc, err := kube.CoreV1().PersistentVolumeClaims("stateful").Get(ctx, claim, metav1.GetOptions{})
			if err == nil && pvc.DeletionTimestamp == nil {
				return false
			}
			pv, err := kube.CoreV1().PersistentVolumes().Get(ctx, "stateful-"+claim, metav1.GetOptions{})
			if err == nil && pv.DeletionTimestamp == nil {
				return false
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}

// dropVolumeFinalizers lets the API server finish deleting claims and
// volumes, as the controller manager the test cluster lacks would.
func dropVolumeFinalizers(t testing.TB, namespace string, claims map[int]string) {
	ctx := context.Background()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	for _, claim := range claims {
		_, _ = kube.CoreV1().PersistentVolumeClaims(namespace).Patch(ctx, claim, "application/merge-patch+json", patch, metav1.PatchOptions{})
		_, _ = kube.CoreV1().PersistentVolumes().Patch(ctx, namespace+"-"+claim, "application/merge-patch+json", patch, metav1.PatchOptions{})
	}
}

// A daemon job has one pod on each matching node, and one more as soon as a
// matching node joins.
func TestDaemonJobFollowsNodes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "daemon")
	agents := map[string]string{"agents": "yes"}
	addNodes(t, "2", "4Gi", agents, "daemon-1", "daemon-2")
	addNodes(t, "2", "4Gi", nil, "daemon-other")
	s := startShard(t, t.TempDir(), "daemon")
	s.waitHosts(3, "UP")
	id := s.createFromYAML(`
name: node-agent
type: daemon
task:
  command: sleep
  args: ["3600"]
  resources: {cpu: 0.1, memMb: 16}
  constraints: [{key: agents, op: equals, values: ["yes"]}]
`)
	perNode := func() map[string]int {
		m := map[string]int{}
		for _, p := range podsByInstance(t, "daemon", id) {
			m[p.Spec.NodeName]++
		}
		return m
	}
	waitFor(t, 60*time.Second, "a daemon pod on each agent node", func() bool {
		m := perNode()
		return len(m) == 2 && m["daemon-1"] == 1 && m["daemon-2"] == 1
	})
	joined := time.Now()
	addNodes(t, "2", "4Gi", agents, "daemon-3")
	waitFor(t, 60*time.Second, "a daemon pod on the node that joined", func() bool { return perNode()["daemon-3"] == 1 })
	t.Logf("the joining node ran its daemon pod %v after it was created", time.Since(joined).Round(10*time.Millisecond))
	if m := perNode(); len(m) != 3 || m["daemon-other"] != 0 {
		t.Fatalf("daemon pods per node %v: want one on each agent node, none elsewhere", m)
	}
}

// Gang members find the gang in a file from a config map, which goes once
// their pods are gone.
func TestGangFileFromConfigMap(t *testing.T) {
	needCluster(t)
	newNamespace(t, "gang")
	addNodes(t, "4", "8Gi", nil, "gang-1", "gang-2")
	s := startShard(t, t.TempDir(), "gang", "keepFinished=1s")
	s.waitHosts(2, "UP")
	id := s.CreateJob(`{"name":"gang","instances":2,"gangSize":2,"task":{"command":"sh","args":["-c","work"],` +
		`"env":{"FAKE_RUN_FOR":"3s"},"resources":{"cpu":1,"memMb":64}}}`)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "both members running", func() bool { return len(podsByInstance(t, "gang", id)) == 2 })
	for _, p := range podsByInstance(t, "gang", id) {
		c := p.Spec.Containers[0]
		if envOf(c, "PELOTON_GANG_FILE") != "/etc/peloton/gang.json" {
			t.Fatalf("pod %s env %v", p.Name, c.Env)
		}
		cm, err := kube.CoreV1().ConfigMaps("gang").Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var members []struct {
			Instance uint32
			Hostname string
		}
		if err := json.Unmarshal([]byte(cm.Data["gang.json"]), &members); err != nil || len(members) != 2 {
			t.Fatalf("config map %s: %q %v", cm.Name, cm.Data, err)
		}
	}
	s.WaitJob(id, "JOB_STATE_SUCCEEDED", 60*time.Second)
	waitFor(t, 30*time.Second, "gang config maps gone with their pods", func() bool {
		list, err := kube.CoreV1().ConfigMaps("gang").List(ctx, metav1.ListOptions{LabelSelector: "peloton.io/gang=true"})
		return err == nil && len(list.Items) == 0
	})
}

// What kwok plays of probes comes back: a container that never turns
// ready is NOT_READY once its readiness probe had the time to fail, and a
// container the kubelet kills for its health check (exit 137) fails its
// run UNHEALTHY, after which the service instance runs again.
func TestProbeVerdictsFromPodStatus(t *testing.T) {
	needCluster(t)
	newNamespace(t, "probes")
	addNodes(t, "4", "8Gi", nil, "probes-1")
	s := startShard(t, t.TempDir(), "probes")
	s.waitHosts(1, "UP")
	unready := s.createFromYAML(`
name: unready
type: service
instances: 1
task:
  container: {image: "nginx:1.27"}
  ports: [{name: http}]
  readiness: {tcp: {port: http}, interval: 1s, failureThreshold: 1}
  env: {FAKE_NOT_READY: "1"}
  resources: {cpu: 0.1, memMb: 32}
`)
	killed := s.createFromYAML(`
name: killed
type: service
instances: 1
task:
  container: {image: "nginx:1.27"}
  ports: [{name: http}]
  healthCheck: {tcp: {port: http}, interval: 1s}
  env: {FAKE_RUN_FOR: "1s", FAKE_EXIT_CODE: "137"}
  resources: {cpu: 0.1, memMb: 32}
`)
	waitFor(t, 30*time.Second, "the unready instance NOT_READY", func() bool {
		tk := s.TaskList(unready)[0]
		return tk.State == "TASK_STATE_RUNNING" && tk.Ready == "HEALTH_STATE_UNHEALTHY"
	})
	waitFor(t, 60*time.Second, "the killed instance running its second run", func() bool {
		tk := s.TaskList(killed)[0]
		return tk.Run >= 2 && tk.State == "TASK_STATE_RUNNING"
	})
	events := s.MustCLI("job", "events", killed, "--instance", "0")
	if !strings.Contains(events, "run 1 FAILED (killed after failing its health check") {
		t.Fatalf("events of the killed instance do not show a FAILED run for its health check:\n%s", events)
	}
}
