package mesos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
)

// The peloton binary is built on first use (testkit.Binary), so that
// the benchmark, which does not need it, runs without it.
func TestMain(m *testing.M) { testkit.Main(m, nil) }

// master is an emulated Mesos master on a loopback port.
type master = testkit.MesosMaster

func startMaster(t *testing.T, n int, cpu float64) *master {
	t.Helper()
	specs := make([]mesostest.AgentSpec, n)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("agent-%d", i), CPU: cpu, MemMB: 4096, DiskMB: 10000,
			Attributes: map[string]string{"zone": fmt.Sprintf("z%d", i%2)}}
	}
	return startMasterWith(t, specs...)
}

// startMasterWith starts a master with these agents that keeps every
// TaskInfo it accepted.
func startMasterWith(t *testing.T, specs ...mesostest.AgentSpec) *master {
	t.Helper()
	return testkit.ServeMesos(t, mesostest.Config{HeartbeatInterval: time.Second, AllocationInterval: 20 * time.Millisecond, UpdateRetry: 2 * time.Second,
		KeepTaskInfos: true}, specs...)
}

// server is a running `peloton dev`.
type server struct{ *testkit.Server }

// startDev starts `peloton dev` with one Mesos cluster "dc1" and waits
// until it is healthy; params are added to the cluster's --hosts spec.
// Its CLI runs may take a minute.
func startDev(t *testing.T, dataDir string, m *master, params ...string) *server {
	t.Helper()
	hosts := "mesos:dc1,master=" + m.URL + ",hold=2s,launch-wait=3s,failover=1m"
	for _, p := range params {
		hosts += "," + p
	}
	return &server{testkit.StartDevWith(t, testkit.Binary(t), testkit.ServerOptions{CLIWithin: time.Minute}, dataDir, "--hosts", hosts)}
}

// waitJob waits until the job is in state; the test fails at once when
// it ends in another.
func (s *server) waitJob(id, state string, within time.Duration) {
	s.T.Helper()
	waitFor(s.T, within, "job "+id+" "+state, func() bool {
		got := s.Job(id).Status.State
		if got != state && strings.HasPrefix(got, "JOB_STATE_") && (strings.HasSuffix(got, "FAILED") || strings.HasSuffix(got, "KILLED")) {
			s.T.Fatalf("job %s ended %s; tasks %+v", id, got, s.Tasks(id))
		}
		return got == state
	})
}

var waitFor = testkit.WaitFor

func jobSpec(name string, instances int, cpu float64, duration string) string {
	return fmt.Sprintf(`{"name":%q,"instances":%d,"task":{"command":"true","env":{"PELOTON_SIM_DURATION":%q},"resources":{"cpu":%g,"memMb":64}}}`,
		name, instances, duration, cpu)
}
