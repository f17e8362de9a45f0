package e2e

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

type hostPoolJSON struct {
	Name      string   `json:"name"`
	Hosts     []string `json:"hosts"`
	InService uint32   `json:"inService"`
	Moving    []string `json:"moving"`
}

type hostPoolMoveJSON struct {
	HostID string `json:"hostId"`
	From   string `json:"from"`
	To     string `json:"to"`
	Phase  string `json:"phase"`
	Reason string `json:"reason"`
}

// hostPools reads GET /v1/hostpools: the hosts of each host pool (sorted)
// and the recent moves.
func hostPools(t *testing.T, s *server) (map[string][]string, []hostPoolMoveJSON) {
	t.Helper()
	code, body := s.HTTP("GET", "/v1/hostpools", "")
	if code != 200 {
		t.Fatalf("GET /v1/hostpools: %d %s", code, body)
	}
	var out struct {
		HostPools   []hostPoolJSON     `json:"hostPools"`
		RecentMoves []hostPoolMoveJSON `json:"recentMoves"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET /v1/hostpools: %v: %s", err, body)
	}
	m := map[string][]string{}
	for _, p := range out.HostPools {
		sort.Strings(p.Hosts)
		m[p.Name] = p.Hosts
	}
	return m, out.RecentMoves
}

// sampleRunning samples how many instances of a job run, every 100 ms,
// until finish, keeping the fewest seen (want before any sample).
func sampleRunning(s *server, job string, want int) (finish func() (minRunning, samples, errs int)) {
	least := want
	stop := testkit.Sample(&s.API, job, 100*time.Millisecond, func(ts []testkit.Task) {
		n := 0
		for _, tk := range ts {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		least = min(least, n)
	})
	return func() (int, int, int) {
		samples, errs := stop()
		return least, samples, errs
	}
}

// Host pools that follow the load, through the binary on six simulated
// hosts of 4 cores: two in batch, four in services (floor 2). A service
// of four instances (maxUnavailable 1) runs spread over the service hosts.
// A batch job asks for twice what the batch hosts hold: within one policy
// period two service hosts are drained (the service instances there move
// under their SLA) and join batch, and the waiting batch tasks run there.
// Once the batch job is done, a second service waits for room: idle batch
// hosts move back to services within one policy period, batch keeping its
// floor. The first service
// never has more than one instance down. Host pools survive a restart.
func TestHostPoolsFollowTheLoad(t *testing.T) {
	dir := t.TempDir()
	const period = time.Second
	flags := []string{"--hosts", "sim,hosts=6,cpu=4,mem=8192,duration=1h", "--host-pool-period", period.String(),
		"--host-pool-floor", "services=2,batch=1"}
	s := startDev(t, filepath.Join(dir, "data"), flags...)

	// Bad input changes nothing.
	if r := s.CLI("host", "pool", "set", "sim/sim-0", "Batch!"); r.Code == 0 || !strings.Contains(r.Stderr, "host_pool") {
		t.Fatalf("host pool set with a bad name: exit %d %s", r.Code, r.Stderr)
	}
	if r := s.CLI("host", "pool", "set", "sim/nope", "batch"); r.Code == 0 {
		t.Fatalf("host pool set of an unknown host: exit 0")
	}
	bad := writeFile(t, dir, "bad.yaml", "path: /bad\nhostPools: [batch, batch]\n")
	if r := s.CLI("pool", "create", "-f", bad); r.Code == 0 || !strings.Contains(r.Stderr, "hostPools[1]") {
		t.Fatalf("pool with a host pool named twice: exit %d %s", r.Code, r.Stderr)
	}

	// Two hosts in batch (one through HTTP), four in services.
	if code, body := s.HTTP("POST", "/v1/hosts/sim/sim-0:pool", `{"hostPool":"batch"}`); code != 200 || !strings.Contains(string(body), `"hostPool":"batch"`) {
		t.Fatalf("POST :pool: %d %s", code, body)
	}
	s.MustCLI("host", "pool", "set", "sim/sim-1", "batch")
	for _, h := range []string{"sim-2", "sim-3", "sim-4", "sim-5"} {
		s.MustCLI("host", "pool", "set", "sim/"+h, "services")
	}
	if out := s.MustCLI("host", "list"); !strings.Contains(out, "HOST POOL") || !strings.Contains(out, "services") {
		t.Fatalf("host list shows no host pools:\n%s", out)
	}
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "batch.yaml", "path: /batch\nreservation: {cpu: 4, memMb: 4096}\nhostPools: [batch]\n"))
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "services.yaml", "path: /services\nreservation: {cpu: 16, memMb: 16384}\nhostPools: [services]\n"))

	web := s.CreateJob(`{"name":"web","type":"JOB_TYPE_SERVICE","pool":"/services","instances":4,"sla":{"maxUnavailable":"1"},
		"task":{"command":"serve","resources":{"cpu":1,"memMb":16}}}`)
	waitFor(t, 20*time.Second, "4 web instances running", func() bool { return runningIn(t, s, web) == 4 })
	for _, tk := range s.Tasks(web) {
		if h := strings.TrimPrefix(tk.Host, "sim/"); h == "sim-0" || h == "sim-1" {
			t.Fatalf("web instance %d on batch host %s", tk.Instance, tk.Host)
		}
	}
	avail := sampleRunning(s, web, 4)

	// Batch demand: 16 one-core tasks, 8 cores of batch hosts.
	start := time.Now()
	batch := s.CreateJob(`{"name":"crunch","pool":"/batch","instances":16,"preemptible":true,
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"8s"},"resources":{"cpu":1,"memMb":16}}}`)
	waitFor(t, 10*time.Second, "a batch task pending outside its host pools", func() bool {
		for _, tk := range s.TaskList(batch) {
			if strings.Contains(tk.Message, "not in host pools [batch]") {
				return true
			}
		}
		return false
	})
	waitFor(t, 10*time.Second, "a service host draining for batch", func() bool {
		_, moves := hostPools(t, s)
		for _, m := range moves {
			if m.Phase == "HOST_POOL_MOVE_PHASE_DRAINING" && m.To == "batch" {
				return true
			}
		}
		return false
	})
	drainStarted := time.Since(start)
	var pools map[string][]string
	waitFor(t, 20*time.Second, "two service hosts moved to batch", func() bool {
		pools, _ = hostPools(t, s)
		return len(pools["batch"]) == 4 && len(pools["services"]) == 2
	})
	toBatch := time.Since(start)
	waitFor(t, 20*time.Second, "16 batch tasks running", func() bool { return runningIn(t, s, batch) == 16 })
	if out := s.MustCLI("task", "get", web, "0"); strings.Contains(out, "not in host pools") {
		t.Errorf("a web task is pending for host pools:\n%s", out)
	}
	_, moves := hostPools(t, s)
	drained := 0
	for _, m := range moves {
		if m.Phase == "HOST_POOL_MOVE_PHASE_DRAINING" && m.To == "batch" {
			drained++
		}
	}
	if drained != 2 {
		t.Errorf("%d service hosts drained for batch, want 2 (all four ran a web instance): %+v", drained, moves)
	}
	s.WaitJob(batch, "JOB_STATE_SUCCEEDED", time.Minute)

	// Service demand: 6 two-core instances; the two service hosts have 4
	// cores free.
	start = time.Now()
	api := s.CreateJob(`{"name":"api","type":"JOB_TYPE_SERVICE","pool":"/services","instances":6,
		"task":{"command":"serve","resources":{"cpu":2,"memMb":16}}}`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		// Two hosts at least (how many depends on how the service
		// instances are spread); batch keeps its floor.
		if pools, _ = hostPools(t, s); len(pools["services"]) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch hosts not moved back to services after 20s:\n%s\n%s\n%s", s.MustCLI("host", "pool", "list"),
				s.MustCLI("task", "list", api), s.MustCLI("host", "list"))
		}
	}
	toServices := time.Since(start)
	if n := len(pools["batch"]); n < 1 {
		t.Errorf("batch went below its floor of 1: %v", pools)
	}
	waitFor(t, 20*time.Second, "6 api instances running", func() bool { return runningIn(t, s, api) == 6 })
	minWeb, samples, errs := avail()
	if minWeb < 3 {
		t.Errorf("web had %d instances running at worst, below its SLA (4 instances, maxUnavailable 1)", minWeb)
	}
	if samples < 10 {
		t.Errorf("only %d availability samples (%d errors)", samples, errs)
	}
	out := s.MustCLI("host", "pool", "list")
	for _, want := range []string{"batch", "services", "Recent moves", "MOVED", "DRAINING", "every 1s"} {
		if !strings.Contains(out, want) {
			t.Errorf("host pool list does not show %q:\n%s", want, out)
		}
	}
	t.Logf("host pools: first drain for batch after %s, to batch in %s (2 hosts, drained under the SLA), back to services in %s (%d idle hosts); policy period %s; web ran >= %d/4 over %d samples",
		drainStarted.Round(10*time.Millisecond), toBatch.Round(10*time.Millisecond), toServices.Round(10*time.Millisecond), len(pools["services"])-2, period, minWeb, samples)
	// The job's tasks must first be tried and found waiting; then the
	// next pass of the policy drains.
	if drainStarted > period+3*time.Second {
		t.Errorf("the first drain for batch came after %s, more than one policy period (%s) and slack", drainStarted, period)
	}
	if toBatch > 2*period+8*time.Second {
		t.Errorf("moving to batch took %s", toBatch)
	}
	if toServices > period+3*time.Second {
		t.Errorf("moving idle hosts back took %s, more than one policy period (%s) and slack", toServices, period)
	}

	// Host pools and moves are kept across a restart.
	before, _ := hostPools(t, s)
	s.Stop()
	s = startDev(t, filepath.Join(dir, "data"), append(flags, "--host-pool-period", "off")...)
	after, moves := hostPools(t, s)
	if strings.Join(after["batch"], " ") != strings.Join(before["batch"], " ") || strings.Join(after["services"], " ") != strings.Join(before["services"], " ") {
		t.Errorf("host pools after a restart:\n%v\nbefore:\n%v", after, before)
	}
	if len(moves) < 4 {
		t.Errorf("%d recent moves after a restart: %+v", len(moves), moves)
	}
}
