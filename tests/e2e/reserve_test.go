package e2e

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The reservation scenario through the binary on ten sim hosts of 10
// cores: a 10-core task behind a churn of one-core tasks waits for a
// reserved host, saying which and what is left to free, then runs there.
func TestBigTaskRunsOnAReservedHost(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=10,cpu=10,mem=65536", "--reserve-hosts-after", "3s")
	sc := &testkit.ReservationScenario{Server: s, Dir: dir, Hosts: 10, HostCPU: 10,
		Task: "command: sim", DurationEnv: "PELOTON_SIM_DURATION", Within: 90 * time.Second}
	sc.Run(t)
}
