package mesos

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The SLA scenario on the Mesos master emulator: a 20-instance service
// with an HTTP health check (Mesos health checks, reported in status
// updates) and maxUnavailable 2, updated in batches of 5 while three of
// its agents are drained, sampled every 100 ms.
func TestSLAUpdateAndDrainOnMesos(t *testing.T) {
	m := startMaster(t, 6, 4)
	dir := t.TempDir()
	s := startDev(t, dir, m)
	sc := &testkit.SLAScenario{
		Bin: testkit.Binary(t), Addr: s.Addr, Dir: dir,
		Spec: `name: sla-scenario
type: service
instances: 20
sla: {maxUnavailable: 2}
task:
  command: sim
  env: {V: "%s", PELOTON_SIM_DURATION: 1h}
  ports: [{name: http}]
  healthCheck: {http: {port: http, path: /healthz}, initialDelay: 1s, interval: 500ms}
  resources: {cpu: 0.5, memMb: 64}
`,
		Instances: 20, MaxUnavailable: 2, BatchSize: 5, DrainCount: 3, Within: 3 * time.Minute,
	}
	res := sc.Run(t)
	sc.RunCanary(t, res.Job, 2)
}
