package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A host-sized task behind a churn of small tasks through the binary:
// ten sim hosts of 10 cores, each 9/10 full of one-core tasks of pool
// /small that end after 3-6s and are replaced; a 10-core task of pool
// /big fits no host. Past --reserve-hosts-after it waits for a reserved
// host ("job get" says which and what is left to free), then runs there.
func TestBigTaskRunsOnAReservedHost(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=10,cpu=10,mem=65536", "--reserve-hosts-after", "3s")
	for _, p := range []string{"path: /small\nreservation: {cpu: 90, memMb: 9000}\n", "path: /big\nreservation: {cpu: 10, memMb: 1000}\n"} {
		s.MustCLI("pool", "create", "-f", writeFile(t, dir, "pool.yaml", p))
	}
	var overrides strings.Builder
	for d := range 4 {
		var ids []string
		for i := d; i < 2000; i += 4 {
			ids = append(ids, fmt.Sprint(i))
		}
		fmt.Fprintf(&overrides, "  - instances: \"%s\"\n    task: {env: {PELOTON_SIM_DURATION: %ds}}\n", strings.Join(ids, ","), 3+d)
	}
	small := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "small.yaml", `name: small
pool: /small
instances: 2000
maxRunning: 90
maxPerHost: 9
task: {command: sim, resources: {cpu: 1, memMb: 64}}
overrides:
`+overrides.String())))
	waitFor(t, 60*time.Second, "the hosts 9/10 full", func() bool { return runningIn(t, s, small) == 90 })
	big := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "big.yaml", `name: big
pool: /big
instances: 1
task: {command: sim, env: {PELOTON_SIM_DURATION: 1h}, resources: {cpu: 10, memMb: 64}}
`)))
	created := time.Now()
	saw := ""
	waitFor(t, 90*time.Second, "the big task running", func() bool {
		if out := s.MustCLI("job", "get", big); strings.Contains(out, "waiting for reserved host") {
			saw = out
		}
		return runningIn(t, s, big) == 1
	})
	if !strings.Contains(saw, "cpu to free") {
		t.Errorf("job get never said the task waits for a reserved host")
	}
	for _, line := range strings.Split(saw, "\n") {
		if strings.HasPrefix(line, "Pending:") {
			t.Logf("%s; running %.1fs after it was created", line, time.Since(created).Seconds())
		}
	}
	if n := runningIn(t, s, small); n < 70 {
		t.Errorf("only %d small tasks run beside it", n)
	}
}
