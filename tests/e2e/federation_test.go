package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// Three regions in one process (`peloton dev --regions 3`), found by each
// other through gossip: a job pinned to west and submitted at east's gateway
// runs in west; a drill fails central, whose relocatable jobs move and run
// elsewhere, and after healing no job runs in two regions.
func TestFederationDrill(t *testing.T) {
	s := startDev(t, t.TempDir(), "--regions", "3", "--hosts", "sim,hosts=5,duration=1h",
		"--suspect-after", "1s", "--fail-after", "2s", "--recover-after", "1s")
	waitFor(t, 20*time.Second, "three regions alive", func() bool {
		out := s.MustCLI("region", "list", "-o", "json")
		return strings.Count(out, `"health": "alive"`) == 3
	})

	pinned := s.Call("POST", "/v1/jobs", `{"name":"pinned","region":"west","instances":2,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`)
	if got := pinned.Header.Get("Grpc-Metadata-Peloton-Region"); pinned.Code != 200 || got != "west" {
		t.Fatalf("pinned job: status %d, served by %q, want west", pinned.Code, got)
	}

	// Jobs the federation places (central wins ties by name) are replicated
	// and relocatable.
	var moving []string
	for i := 0; i < 2; i++ {
		moving = append(moving, s.CreateJob(`{"name":"moving","region":"central","failover":{"mode":"any"},"instances":3,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`))
	}
	waitFor(t, 10*time.Second, "jobs running", func() bool {
		n := 0
		for _, j := range s.Jobs() {
			if j.Status.State == "JOB_STATE_RUNNING" {
				n++
			}
		}
		return n == 3
	})
	plan := s.MustCLI("region", "plan", "central")
	if strings.Count(plan, "fits") != 2 {
		t.Fatalf("region plan for central does not relocate both jobs:\n%s", plan)
	}

	// While central is cut off, its job is answered from its replica,
	// which says where the work went.
	drill := make(chan testkit.Result, 1)
	go func() {
		drill <- s.Peloton.Run("drill", "region-failure", "--region", "central", "--duration", "6s", "--wait", "-o", "json")
	}()
	sawMove := ""
	for deadline := time.Now().Add(30 * time.Second); sawMove == "" && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if out := s.Peloton.Run("job", "get", moving[0]).Stdout; strings.Contains(out, "cannot answer") && strings.Contains(out, "Moved to:") {
			sawMove = out
		}
	}
	if sawMove == "" {
		t.Error("job get of a job in the failed region never said where it was relocated")
	}
	movedTo := field(sawMove, "Moved to")
	t.Logf("during the failure: moved to %s", movedTo)
	r := <-drill
	if r.Code != 0 {
		t.Fatalf("drill: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
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
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("drill report: %v\n%s", err, r.Stdout)
	}
	t.Logf("drill: detection %.1fs, relocation %.1fs, failback %.1fs, moved %d", d.DetectionSeconds, d.RelocationSeconds, d.FailbackSeconds, len(d.Moved))
	if d.State != "completed" || d.DetectionSeconds <= 0 || d.RelocationSeconds <= 0 || len(d.Moved) != 2 {
		t.Fatalf("drill report: %+v", d)
	}
	// After failback: the originals are stopped, their relocated copies run,
	// and the pinned job still runs in west.
	states := map[string]string{}
	relocated := 0
	for _, j := range s.Jobs() {
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
	// Back and stopped, the original still says where its work went; the
	// copy says where it came from.
	orig := s.MustCLI("job", "get", moving[0])
	if got := field(orig, "Moved to"); got == "" || !strings.HasPrefix(got, strings.SplitN(movedTo, ",", 2)[0]) {
		t.Errorf("job get %s after the drill: moved to %q, during it %q\n%s", moving[0], got, movedTo, orig)
	}
	copyID := strings.TrimSuffix(strings.Fields(movedTo + " - - - - -")[4], ",") // region R as job ID, time
	if got := field(s.MustCLI("job", "get", copyID), "Moved from"); !strings.HasPrefix(got, "region central from job "+moving[0]) {
		t.Errorf("job get %s (the copy): moved from %q", copyID, got)
	}
	if !strings.Contains(s.MustCLI("drill", "list"), "completed") {
		t.Error("drill list does not show the drill")
	}

	// The operator fails back: the relocated copies stop, the work runs in
	// central again.
	out := s.MustCLI("region", "failback", "central")
	if strings.Count(out, "back as") != 2 {
		t.Fatalf("failback did not move both jobs back:\n%s", out)
	}
	waitFor(t, 20*time.Second, "the work back in central, copies stopped", func() bool {
		back, copies := 0, 0
		for _, j := range s.Jobs() {
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
	// The original now says its work is back in central.
	if got := field(s.MustCLI("job", "get", moving[0]), "Moved to"); !strings.HasPrefix(got, "region central as job ") {
		t.Errorf("job get %s after failback: moved to %q", moving[0], got)
	}
}

// field reads the value of "Key:  value" in job get's output.
func field(out, key string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
