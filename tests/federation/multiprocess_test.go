package federation

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// health is each region's health as m sees it.
func health(t testing.TB, m *member) map[string]string {
	t.Helper()
	h, err := m.Regions()
	if err != nil {
		t.Fatalf("regions at %s: %v", m.region, err)
	}
	return h
}

// Three regions, one `peloton server` each, on 127.0.0.1–3: routing of a
// pinned job, the global split of a pool, and the loss of a whole region by
// SIGKILL — detected, its relocatable jobs finished elsewhere, and after it
// restarts no job runs in two regions.
func TestThreeRegions(t *testing.T) {
	fed := startFederation(t, "a", "b", "c")
	a, b, c := fed["a"], fed["b"], fed["c"]
	waitFor(t, 30*time.Second, "every region alive at a", func() bool {
		h := health(t, a)
		return h["a"] == "alive" && h["b"] == "alive" && h["c"] == "alive"
	})

	// Pools are defined once for the federation (created at a, applied in
	// every region); jobs go to leaf pools.
	for _, p := range []string{`{"path":"/p","reservation":{"cpu":100,"memMb":1000}}`, `{"path":"/work"}`} {
		if code, body := a.HTTP("POST", "/v1/pools", p); code != 200 {
			t.Fatalf("create pool: %d %s", code, body)
		}
	}

	// Submitted at a, pinned to b: b runs it, and a answers for it.
	pinned, servedBy := a.CreateJobAt(`{"name":"pinned","region":"b","pool":"/work","instances":2,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":10}}}`)
	if servedBy != "b" {
		t.Fatalf("pinned job served by %q, want b", servedBy)
	}
	var got struct{ Job testkit.Job }
	a.JSON("GET", "/v1/jobs/"+pinned, "", &got)
	if got.Job.Status.Region != "b" {
		t.Fatalf("job pinned to b is in region %q", got.Job.Status.Region)
	}

	// The global pass: pool /p reserves 100 cpu for the federation; a wants
	// 80, b 10 → a's share ≥ 80, b's ≥ 10, together 100.
	a.CreateJob(`{"name":"p-a","pool":"/p","region":"a","preemptible":true,"instances":80,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":1}}}`)
	a.CreateJob(`{"name":"p-b","pool":"/p","region":"b","preemptible":true,"instances":10,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"1h"},"resources":{"cpu":1,"memMb":1}}}`)
	var split map[string]float64
	waitFor(t, 20*time.Second, "the global split of /p", func() bool {
		var out struct {
			Pool struct {
				Regions []struct {
					Region      string `json:"region"`
					Reservation struct {
						CPU float64 `json:"cpu"`
					} `json:"reservation"`
				} `json:"regions"`
			} `json:"pool"`
		}
		a.JSON("GET", "/v1/pools/p?regions=true", "", &out)
		split = map[string]float64{}
		for _, r := range out.Pool.Regions {
			split[r.Region] = r.Reservation.CPU
		}
		return split["a"] >= 80 && split["b"] >= 10
	})
	if sum := split["a"] + split["b"] + split["c"]; math.Abs(sum-100) > 1e-6 {
		t.Fatalf("split of /p: %v, sums to %v, want 100", split, sum)
	}
	t.Logf("global split of /p (100 cpu): %v", split)
	// Each shard runs on its region's share.
	waitFor(t, 20*time.Second, "b's shard using its share of /p", func() bool {
		var out struct {
			Pool struct {
				Resources []struct {
					Name        string  `json:"name"`
					Reservation float64 `json:"reservation"`
				} `json:"resources"`
			} `json:"pool"`
		}
		b.JSON("GET", "/v1/pools/p", "", &out)
		for _, r := range out.Pool.Resources {
			if r.Name == "cpu" {
				return math.Abs(r.Reservation-split["b"]) < 1
			}
		}
		return false
	})

	// Relocatable work in c, then c dies.
	var originals []string
	for i := 0; i < 2; i++ {
		id := a.CreateJob(fmt.Sprintf(`{"name":"c-work-%d","region":"c","pool":"/work","preemptible":true,"failover":{"mode":"any"},"instances":6,"task":{"command":"sim","env":{"PELOTON_SIM_DURATION":"3s"},"resources":{"cpu":1,"memMb":10}}}`, i))
		originals = append(originals, id)
	}
	waitFor(t, 10*time.Second, "c's jobs running", func() bool {
		n := 0
		for _, j := range c.Jobs() {
			if j.Status.Region == "c" && j.Status.State == "JOB_STATE_RUNNING" {
				n++
			}
		}
		return n == 2
	})
	killed := time.Now()
	c.kill()
	detected := waitFor(t, 30*time.Second, "c declared failed at a and b", func() bool {
		return health(t, a)["c"] == "failed" && health(t, b)["c"] == "failed"
	})
	t.Logf("c declared failed %.1fs after SIGKILL (fail-after 3s)", detected.Seconds())
	if detected > 15*time.Second {
		t.Errorf("detection took %s, beyond the configured bound", detected)
	}
	relocatedDone := waitFor(t, 60*time.Second, "c's jobs re-created and finished in a or b", func() bool {
		done := 0
		for _, j := range a.Jobs() {
			if strings.HasPrefix(j.Spec.Labels["peloton.relocated-from"], "") && j.Spec.Labels["peloton.relocated-from"] != "" &&
				j.Status.State == "JOB_STATE_SUCCEEDED" && j.Status.Region != "c" {
				done++
			}
		}
		return done == 2
	})
	t.Logf("relocated jobs finished %.1fs after the kill", time.Since(killed).Seconds())
	_ = relocatedDone

	// c comes back: it must not run the originals again.
	c.start()
	waitFor(t, 30*time.Second, "c alive again at a", func() bool { return health(t, a)["c"] == "alive" })
	waitFor(t, 30*time.Second, "c's originals stopped", func() bool {
		states := map[string]string{}
		for _, j := range c.Jobs() {
			states[j.ID] = j.Status.State
		}
		for _, id := range originals {
			if s := states[id]; s != "JOB_STATE_KILLED" && s != "JOB_STATE_SUCCEEDED" {
				return false
			}
		}
		return true
	})
	for _, j := range a.Jobs() {
		for _, id := range originals {
			if j.ID == id && j.Status.State == "JOB_STATE_RUNNING" {
				t.Fatalf("original job %s runs again in %s after the relocation", id, j.Status.Region)
			}
		}
	}

	// Regions talk mutual TLS: none refused another, and b ran the job
	// pinned to it as the admin who created it at a, not as region a.
	for _, m := range []*member{a, b, c} {
		for _, line := range strings.Split(m.proc.Output(), "\n") {
			if strings.Contains(line, "msg=audit") && (strings.Contains(line, "code=Unauthenticated") || strings.Contains(line, "code=PermissionDenied")) {
				t.Errorf("%s refused a call: %s", m.region, line)
			}
		}
	}
	if !strings.Contains(b.proc.Output(), "who=admin authn=token rpc=/peloton.v1.JobService/CreateJob action=create-job resource=\"pool /work, job name pinned\" code=OK forwarded_by=a") {
		t.Errorf("b's audit log lacks the pinned job created by admin, forwarded by a")
	}
}
