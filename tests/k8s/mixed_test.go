package k8stest

import (
	"fmt"
	"testing"
	"time"
)

// One shard with a Mesos cluster and a Kubernetes cluster side by side:
// a job bigger than either cluster has instances placed on both, and it
// succeeds — the incremental move from Mesos to Kubernetes.
func TestMesosAndKubernetesSideBySide(t *testing.T) {
	needCluster(t)
	newNamespace(t, "mixed")
	addNodes(t, "4", "8Gi", map[string]string{"zone": "a"}, "mixed-k1", "mixed-k2")

	s, _ := startMixed(t, "mixed", 2, 2, 4)

	// 12 one-core tasks, 8 cores per cluster: both clusters are needed.
	id := s.CreateJob(fmt.Sprintf(`{"name":"mixed","instances":12,"task":{"command":"sh","args":["-c","work"],` +
		`"env":{"FAKE_RUN_FOR":"4s","PELOTON_SIM_DURATION":"4s"},"resources":{"cpu":1,"memMb":256}}}`))
	tasks := s.WaitJob(id, "JOB_STATE_SUCCEEDED", 90*time.Second)
	per := map[string]int{}
	for _, tk := range tasks {
		per[tk.Cluster]++
	}
	if per["kube"] == 0 || per["dc1"] == 0 || per["kube"]+per["dc1"] != 12 {
		t.Fatalf("instances per cluster %v: want some on Kubernetes (kube) and some on Mesos (dc1)", per)
	}
	t.Logf("instances per cluster: %v", per)
}
