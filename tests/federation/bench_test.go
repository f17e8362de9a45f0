package federation

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFailover measures, for a region running 10,000 tasks that is
// killed with SIGKILL, how long until the others declare it failed and
// until all its tasks run again elsewhere, with the default (WAN) settings
// and with settings tuned for a fast link. Not run in CI:
//
//	go test -run '^$' -bench Failover -benchtime 1x ./tests/federation
func BenchmarkFailover(b *testing.B) {
	configs := []struct {
		name string
		tune fedTuning
	}{
		{"default", fedTuning{profile: "wan", suspect: "5s", fail: "30s", recover: "30s"}},
		{"tuned", fedTuning{profile: "local", suspect: "1s", fail: "3s", recover: "1s"}},
	}
	const jobs, perJob = 10, 1000
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			c.tune.hosts = "sim,hosts=40,cpu=8,mem=65536,duration=1h"
			fed := startFederationWith(b, c.tune, "a", "b", "c")
			a, victim := fed["a"], fed["c"]
			waitFor(b, 120*time.Second, "every region alive", func() bool {
				h := health(b, a)
				return h["a"] == "alive" && h["b"] == "alive" && h["c"] == "alive"
			})
			for i := 0; i < jobs; i++ {
				a.CreateJob(fmt.Sprintf(`{"name":"w%d","region":"c","preemptible":true,"failover":{"mode":"any"},"instances":%d,"task":{"command":"sim","resources":{"cpu":0.01,"memMb":1}}}`, i, perJob))
			}
			waitFor(b, 120*time.Second, "10,000 tasks running in c", func() bool { return running(b, victim, "c") == jobs*perJob })
			// Progress is replicated every few seconds; let it settle.
			time.Sleep(6 * time.Second)
			b.ResetTimer()
			killed := time.Now()
			victim.kill()
			detect := waitFor(b, 5*time.Minute, "c declared failed", func() bool { return health(b, a)["c"] == "failed" })
			waitFor(b, 5*time.Minute, "10,000 tasks running again elsewhere", func() bool {
				return running(b, a, "a")+running(b, fed["b"], "b") >= jobs*perJob
			})
			relocate := time.Since(killed)
			b.StopTimer()
			b.ReportMetric(detect.Seconds(), "detect-s")
			b.ReportMetric(relocate.Seconds(), "relocate-s")
			b.Logf("%s: failure detected after %.1fs, 10,000 tasks running elsewhere after %.1fs", c.name, detect.Seconds(), relocate.Seconds())
		})
	}
}

// running counts the running tasks of a region's jobs, asked at m.
func running(t testing.TB, m *member, region string) int {
	n := 0
	for _, j := range m.Jobs() {
		if j.Status.Region == region && j.Status.State != "JOB_STATE_KILLED" {
			n += j.Status.TaskStates["RUNNING"]
		}
	}
	return n
}
