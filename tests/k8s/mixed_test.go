package k8stest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
)

// One shard with a Mesos cluster and a Kubernetes cluster side by side:
// a job bigger than either cluster has instances placed on both, and it
// succeeds — the incremental move from Mesos to Kubernetes.
func TestMesosAndKubernetesSideBySide(t *testing.T) {
	needCluster(t)
	newNamespace(t, "mixed")
	addNodes(t, "4", "8Gi", map[string]string{"zone": "a"}, "mixed-k1", "mixed-k2")

	m := mesostest.New(mesostest.Config{HeartbeatInterval: time.Second, AllocationInterval: 20 * time.Millisecond, UpdateRetry: 2 * time.Second})
	if err := m.AddAgents(
		mesostest.AgentSpec{ID: "S0", Hostname: "agent-0", CPU: 4, MemMB: 8192, DiskMB: 10000},
		mesostest.AgentSpec{ID: "S1", Hostname: "agent-1", CPU: 4, MemMB: 8192, DiskMB: 10000},
	); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); m.Run(ctx) }()
	go func() { defer wg.Done(); _ = srv.Serve(l) }()
	t.Cleanup(func() { cancel(); srv.Close(); wg.Wait() })

	s := startShardWith(t, t.TempDir(), "mixed", []string{"--hosts", "mesos:dc1,master=http://" + l.Addr().String()})
	s.waitHosts(2, "UP") // the Kubernetes nodes
	waitFor(t, 30*time.Second, "the Mesos agents", func() bool {
		var out struct {
			Hosts []struct {
				State string `json:"state"`
			} `json:"hosts"`
		}
		s.call("GET", "/v1/hosts?cluster=dc1", nil, &out)
		up := 0
		for _, h := range out.Hosts {
			if h.State == "HOST_STATE_UP" {
				up++
			}
		}
		return up == 2
	})

	// 12 one-core tasks, 8 cores per cluster: both clusters are needed.
	id := s.createJob(fmt.Sprintf(`{"name":"mixed","instances":12,"task":{"command":"sh","args":["-c","work"],` +
		`"env":{"FAKE_RUN_FOR":"4s","PELOTON_SIM_DURATION":"4s"},"resources":{"cpu":1,"memMb":256}}}`))
	tasks := s.waitJob(id, "JOB_STATE_SUCCEEDED", 90*time.Second)
	per := map[string]int{}
	for _, tk := range tasks {
		per[tk.Cluster]++
	}
	if per["kube"] == 0 || per["dc1"] == 0 || per["kube"]+per["dc1"] != 12 {
		t.Fatalf("instances per cluster %v: want some on Kubernetes (kube) and some on Mesos (dc1)", per)
	}
	t.Logf("instances per cluster: %v", per)
}
