package e2e

import (
	"bufio"

	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is one line of the Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// scrape reads /metrics.
func scrape(t *testing.T, s *server) []sample {
	t.Helper()
	code, body := s.HTTP("GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	var out []sample
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsable metrics line %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			labels[p[1]] = p[2]
		}
		out = append(out, sample{name: m[1], labels: labels, value: v})
	}
	return out
}

// value is the sum of the samples of name whose labels include want.
func value(ss []sample, name string, want map[string]string) (float64, bool) {
	sum, found := 0.0, false
outer:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for k, v := range want {
			if s.labels[k] != v {
				continue outer
			}
		}
		sum += s.value
		found = true
	}
	return sum, found
}

// The scheduler's metrics on the preemption example: /a takes the whole
// cluster, /b submits, /a's entitlement falls to its share and 50 of its
// gangs are preempted; every family says so.
func TestSchedulerMetrics(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, filepath.Join(dir, "data"), "--hosts", "sim", "--sim-hosts", "10", "--sim-cpu", "10",
		"--sim-mem", "100000", "--entitlement-period", "1s")
	s.MustCLI("pool", "create", "-f", repoFile("examples", "pool-a.yaml"))
	s.MustCLI("pool", "create", "-f", repoFile("examples", "pool-b.yaml"))
	a := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "preemptible-a.yaml")))
	waitFor(t, 20*time.Second, "pool /a to hold the whole cluster", func() bool { return runningIn(t, s, a) == 100 })

	cpu := func(pool string) map[string]string { return map[string]string{"pool": pool, "resource": "cpu_cores"} }
	before := scrape(t, s)
	if v, _ := value(before, "peloton_resmgr_pool_entitlement_amount", cpu("/a")); v != 100 {
		t.Fatalf("entitlement of /a alone = %v cores, want 100", v)
	}
	if v, _ := value(before, "peloton_jobmgr_tasks", map[string]string{"pool": "/a", "state": "RUNNING"}); v != 100 {
		t.Fatalf("running tasks of /a = %v, want 100", v)
	}

	s.MustCLI("job", "create", "-f", repoFile("examples", "preemptible-b.yaml"))
	var after []sample
	waitFor(t, 15*time.Second, "metrics to show /a preempted to its share", func() bool {
		after = scrape(t, s)
		ea, _ := value(after, "peloton_resmgr_pool_entitlement_amount", cpu("/a"))
		rb, _ := value(after, "peloton_jobmgr_tasks", map[string]string{"pool": "/b", "state": "RUNNING"})
		return ea == 50 && rb == 50
	})

	checks := []struct {
		name   string
		labels map[string]string
		ok     func(v float64) bool
		want   string
	}{
		{"peloton_jobmgr_tasks", map[string]string{"pool": "/a", "state": "PENDING"}, eq(50), "50 of /a pending again"},
		{"peloton_jobmgr_updates_in_progress", nil, eq(0), "0"},
		{"peloton_jobmgr_fenced_bool", nil, eq(0), "0"},
		{"peloton_resmgr_queue_gangs", map[string]string{"pool": "/a"}, eq(50), "50 gangs of /a queued"},
		{"peloton_resmgr_parked_gangs", map[string]string{"pool": "/a"}, eq(0), "0"},
		{"peloton_resmgr_admitted_gangs", map[string]string{"pool": "/b"}, eq(50), "50"},
		{"peloton_resmgr_queue_wait_seconds_count", map[string]string{"pool": "/b"}, eq(50), "50 admissions in /b"},
		{"peloton_resmgr_pool_reservation_amount", cpu("/a"), eq(20), "20 cores"},
		{"peloton_resmgr_pool_demand_amount", cpu("/a"), eq(100), "100 cores"},
		{"peloton_resmgr_pool_allocation_amount", cpu("/b"), eq(50), "50 cores"},
		{"peloton_resmgr_pool_entitlement_amount", cpu("/b"), eq(50), "50 cores"},
		{"peloton_resmgr_preemptions_total", map[string]string{"reason": "over_entitlement"}, eq(50), "50"},
		{"peloton_placement_passes_total", nil, gt(1), "> 1"},
		{"peloton_placement_pass_duration_seconds_count", nil, gt(1), "> 1"},
		{"peloton_placement_placed_tasks_total", nil, eq(150), "150 (100 of /a, 50 of /b; the preempted wait)"},
		{"peloton_hostmgr_launches_total", map[string]string{"cluster": "sim"}, eq(150), "150"},
		{"peloton_hostmgr_launch_failures_total", map[string]string{"cluster": "sim"}, eq(0), "0"},
		{"peloton_hostmgr_hosts", map[string]string{"cluster": "sim", "state": "UP"}, eq(10), "10"},
		{"peloton_store_op_duration_seconds_count", map[string]string{"op": "write_pass"}, gt(0), "> 0"},
		{"peloton_jobmgr_pass_part_duration_seconds_count", map[string]string{"part": "step"}, gt(0), "> 0"},
		{"peloton_jobmgr_pass_part_duration_seconds_count", map[string]string{"part": "write"}, gt(0), "> 0"},
		{"peloton_store_op_errors_total", map[string]string{"op": "write_pass"}, eq(0), "0"},
		{"peloton_lease_leader_bool", nil, eq(1), "1"},
		{"peloton_lease_term", nil, geq(0), "present"},
		{"peloton_api_requests_total", nil, gt(0), "> 0"},
	}
	for _, c := range checks {
		v, found := value(after, c.name, c.labels)
		if !found {
			t.Errorf("%s%v: missing from /metrics", c.name, c.labels)
			continue
		}
		if !c.ok(v) {
			t.Errorf("%s%v = %v, want %s", c.name, c.labels, v, c.want)
		}
	}
	for _, smp := range after {
		if _, ok := smp.labels["job"]; ok {
			t.Errorf("%s has a job label: metrics must not grow with jobs", smp.name)
		}
	}
	ea0, _ := value(before, "peloton_resmgr_pool_entitlement_amount", cpu("/a"))
	ea1, _ := value(after, "peloton_resmgr_pool_entitlement_amount", cpu("/a"))
	t.Logf("entitlement of /a: %v cores alone, %v once /b wants its share", ea0, ea1)
}

