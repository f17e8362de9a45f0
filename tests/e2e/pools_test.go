package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type poolResource struct {
	Name        string  `json:"name"`
	Reservation float64 `json:"reservation"`
	Demand      float64 `json:"demand"`
	Allocation  float64 `json:"allocation"`
	Entitlement float64 `json:"entitlement"`
}

func poolCPU(t *testing.T, s *server, path string) poolResource {
	t.Helper()
	out := s.MustCLI("pool", "get", path, "-o", "json")
	var p struct {
		Resources []poolResource `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("pool get %s: %v: %s", path, err, out)
	}
	for _, r := range p.Resources {
		if r.Name == "cpu" {
			return r
		}
	}
	t.Fatalf("pool get %s: no cpu figures: %s", path, out)
	return poolResource{}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runningIn(t *testing.T, s *server, job string) int {
	n := 0
	for _, tk := range s.Tasks(job) {
		if tk.State == "TASK_STATE_RUNNING" {
			n++
		}
	}
	return n
}

// Three pools share 100 simulated cores. Pool /a starts alone and takes the
// whole cluster with preemptible work; then /b submits, and within two
// entitlement periods /a is preempted down to its entitlement (50/50 split
// after reservations of 20 each), which `pool get` shows.
func TestCrossPoolPreemption(t *testing.T) {
	dir := t.TempDir()
	const period = time.Second
	s := startDev(t, filepath.Join(dir, "data"), "--hosts", "sim", "--sim-hosts", "10", "--sim-cpu", "10",
		"--sim-mem", "100000", "--entitlement-period", period.String())
	for _, p := range []string{"a", "b", "c"} {
		f := writeFile(t, dir, p+".yaml", fmt.Sprintf("path: /%s\nreservation: {cpu: 20, memMb: 20000}\n", p))
		s.MustCLI("pool", "create", "-f", f)
	}
	// Bad pools are refused with the pool path and the field.
	bad := writeFile(t, dir, "bad.yaml", "path: /a/x\nreservation: {cpu: 30}\n")
	if r := s.CLI("pool", "create", "-f", bad); r.Code == 0 || !strings.Contains(r.Stderr, "/a") || !strings.Contains(r.Stderr, "cpu.reservation") {
		t.Fatalf("over-reserving child accepted or unclear: exit %d: %s", r.Code, r.Stderr)
	}
	if r := s.CLI("pool", "delete", "/"); r.Code == 0 {
		t.Fatal("root pool deleted")
	}

	job := func(pool string, n int) string {
		return fmt.Sprintf(`{"name":"%s-work","pool":"/%s","preemptible":true,"instances":%d,
			"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":100}}}`, pool, pool, n)
	}
	a := s.CreateJob(job("a", 100))
	waitFor(t, 20*time.Second, "pool /a to hold the whole cluster", func() bool { return runningIn(t, s, a) == 100 })
	if r := s.CLI("pool", "delete", "/a"); r.Code == 0 {
		t.Fatal("pool with a running job deleted")
	}

	start := time.Now()
	b := s.CreateJob(job("b", 50))
	var preemptedAfter time.Duration
	waitFor(t, 4*period+5*time.Second, "pool /a preempted down to its entitlement", func() bool {
		fa := poolCPU(t, s, "/a")
		if fa.Entitlement > 0 && fa.Entitlement < 100 && fa.Allocation <= fa.Entitlement+1e-9 && runningIn(t, s, a) <= int(fa.Entitlement) {
			preemptedAfter = time.Since(start)
			return true
		}
		return false
	})
	t.Logf("pool /a back within its entitlement %s after /b submitted (entitlement period %s)", preemptedAfter.Round(10*time.Millisecond), period)
	if preemptedAfter > 2*period+time.Second {
		t.Errorf("preemption took %s, more than two entitlement periods (%s) plus a second of slack", preemptedAfter, 2*period)
	}
	waitFor(t, 10*time.Second, "pool /b running its share", func() bool { return runningIn(t, s, b) == 50 })
	fa, fb := poolCPU(t, s, "/a"), poolCPU(t, s, "/b")
	if math.Abs(fa.Entitlement-50) > 1e-6 || math.Abs(fb.Entitlement-50) > 1e-6 {
		t.Fatalf("entitlements a=%v b=%v, want 50/50", fa.Entitlement, fb.Entitlement)
	}
	if fa.Demand != 100 || fa.Allocation != 50 || fb.Allocation != 50 {
		t.Fatalf("figures: a=%+v b=%+v", fa, fb)
	}
	if n := runningIn(t, s, a); n != 50 {
		t.Fatalf("/a runs %d tasks, want 50", n)
	}
	preempted := 0
	for _, tk := range s.Tasks(a) {
		if tk.Run > 1 {
			preempted++
		}
	}
	if preempted != 50 {
		t.Fatalf("%d tasks of /a were preempted and re-queued, want 50", preempted)
	}
	out := s.MustCLI("task", "list", a)
	if !strings.Contains(out, "PREEMPTED") {
		t.Fatalf("task list does not show PREEMPTED:\n%s", out)
	}
	t.Logf("pool get /a:\n%s", s.MustCLI("pool", "get", "/a"))
}

// A non-preemptible job asking beyond its pool's reservation stays pending
// beyond it; a gang that does not fit runs not at all.
func TestReservationAndGangs(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, filepath.Join(dir, "data"), "--hosts", "sim", "--sim-hosts", "4", "--sim-cpu", "4", "--sim-mem", "100000")
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "p.yaml", "path: /prod\nreservation: {cpu: 6, memMb: 50000}\n"))
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "b.yaml", "path: /batch\n"))
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "o.yaml", "path: /other\n"))
	prod := s.CreateJob(`{"name":"prod","pool":"/prod","instances":10,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":100}}}`)
	waitFor(t, 10*time.Second, "6 prod tasks running", func() bool { return runningIn(t, s, prod) == 6 })
	time.Sleep(500 * time.Millisecond)
	if n := runningIn(t, s, prod); n != 6 {
		t.Fatalf("non-preemptible job runs %d tasks beyond its reservation of 6", n)
	}
	// 10 cores left in the cluster; a gang of 12 one-core tasks cannot fit,
	// and holds nothing while it waits: a gang of 4 elsewhere runs.
	gang := s.CreateJob(`{"name":"gang","pool":"/batch","preemptible":true,"instances":12,"gangSize":12,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":100}}}`)
	small := s.CreateJob(`{"name":"small","pool":"/other","preemptible":true,"instances":4,"gangSize":4,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"2s"},"resources":{"cpu":1,"memMb":100}}}`)
	s.WaitJob(small, "JOB_STATE_SUCCEEDED", 15*time.Second)
	for _, tk := range s.Tasks(gang) {
		switch tk.State {
		case "TASK_STATE_PENDING", "TASK_STATE_READY", "TASK_STATE_INITIALIZED":
		default:
			t.Fatalf("a member of the gang that does not fit is %s", tk.State)
		}
	}
}
