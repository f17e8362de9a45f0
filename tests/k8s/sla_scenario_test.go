package k8stest

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The SLA scenario on the Kubernetes harness (kube-apiserver, etcd, kwok):
// a 20-instance service whose pods carry liveness and readiness probes,
// read back from the pods' status as kwok sets it, with maxUnavailable 2,
// updated in batches of 5 while three of its nodes are drained, sampled
// every 100 ms.
func TestSLAUpdateAndDrainOnKubernetes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "sla")
	addNodes(t, "4", "8Gi", nil, "sla-1", "sla-2", "sla-3", "sla-4", "sla-5", "sla-6")
	dir := t.TempDir()
	s := startShard(t, dir, "sla", "ports=32100-32199")
	s.waitHosts(6, "UP")
	sc := &testkit.SLAScenario{
		Bin: pelotonBin, Addr: s.Addr, Dir: dir,
		Spec: `name: sla-scenario
type: service
instances: 20
sla: {maxUnavailable: 2}
task:
  container: {image: "nginx:1.27"}
  env: {V: "%s"}
  ports: [{name: http}]
  healthCheck: {http: {port: http, path: /healthz}, interval: 1s}
  readiness: {tcp: {port: http}, interval: 1s}
  resources: {cpu: 0.5, memMb: 64}
`,
		Instances: 20, MaxUnavailable: 2, BatchSize: 5, DrainCount: 3, Within: 3 * time.Minute,
	}
	res := sc.Run(t)
	sc.RunCanary(t, res.Job, 2)
}