// The federation's families on two regions in one process: health, gossip
// members, calls forwarded between the gateways, replicas and pool shares.
func TestFederationMetrics(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, filepath.Join(dir, "data"), "--regions", "2", "--hosts", "sim,hosts=2,duration=1h")
	waitFor(t, 20*time.Second, "two regions alive", func() bool {
		return strings.Count(s.MustCLI("region", "list", "-o", "json"), `"health": "alive"`) == 2
	})
	s.MustCLI("pool", "create", "-f", repoFile("examples", "pool-a.yaml"))
	// A job for west, through east's gateway: forwarded.
	spec := writeFile(t, dir, "west.yaml", `{"name":"w","region":"west","pool":"/a","instances":1,"type":"service",
		"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":0.5,"memMb":10}}}`)
	s.MustCLI("job", "create", "-f", spec)
	var ss []sample
	waitFor(t, 30*time.Second, "federation metrics", func() bool {
		ss = scrape(t, s)
		alive, _ := value(ss, "peloton_federation_region_health_bool", map[string]string{"peer": "west", "health": "alive"})
		members, _ := value(ss, "peloton_federation_gossip_members", map[string]string{"status": "alive"})
		fwd, _ := value(ss, "peloton_federation_forwarded_calls_total", nil)
		_, share := value(ss, "peloton_federation_pool_share_amount", map[string]string{"pool": "/a", "bound": "reservation", "resource": "cpu_cores"})
		_, replicas := value(ss, "peloton_federation_replica_age_seconds", map[string]string{"owner": "west"})
		return alive == 1 && members == 2 && fwd > 0 && share && replicas
	})
	age, _ := value(ss, "peloton_federation_replica_age_seconds", map[string]string{"owner": "west"})
	if age < 0 || age > 60 {
		t.Errorf("replica age of west = %vs", age)
	}
	t.Logf("west's replicas arrived %.1fs before the scrape", age)
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }
func gt(min float64) func(float64) bool  { return func(v float64) bool { return v > min } }
func geq(min float64) func(float64) bool { return func(v float64) bool { return v >= min } }
