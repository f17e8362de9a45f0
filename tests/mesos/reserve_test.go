package mesos

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The reservation scenario on the Mesos master emulator: six agents of 4
// cores, each 3/4 full of one-core tasks that end after 3-6s and are
// replaced; a 4-core task waits for a reserved agent, then runs there.
func TestBigTaskRunsOnAReservedAgent(t *testing.T) {
	m := startMaster(t, 6, 4)
	dir := t.TempDir()
	hosts := "mesos:dc1,master=" + m.URL + ",hold=2s,launch-wait=3s,failover=1m"
	s := testkit.StartDevWith(t, testkit.Binary(t), testkit.ServerOptions{CLIWithin: time.Minute}, dir,
		"--hosts", hosts, "--reserve-hosts-after", "3s")
	sc := &testkit.ReservationScenario{Server: s, Dir: dir, Hosts: 6, HostCPU: 4,
		Task: "command: sim", DurationEnv: "PELOTON_SIM_DURATION", Within: 2 * time.Minute}
	sc.Run(t)
}
