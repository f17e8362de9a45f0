package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// After thousands of gang and single tasks with fractional cores start and
// end on simulated hosts, every pool's and every host's allocation reads
// exactly zero: resources are whole units end to end, so sums never drift.
func TestAllocationReturnsToExactlyZero(t *testing.T) {
	s := startDev(t, t.TempDir(), "--hosts", "sim,hosts=40,cpu=16,mem=65536")
	single := s.CreateJob(`{"name":"single","instances":6000,
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"20ms"},"resources":{"cpu":0.1,"memMb":1.5e1,"diskMb":3}}}`)
	odd := s.CreateJob(`{"name":"odd","instances":1000,
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"10ms"},"resources":{"cpu":0.333,"memMb":7}}}`)
	gangs := s.CreateJob(`{"name":"gangs","instances":3000,"gangSize":3,
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"30ms"},"resources":{"cpu":0.7,"memMb":33}}}`)
	for _, j := range []string{single, odd, gangs} {
		s.WaitJob(j, "JOB_STATE_SUCCEEDED", 3*time.Minute)
	}
	// Runs release what they held when they end; give the last pass a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		dirty := nonZeroAllocations(t, s)
		if len(dirty) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10,000 tasks ended, allocations are not exactly zero:\n%s", strings.Join(dirty, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// nonZeroAllocations lists every pool and host amount of allocation that is
// not exactly zero, as the HTTP API reports them.
func nonZeroAllocations(t *testing.T, s *server) []string {
	t.Helper()
	var dirty []string
	code, body := s.HTTP("GET", "/v1/pools", "")
	if code != 200 {
		t.Fatalf("GET /v1/pools: %d %s", code, body)
	}
	var pools struct {
		Pools []struct {
			Path      string `json:"path"`
			Resources []struct {
				Name       string  `json:"name"`
				Allocation float64 `json:"allocation"`
			} `json:"resources"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(body, &pools); err != nil {
		t.Fatalf("pools: %v: %s", err, body)
	}
	for _, p := range pools.Pools {
		for _, r := range p.Resources {
			if r.Allocation != 0 {
				dirty = append(dirty, fmt.Sprintf("pool %s %s allocation %v", p.Path, r.Name, r.Allocation))
			}
		}
	}
	code, body = s.HTTP("GET", "/v1/hosts", "")
	if code != 200 {
		t.Fatalf("GET /v1/hosts: %d %s", code, body)
	}
	var hosts struct {
		Hosts []struct {
			ID        string             `json:"id"`
			Allocated map[string]float64 `json:"allocated"`
			Tasks     int                `json:"tasks"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(body, &hosts); err != nil {
		t.Fatalf("hosts: %v: %s", err, body)
	}
	if len(hosts.Hosts) != 40 {
		t.Fatalf("%d hosts, want 40", len(hosts.Hosts))
	}
	for _, h := range hosts.Hosts {
		for name, v := range h.Allocated {
			if v != 0 {
				dirty = append(dirty, fmt.Sprintf("host %s %s allocated %v", h.ID, name, v))
			}
		}
		if h.Tasks != 0 {
			dirty = append(dirty, fmt.Sprintf("host %s holds %d tasks", h.ID, h.Tasks))
		}
	}
	return dirty
}

// The README's workload examples through the binary on simulated hosts: a
// web service with an image, a named port and probes; a stateful job
// pinned to its hosts; a daemon job that follows hosts through a drain.
func TestWorkloadExamplesOnSim(t *testing.T) {
	s := startDev(t, t.TempDir(), "--hosts", "sim,hosts=4,cpu=4,mem=8192,duration=1h")
	web := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "web.yaml")))
	waitFor(t, 20*time.Second, "3 web instances running, healthy and ready", func() bool {
		n := 0
		for _, tk := range s.TaskList(web) {
			if tk.State == "TASK_STATE_RUNNING" && tk.Health == "HEALTH_STATE_HEALTHY" && tk.Ready == "HEALTH_STATE_HEALTHY" {
				n++
			}
		}
		return n == 3
	})
	hosts := map[string]bool{}
	for _, tk := range s.TaskList(web) {
		if p := tk.Ports["http"]; p < 31000 || p > 32000 {
			t.Errorf("instance %d port %d outside 31000-32000", tk.Instance, p)
		}
		if hosts[tk.Host] {
			t.Errorf("maxPerHost 1, yet two instances on %s", tk.Host)
		}
		hosts[tk.Host] = true
	}
	if out := s.MustCLI("task", "list", web); !strings.Contains(out, "HEALTHY/READY") || !strings.Contains(out, "http=3") {
		t.Errorf("task list does not show health and ports:\n%s", out)
	}

	st := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "stateful.yaml")))
	waitFor(t, 20*time.Second, "stateful instances running, pinned", func() bool {
		n := 0
		for _, tk := range s.TaskList(st) {
			if tk.State == "TASK_STATE_RUNNING" && tk.PinnedHost == tk.Host && tk.Host != "" {
				n++
			}
		}
		return n == 2
	})

	d := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "daemon.yaml")))
	perHost := func() map[string]int {
		m := map[string]int{}
		for _, tk := range s.TaskList(d) {
			if tk.State == "TASK_STATE_RUNNING" {
				m[tk.Host]++
			}
		}
		return m
	}
	waitFor(t, 20*time.Second, "one daemon instance on each of 4 hosts", func() bool {
		m := perHost()
		return len(m) == 4 && m["sim-0"] == 1 && m["sim-1"] == 1 && m["sim-2"] == 1 && m["sim-3"] == 1
	})
	s.MustCLI("host", "drain", "sim/sim-2", "--reason", "maintenance")
	waitFor(t, 20*time.Second, "the drained host loses its daemon instance", func() bool {
		m := perHost()
		return len(m) == 3 && m["sim-2"] == 0
	})
	gone := false
	for _, tk := range s.TaskList(d) {
		if tk.Reason == "HOST_GONE" && tk.State == "TASK_STATE_KILLED" {
			gone = true
		}
	}
	if !gone {
		t.Errorf("no daemon instance ended KILLED with reason HOST_GONE: %+v", s.TaskList(d))
	}
	s.MustCLI("host", "undrain", "sim/sim-2")
	waitFor(t, 20*time.Second, "the undrained host gets a daemon instance again", func() bool { return perHost()["sim-2"] == 1 })
	if out := s.MustCLI("job", "get", d); !strings.Contains(out, "RUNNING") {
		t.Errorf("daemon job:\n%s", out)
	}
}

