package k8stest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// batchJob is a job spec whose pods kwok ends after runFor with exitCode.
func batchJob(name string, instances int, runFor string, exitCode int, extra string) string {
	return fmt.Sprintf(`{"name":%q,"instances":%d,%s"task":{"command":"sh","args":["-c","work"],`+
		`"env":{"FAKE_RUN_FOR":%q,"FAKE_EXIT_CODE":"%d"},"resources":{"cpu":1,"memMb":256}}}`,
		name, instances, extra, runFor, exitCode)
}

// A batch job runs to SUCCEEDED on Kubernetes nodes, one bound pod per
// task, and `peloton host list` shows the nodes of the cluster.
func TestBatchJobSucceedsOnNodes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "batch")
	addNodes(t, "4", "8Gi", map[string]string{"zone": "a"}, "batch-a1", "batch-a2")
	addNodes(t, "4", "8Gi", map[string]string{"zone": "b"}, "batch-b1")
	s := startShard(t, t.TempDir(), "batch")

	s.waitHosts(3, "UP")
	for _, line := range strings.Split(s.MustCLI("host", "list", "--cluster", "kube"), "\n") {
		if !strings.Contains(line, "batch-") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != "kube" || f[2] != "kubernetes" || f[3] != "UP" || !strings.Contains(line, "kube/"+f[0]) {
			t.Fatalf("host list line %q: want cluster kube, kind kubernetes, state UP, id kube/<node>", line)
		}
	}

	id := s.CreateJob(batchJob("on-k8s", 6, "1s", 0, ""))
	tasks := s.WaitJob(id, "JOB_STATE_SUCCEEDED", 60*time.Second)
	if len(tasks) != 6 {
		t.Fatalf("tasks: %+v", tasks)
	}
	for _, tk := range tasks {
		if tk.State != "TASK_STATE_SUCCEEDED" || tk.Cluster != "kube" || !strings.HasPrefix(tk.Host, "batch-") {
			t.Fatalf("task %+v: want SUCCEEDED on a node of cluster kube", tk)
		}
	}
	pods := podsOf(t, "batch")
	if len(pods) != 6 {
		t.Fatalf("%d pods, want one per task", len(pods))
	}
	for _, p := range pods {
		if p.Spec.SchedulerName != "peloton" || p.Spec.NodeName == "" || p.Labels["peloton.job"] != id ||
			p.Status.Phase != corev1.PodSucceeded {
			t.Fatalf("pod %s: scheduler %q node %q labels %v phase %s", p.Name, p.Spec.SchedulerName, p.Spec.NodeName, p.Labels, p.Status.Phase)
		}
		if got := p.Spec.NodeName; got != tasks[instanceOf(t, p)].Host {
			t.Fatalf("pod %s on %s, task says %s", p.Name, got, tasks[instanceOf(t, p)].Host)
		}
	}
}

func instanceOf(t testing.TB, p corev1.Pod) int {
	var n int
	if _, err := fmt.Sscan(p.Labels["peloton.instance"], &n); err != nil {
		t.Fatalf("pod %s has no instance label: %v", p.Name, p.Labels)
	}
	return n
}

// A failing command ends FAILED with its exit code, after its attempts.
func TestFailingCommandEndsFailed(t *testing.T) {
	needCluster(t)
	newNamespace(t, "failing")
	addNodes(t, "4", "8Gi", nil, "fail-1")
	s := startShard(t, t.TempDir(), "failing")
	s.waitHosts(1, "UP")
	id := s.CreateJob(batchJob("fails", 1, "500ms", 3, `"maxAttempts":2,`))
	tasks := s.WaitJob(id, "JOB_STATE_FAILED", 60*time.Second)
	tk := tasks[0]
	if tk.State != "TASK_STATE_FAILED" || tk.ExitCode != 3 || tk.Run != 2 {
		t.Fatalf("task %+v: want FAILED, exit code 3, on its 2nd run", tk)
	}
}

// Deleting a node mid-job loses its tasks; they run again on other nodes
// and the job completes.
func TestNodeDeletedMidJob(t *testing.T) {
	needCluster(t)
	newNamespace(t, "nodegone")
	addNodes(t, "2", "8Gi", nil, "gone-1", "gone-2", "gone-3")
	s := startShard(t, t.TempDir(), "nodegone")
	s.waitHosts(3, "UP")
	id := s.CreateJob(batchJob("survivor", 4, "6s", 0, ""))
	var victim string
	waitFor(t, 30*time.Second, "all tasks running", func() bool {
		n := 0
		for _, tk := range s.Tasks(id) {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
				victim = tk.Host
			}
		}
		return n == 4
	})
	var onVictim []uint32
	for _, tk := range s.Tasks(id) {
		if tk.Host == victim {
			onVictim = append(onVictim, tk.Instance)
		}
	}
	node := strings.TrimPrefix(victim, "kube/")
	if err := kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tasks := s.WaitJob(id, "JOB_STATE_SUCCEEDED", 90*time.Second)
	for _, inst := range onVictim {
		tk := tasks[inst]
		if tk.Run < 2 || tk.Host == victim || tk.State != "TASK_STATE_SUCCEEDED" {
			t.Fatalf("task %d was on deleted node %s: now %+v, want rerun elsewhere and SUCCEEDED", inst, node, tk)
		}
	}
	if strings.Contains(s.MustCLI("host", "list", "--cluster", "kube"), node+" ") {
		t.Fatalf("deleted node %s still listed", node)
	}
}

// Restarting the shard mid-job adopts the running pods: no task is
// launched again while its pod runs, and the job completes.
func TestShardRestartMidJob(t *testing.T) {
	needCluster(t)
	newNamespace(t, "restart")
	addNodes(t, "4", "8Gi", nil, "restart-1", "restart-2")
	dataDir := t.TempDir()
	s := startShard(t, dataDir, "restart")
	s.waitHosts(2, "UP")
	id := s.CreateJob(batchJob("restarts", 4, "8s", 0, ""))
	waitFor(t, 30*time.Second, "all tasks running", func() bool {
		n := 0
		for _, tk := range s.Tasks(id) {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		return n == 4
	})
	s.Stop()
	s = startShard(t, dataDir, "restart")
	tasks := s.WaitJob(id, "JOB_STATE_SUCCEEDED", 60*time.Second)
	for _, tk := range tasks {
		if tk.Run != 1 {
			t.Fatalf("task %+v was relaunched across the restart", tk)
		}
	}
	pods := podsOf(t, "restart")
	perInstance := map[int]int{}
	for _, p := range pods {
		perInstance[instanceOf(t, p)]++
		if p.Status.Phase != corev1.PodSucceeded {
			t.Fatalf("pod %s ended %s", p.Name, p.Status.Phase)
		}
	}
	if len(pods) != 4 || len(perInstance) != 4 {
		t.Fatalf("%d pods for 4 tasks (%v): a task was launched twice", len(pods), perInstance)
	}
}
