package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// migrationRun moves a service of n instances from simulated cluster a to
// simulated cluster b with `migrate start --wait`, after timing a plain
// rolling update of the same job with the same batch, both through the
// binary, and returns the two durations.
func migrationRun(tb testing.TB, n int, percent int) (update, migrate time.Duration) {
	dir := tb.TempDir()
	hosts := max(n/25, 4) // 25 half-core instances per 16-core host, on each side
	s := startDev(tb, dir, "--hosts", fmt.Sprintf("sim:a,hosts=%d,cpu=16,mem=65536,duration=1h", hosts),
		"--hosts", fmt.Sprintf("sim:b,hosts=%d,cpu=16,mem=65536,duration=1h", hosts))
	spec := func(v string) string {
		return fmt.Sprintf(`name: moved
type: service
instances: %d
sla: {maxUnavailable: "%d%%"}
clusters: {prefer: [a]}
task:
  command: sim
  env: {V: "%s"}
  resources: {cpu: 0.5, memMb: 16}
`, n, percent, v)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", write("v1.yaml", spec("1"))))
	testkit.WaitFor(tb, 5*time.Minute, "all running on a", func() bool { return countRunning(tb, s, job, "a") == n })
	batch := fmt.Sprint(max(n*percent/100, 1))

	start := time.Now()
	s.MustCLI("job", "update", job, "-f", write("v2.yaml", spec("2")), "--batch-size", batch, "--wait", "--timeout", "30m")
	update = time.Since(start)

	start = time.Now()
	s.MustCLI("migrate", "start", "--job", job, "--to", "b", "--batch-size", batch, "--wait", "--timeout", "30m")
	migrate = time.Since(start)
	if got := countRunning(tb, s, job, "b"); got != n {
		tb.Fatalf("%d of %d instances running on b after the migration", got, n)
	}
	return update, migrate
}

// countRunning counts the job's running instances on cluster.
func countRunning(tb testing.TB, s *server, job, cluster string) int {
	var out struct {
		Tasks []struct {
			State   string `json:"state"`
			Cluster string `json:"cluster"`
		} `json:"tasks"`
	}
	code, body := s.HTTP("GET", "/v1/jobs/"+job+"/tasks?limit=100000", "")
	if code != 200 {
		return -1
	}
	if err := json.Unmarshal(body, &out); err != nil {
		tb.Fatal(err)
	}
	c := 0
	for _, t := range out.Tasks {
		if t.State == "TASK_STATE_RUNNING" && t.Cluster == cluster {
			c++
		}
	}
	return c
}

// A small migration between two simulated clusters, beside a rolling update
// of the same job: both finish, every instance ends on the target.
func TestMigrationBesideRollingUpdate(t *testing.T) {
	update, migrate := migrationRun(t, 40, 20)
	t.Logf("40 instances, maxUnavailable 20%%: rolling update %s, migration %s (%.2f× the update)",
		update.Round(time.Millisecond), migrate.Round(time.Millisecond), migrate.Seconds()/update.Seconds())
}

// BenchmarkMigration prints instances moved per second for 1,000 instances
// at maxUnavailable 5% and 20%, against a plain rolling update of the same
// job in the same run (make bench-migrate).
func BenchmarkMigration(b *testing.B) {
	for _, pct := range []int{5, 20} {
		b.Run(fmt.Sprintf("1000-instances-%d%%", pct), func(b *testing.B) {
			for range b.N {
				update, migrate := migrationRun(b, 1000, pct)
				b.ReportMetric(1000/migrate.Seconds(), "moved/s")
				b.ReportMetric(1000/update.Seconds(), "updated/s")
				b.ReportMetric(migrate.Seconds()/update.Seconds(), "migration/update")
				fmt.Printf("1000 instances, maxUnavailable %d%%: migration %s (%.0f moved/s), rolling update %s (%.0f/s), ratio %.2f\n",
					pct, migrate.Round(time.Millisecond), 1000/migrate.Seconds(), update.Round(time.Millisecond), 1000/update.Seconds(),
					migrate.Seconds()/update.Seconds())
			}
		})
	}
}
