package k8stest

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The reservation scenario on the Kubernetes harness (kube-apiserver,
// etcd, kwok): six nodes of 4 cores, each 3/4 full of one-core pods that
// end after 3-6s and are replaced; a 4-core task waits for a reserved
// node, then runs there.
func TestBigTaskRunsOnAReservedNode(t *testing.T) {
	needCluster(t)
	newNamespace(t, "reserve")
	addNodes(t, "4", "8Gi", nil, "rsv-1", "rsv-2", "rsv-3", "rsv-4", "rsv-5", "rsv-6")
	dir := t.TempDir()
	s := startShardWith(t, dir, "reserve", []string{"--reserve-hosts-after", "3s"})
	s.waitHosts(6, "UP")
	sc := &testkit.ReservationScenario{Server: s.Server, Dir: dir, Hosts: 6, HostCPU: 4,
		Task: `command: sh, args: ["-c", "work"]`, DurationEnv: "FAKE_RUN_FOR", Within: 2 * time.Minute}
	sc.Run(t)
}
