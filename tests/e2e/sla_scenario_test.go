package e2e

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// slaScenarioSpec is the 20-instance service of the SLA scenario: a
// health check, at most 2 unavailable.
const slaScenarioSpec = `name: sla-scenario
type: service
instances: 20
sla: {maxUnavailable: 2}
task:
  command: sim
  env: {V: "%s"}
  healthCheck: {command: ["true"], initialDelay: 1s}
  resources: {cpu: 0.5, memMb: 16}
`

// A 20-instance service with maxUnavailable 2, updated in batches of 5
// while three of its hosts are drained at the same time, sampled every
// 100 ms: never more than 2 instances unavailable, and the update and the
// drains both finish.
func TestSLAUpdateAndDrainOnSim(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=8,cpu=4,mem=8192,duration=1h")
	sc := &testkit.SLAScenario{
		Bin: binary, Addr: s.Addr, Dir: dir, Spec: slaScenarioSpec,
		Instances: 20, MaxUnavailable: 2, BatchSize: 5, DrainCount: 3, Within: 2 * time.Minute,
	}
	sc.Run(t)
}