// On the local host manager, which runs commands and no images, a task with
// an image stays pending and says why.
func TestImageTaskPendingOnLocalHosts(t *testing.T) {
	s := startDev(t, t.TempDir())
	web := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "web.yaml")))
	waitFor(t, 20*time.Second, "pending reason names images", func() bool {
		ts := s.TaskList(web)
		return len(ts) == 3 && strings.Contains(ts[0].Message, "cannot run container images")
	})
	if out := s.MustCLI("task", "get", web, "0"); !strings.Contains(out, "cannot run container images") {
		t.Errorf("task get does not say why:\n%s", out)
	}
}

// A host drained with batch tasks running and a deadline ends DRAINED: the
// tasks past the deadline run again elsewhere and none is lost; the host
// goes down and comes back up; a host still draining takes nothing new,
// even across a restart.
func TestHostMaintenanceCycle(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=3,cpu=4,mem=8192")
	batch := s.CreateJob(`{"name":"long","instances":12,
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"8s"},"resources":{"cpu":1,"memMb":16}}}`)
	waitFor(t, 20*time.Second, "12 running", func() bool { return runningIn(t, s, batch) == 12 })
	if r := s.CLI("host", "down", "sim/sim-0"); r.Code == 0 || !strings.Contains(r.Stderr, "UP") {
		t.Fatalf("host down of an UP host: exit %d %s", r.Code, r.Stderr)
	}
	s.MustCLI("host", "drain", "sim/sim-0", "--reason", "firmware", "--deadline", "1s")
	if r := s.CLI("host", "down", "sim/sim-0"); r.Code == 0 || !strings.Contains(r.Stderr, "DRAINING") {
		t.Fatalf("host down of a DRAINING host: exit %d %s", r.Code, r.Stderr)
	}
	waitFor(t, 20*time.Second, "sim-0 DRAINED after the deadline", func() bool { return hostState(t, s, "sim/sim-0") == "DRAINED" })
	s.WaitJob(batch, "JOB_STATE_SUCCEEDED", time.Minute)
	moved := 0
	for _, tk := range s.Tasks(batch) {
		if tk.State != "TASK_STATE_SUCCEEDED" {
			t.Errorf("instance %d ended %s", tk.Instance, tk.State)
		}
		if tk.Run > 1 {
			moved++
		}
	}
	if moved != 4 {
		t.Errorf("%d instances ran again, want the 4 that were on sim-0", moved)
	}
	s.MustCLI("host", "down", "sim/sim-0")
	if st := hostState(t, s, "sim/sim-0"); st != "DOWN" {
		t.Fatalf("after host down: %s", st)
	}
	s.Stop()

	s2 := startDev(t, dir, "--hosts", "sim,hosts=3,cpu=4,mem=8192,duration=1h")
	waitFor(t, 30*time.Second, "hosts reported", func() bool { return strings.Contains(s2.MustCLI("host", "list"), "sim/sim-2") })
	if st := hostState(t, s2, "sim/sim-0"); st != "DOWN" {
		t.Fatalf("after a restart: %s", st)
	}
	more := s2.CreateJob(`{"name":"more","instances":8,"task":{"command":"sim","resources":{"cpu":1,"memMb":16}}}`)
	waitFor(t, 20*time.Second, "8 running on the hosts in service", func() bool { return runningIn(t, s2, more) == 8 })
	for _, tk := range s2.Tasks(more) {
		if tk.Host == "sim/sim-0" || tk.Host == "sim-0" {
			t.Fatalf("instance %d placed on a host that is down", tk.Instance)
		}
	}
	s2.MustCLI("host", "up", "sim/sim-0")
	if st := hostState(t, s2, "sim/sim-0"); st != "UP" {
		t.Fatalf("after host up: %s", st)
	}
}
