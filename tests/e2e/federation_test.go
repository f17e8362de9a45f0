package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Three regions in one process (`peloton dev --regions 3`), found by each
// other through gossip: a job pinned to west and submitted at east's gateway
// runs in west; a drill fails central, whose relocatable jobs move and run
// elsewhere, and after healing no job runs in two regions.
func TestFederationDrill(t *testing.T) {
	s := startDev(t, t.TempDir(), "--regions", "3", "--hosts", "sim,hosts=5,duration=1h",
		"--suspect-after", "1s", "--fail-after", "2s", "--recover-after", "1s")
	waitFor(t, 20*time.Second, "three regions alive", func() bool {
		out := s.mustCLI("region", "list", "-o", "json")
		return strings.Count(out, `"health": "alive"`) == 3
	})

	req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/jobs", strings.NewReader(
		`{"name":"pinned","region":"west","instances":2,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Grpc-Metadata-Peloton-Region"); resp.StatusCode != 200 || got != "west" {
		t.Fatalf("pinned job: status %d, served by %q, want west", resp.StatusCode, got)
	}

	// Jobs the federation places (central wins ties by name) are replicated
	// and relocatable.
	var moving []string
	for i := 0; i < 2; i++ {
		moving = append(moving, createJobHTTP(t, s, `{"name":"moving","region":"central","failover":{"mode":"any"},"instances":3,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`))
	}
	waitFor(t, 10*time.Second, "jobs running", func() bool {
		n := 0
		for _, j := range listJobs(t, s) {
			if j.Status.State == "JOB_STATE_RUNNING" {
				n++
			}
		}
		return n == 3
	})
	plan := s.mustCLI("region", "plan", "central")
	if strings.Count(plan, "fits") != 2 {
		t.Fatalf("region plan for central does not relocate both jobs:\n%s", plan)
	}

	r := s.cli("drill", "region-failure", "--region", "central", "--duration", "6s", "--wait", "-o", "json")
	if r.code != 0 {
		t.Fatalf("drill: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var d struct {
		State             string  `json:"state"`
		DetectionSeconds  float64 `json:"detectionSeconds"`
		RelocationSeconds float64 `json:"relocationSeconds"`
		FailbackSeconds   float64 `json:"failbackSeconds"`
		Moved             []struct {
			JobID    string `json:"jobId"`
			ToRegion string `json:"toRegion"`
		} `json:"moved"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("drill report: %v\n%s", err, r.stdout)
	}
	t.Logf("drill: detection %.1fs, relocation %.1fs, failback %.1fs, moved %d", d.DetectionSeconds, d.RelocationSeconds, d.FailbackSeconds, len(d.Moved))
	if d.State != "completed" || d.DetectionSeconds <= 0 || d.RelocationSeconds <= 0 || len(d.Moved) != 2 {
		t.Fatalf("drill report: %+v", d)
	}
	// After failback: the originals are stopped, their relocated copies run,
	// and the pinned job still runs in west.
	states := map[string]string{}
	relocated := 0
	for _, j := range listJobs(t, s) {
		states[j.ID] = j.Status.State
		if j.Spec.Name == "moving" && j.Status.State == "JOB_STATE_RUNNING" {
			relocated++
		}
	}
	for _, id := range moving {
		if states[id] != "JOB_STATE_KILLED" {
			t.Errorf("original %s is %s after failback, want KILLED", id, states[id])
		}
	}
	if relocated != 2 {
		t.Errorf("%d relocated copies running, want 2", relocated)
	}
	if !strings.Contains(s.mustCLI("drill", "list"), "completed") {
		t.Error("drill list does not show the drill")
	}

	// The operator fails back: the relocated copies stop, the work runs in
	// central again.
	out := s.mustCLI("region", "failback", "central")
	if strings.Count(out, "back as") != 2 {
		t.Fatalf("failback did not move both jobs back:\n%s", out)
	}
	waitFor(t, 20*time.Second, "the work back in central, copies stopped", func() bool {
		back, copies := 0, 0
		for _, j := range listJobs(t, s) {
			if j.Spec.Name != "moving" {
				continue
			}
			switch {
			case j.Status.State == "JOB_STATE_RUNNING" && j.Status.Region == "central":
				back++
			case j.Status.State == "JOB_STATE_RUNNING":
				copies++
			}
		}
		return back == 2 && copies == 0
	})
}
