package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ReservationScenario is the big-task-behind-a-churn scenario every host
// manager must pass, through the real binary started with
// --reserve-hosts-after: hosts of HostCPU cores, each full but one core
// of one-core tasks of pool /small (at most HostCPU-1 a host) that end
// after 3-6 s and are replaced from a queue; then a task of HostCPU
// cores in pool /big, which fits no host. It must wait for a reserved
// host ("job get" says which and what is left to free) and then run
// there, the small tasks going on beside it.
type ReservationScenario struct {
	Server *Server
	Dir    string
	// Hosts and HostCPU are the cluster's hosts and their cores.
	Hosts, HostCPU int
	// Task is the small and the big task's command, as YAML flow fields
	// ("command: sim"); DurationEnv the variable that sets how long a run
	// lasts on this host manager ("3s").
	Task, DurationEnv string
	Within            time.Duration
}

// Run runs the scenario and returns how long the big task waited.
func (sc *ReservationScenario) Run(t testing.TB) time.Duration {
	t.Helper()
	s := sc.Server
	write := func(name, body string) string {
		p := filepath.Join(sc.Dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	slots, room := sc.Hosts*(sc.HostCPU-1), sc.HostCPU
	s.MustCLI("pool", "create", "-f", write("small-pool.yaml", fmt.Sprintf("path: /small\nreservation: {cpu: %d, memMb: %d}\n", slots, slots*64)))
	s.MustCLI("pool", "create", "-f", write("big-pool.yaml", fmt.Sprintf("path: /big\nreservation: {cpu: %d, memMb: 1000}\n", room)))
	var overrides strings.Builder
	for d := range 4 {
		var ids []string
		for i := d; i < 2000; i += 4 {
			ids = append(ids, fmt.Sprint(i))
		}
		fmt.Fprintf(&overrides, "  - instances: %q\n    task: {env: {%s: %ds}}\n", strings.Join(ids, ","), sc.DurationEnv, 3+d)
	}
	small := strings.TrimSpace(s.MustCLI("job", "create", "-f", write("small.yaml", fmt.Sprintf(`name: small
pool: /small
instances: 2000
maxRunning: %d
maxPerHost: %d
task: {%s, resources: {cpu: 1, memMb: 64}}
overrides:
%s`, slots, sc.HostCPU-1, sc.Task, overrides.String()))))
	running := func(job string) int {
		n := 0
		for _, tk := range s.Tasks(job) {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		return n
	}
	WaitFor(t, sc.Within, fmt.Sprintf("the hosts full but one core (%d small tasks running)", slots), func() bool { return running(small) == slots })
	big := strings.TrimSpace(s.MustCLI("job", "create", "-f", write("big.yaml", fmt.Sprintf(`name: big
pool: /big
instances: 1
task: {%s, env: {%s: 1h}, resources: {cpu: %d, memMb: 64}}
`, sc.Task, sc.DurationEnv, sc.HostCPU))))
	created := time.Now()
	pending := ""
	WaitFor(t, sc.Within, "the big task running", func() bool {
		for _, line := range strings.Split(s.MustCLI("job", "get", big), "\n") {
			if strings.HasPrefix(line, "Pending:") && strings.Contains(line, "waiting for reserved host") {
				pending = strings.TrimSpace(strings.TrimPrefix(line, "Pending:"))
			}
		}
		return running(big) == 1
	})
	waited := time.Since(created)
	if !strings.Contains(pending, "cpu to free") {
		t.Errorf("job get never said the big task waits for a reserved host")
	}
	// The small tasks end every few seconds and are replaced: one look
	// may fall between an end and its replacement, so the most seen at
	// once over a few seconds is what runs beside the big task.
	small2 := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && small2 < slots-sc.HostCPU; time.Sleep(200 * time.Millisecond) {
		small2 = max(small2, running(small))
	}
	t.Logf("big task: %q; running %.1fs after it was created, %d small tasks running beside it (the most seen at once within 3s)", pending, waited.Seconds(), small2)
	if small2 < slots-sc.HostCPU {
		t.Errorf("only %d small tasks run beside the big one, want at least %d", small2, slots-sc.HostCPU)
	}
	return waited
}
