package testkit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SLAScenario is the service-under-SLA scenario every host manager must
// pass, through the real binary: a service whose instances are sampled
// every 100 ms by the test while a rolling update and drains of several
// of its hosts run at the same time. Never more instances may be
// unavailable than the job's SLA allows, and both must finish.
type SLAScenario struct {
	// Bin is the peloton binary; Addr the server's API address.
	Bin  string
	Addr string
	// Dir holds the spec files.
	Dir string
	// Spec is the job spec in YAML with one %s where the update changes
	// the value of an environment variable ("1", then "2").
	Spec string
	// Instances and MaxUnavailable are the job's.
	Instances      int
	MaxUnavailable int
	// BatchSize of the update.
	BatchSize int
	// Drain names the hosts to drain while the update runs; empty: the
	// hosts of the first instances once the job runs.
	Drain      []string
	DrainCount int
	// Within bounds the whole scenario.
	Within time.Duration
}

// SLAResult is what the scenario measured.
type SLAResult struct {
	Job            string
	MaxUnavailable int
	Samples        int
	Duration       time.Duration
	Drained        []string
}

func (sc *SLAScenario) cli(t testing.TB, args ...string) string {
	t.Helper()
	r := CLI{Bin: sc.Bin, Addr: sc.Addr}.Run(args...)
	if r.Code != 0 {
		t.Fatalf("peloton %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

func (sc *SLAScenario) tasks(job string) ([]Task, error) {
	var out struct{ Tasks []Task }
	err := (&API{URL: "http://" + sc.Addr}).Get("/v1/jobs/"+job+"/tasks", &out)
	return out.Tasks, err
}

func (sc *SLAScenario) hostState(t testing.TB, host string) string {
	var list struct {
		Hosts []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"hosts"`
	}
	out := sc.cli(t, "host", "list", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("host list: %v\n%s", err, out)
	}
	for _, h := range list.Hosts {
		if h.ID == host {
			return strings.TrimPrefix(h.State, "HOST_STATE_")
		}
	}
	return ""
}

// Run creates the job, waits until every instance is available, then
// starts the update and the drains together and samples availability
// every 100 ms until the update succeeded and every drained host is
// DRAINED. It fails the test when more instances were unavailable than
// the SLA allows at any sample.
func (sc *SLAScenario) Run(t testing.TB) SLAResult {
	t.Helper()
	v1 := filepath.Join(sc.Dir, "sla-v1.yaml")
	v2 := filepath.Join(sc.Dir, "sla-v2.yaml")
	if err := os.WriteFile(v1, []byte(fmt.Sprintf(sc.Spec, "1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, []byte(fmt.Sprintf(sc.Spec, "2")), 0o644); err != nil {
		t.Fatal(err)
	}
	job := strings.TrimSpace(sc.cli(t, "job", "create", "-f", v1))
	res := SLAResult{Job: job}
	allUp := func() bool { return sc.allAvailable(job) }
	WaitFor(t, sc.Within, fmt.Sprintf("%d instances available", sc.Instances), allUp)
	drain := sc.hostsToDrain(job)
	res.Drained = drain

	// The sampler runs from before the first disruption to the end.
	api := &API{T: t, URL: "http://" + sc.Addr}
	stopSampling := Sample(api, job, 100*time.Millisecond, func(ts []Task) {
		down := sc.Instances
		for _, tk := range ts {
			if int(tk.Instance) < sc.Instances && tk.Available() {
				down--
			}
		}
		res.MaxUnavailable = max(res.MaxUnavailable, down)
	})

	start := time.Now()
	var upd struct {
		ID string `json:"id"`
	}
	out := sc.cli(t, "job", "update", job, "-f", v2, "--batch-size", fmt.Sprint(sc.BatchSize), "-o", "json")
	if err := json.Unmarshal([]byte(out), &upd); err != nil {
		t.Fatalf("job update: %v\n%s", err, out)
	}
	for _, h := range drain {
		sc.cli(t, "host", "drain", h, "--reason", "sla scenario")
	}
	WaitFor(t, sc.Within, "update succeeded and hosts drained", func() bool {
		if !sc.updateSucceeded(t, upd.ID) {
			return false
		}
		for _, h := range drain {
			if sc.hostState(t, h) != "DRAINED" {
				return false
			}
		}
		return allUp()
	})
	res.Duration = time.Since(start)
	samples, failed := stopSampling()
	res.Samples = samples
	if samples == 0 {
		t.Fatalf("sampling failed: %d reads of the tasks, none answered", failed)
	}
	ts, err := sc.tasks(job)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		for _, h := range drain {
			if tk.HostID() == h {
				t.Errorf("instance %d still on drained host %s", tk.Instance, h)
			}
		}
	}
	t.Logf("SLA scenario: %d instances, maxUnavailable %d, batch %d, %d hosts drained: max unavailable observed %d over %d samples, %s",
		sc.Instances, sc.MaxUnavailable, sc.BatchSize, len(drain), res.MaxUnavailable, res.Samples, res.Duration.Round(time.Millisecond))
	fmt.Printf("SLA scenario: max unavailable %d (SLA %d), %d samples every 100ms, update + %d drains took %s\n",
		res.MaxUnavailable, sc.MaxUnavailable, res.Samples, len(drain), res.Duration.Round(time.Millisecond))
	if res.MaxUnavailable > sc.MaxUnavailable {
		t.Errorf("%d instances unavailable at once; the SLA allows %d", res.MaxUnavailable, sc.MaxUnavailable)
	}
	return res
}

// allAvailable reports whether every instance of job is available.
func (sc *SLAScenario) allAvailable(job string) bool {
	ts, err := sc.tasks(job)
	if err != nil || len(ts) != sc.Instances {
		return false
	}
	for _, tk := range ts {
		if !tk.Available() {
			return false
		}
	}
	return true
}

// hostsToDrain is sc.Drain, or else the first DrainCount (at least one)
// hosts the job's instances run on.
func (sc *SLAScenario) hostsToDrain(job string) []string {
	if len(sc.Drain) > 0 {
		return sc.Drain
	}
	var drain []string
	ts, _ := sc.tasks(job)
	seen := map[string]bool{}
	for _, tk := range ts {
		if h := tk.HostID(); !seen[h] && len(drain) < max(sc.DrainCount, 1) {
			seen[h] = true
			drain = append(drain, h)
		}
	}
	return drain
}

// updateSucceeded reports whether the update succeeded, and fails the
// test if it ended otherwise.
func (sc *SLAScenario) updateSucceeded(t testing.TB, id string) bool {
	var u struct {
		State   string `json:"state"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(sc.cli(t, "update", "get", id, "-o", "json")), &u); err != nil {
		return false
	}
	if u.State == "UPDATE_STATE_FAILED" || u.State == "UPDATE_STATE_ABORTED" || u.State == "UPDATE_STATE_ROLLED_BACK" {
		t.Fatalf("update ended %s: %s", u.State, u.Message)
	}
	return u.State == "UPDATE_STATE_SUCCEEDED"
}

// RunCanary, after Run, updates the job once more (the variable's value
// "3") with canaries: the lowest canaries instances move and the update
// waits for its promotion, every other instance staying on its config;
// promoted, the rest move. The job's availability is sampled every 100 ms
// throughout and must stay within its SLA.
func (sc *SLAScenario) RunCanary(t testing.TB, job string, canaries int) {
	t.Helper()
	v3 := filepath.Join(sc.Dir, "sla-v3.yaml")
	if err := os.WriteFile(v3, []byte(fmt.Sprintf(sc.Spec, "3")), 0o644); err != nil {
		t.Fatal(err)
	}
	api := &API{T: t, URL: "http://" + sc.Addr}
	worst := 0
	stop := Sample(api, job, 100*time.Millisecond, func(ts []Task) {
		down := sc.Instances
		for _, tk := range ts {
			if int(tk.Instance) < sc.Instances && tk.Available() {
				down--
			}
		}
		worst = max(worst, down)
	})
	var upd struct {
		ID            string `json:"id"`
		ToVersion     string `json:"toVersion"`
		FromVersion   string `json:"fromVersion"`
		State         string `json:"state"`
		Message       string `json:"message"`
		CanariesReady uint32 `json:"canariesReady"`
	}
	getUpdate := func() {
		out := sc.cli(t, "update", "get", upd.ID, "-o", "json")
		if err := json.Unmarshal([]byte(out), &upd); err != nil {
			t.Fatalf("update get: %v\n%s", err, out)
		}
	}
	start := time.Now()
	out := sc.cli(t, "job", "update", job, "-f", v3, "--batch-size", fmt.Sprint(sc.BatchSize), "--canary", fmt.Sprint(canaries), "-o", "json")
	if err := json.Unmarshal([]byte(out), &upd); err != nil {
		t.Fatalf("job update --canary: %v\n%s", err, out)
	}
	WaitFor(t, sc.Within, "the canaries on the new config, waiting for promotion", func() bool {
		getUpdate()
		return strings.Contains(upd.Message, "waiting for promotion")
	})
	waited := time.Since(start)
	ts, err := sc.tasks(job)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, tk := range ts {
		switch {
		case int(tk.Instance) < canaries && tk.ConfigVersion != upd.ToVersion:
			t.Errorf("canary instance %d on config %s, want %s", tk.Instance, tk.ConfigVersion, upd.ToVersion)
		case int(tk.Instance) >= canaries && tk.ConfigVersion == upd.ToVersion:
			moved++
		}
	}
	if moved > 0 {
		t.Errorf("%d instances besides the canaries moved before the promotion", moved)
	}
	sc.cli(t, "update", "promote", upd.ID)
	WaitFor(t, sc.Within, "the promoted update succeeded", func() bool {
		getUpdate()
		if upd.State == "UPDATE_STATE_ROLLED_BACK" || upd.State == "UPDATE_STATE_FAILED" || upd.State == "UPDATE_STATE_ABORTED" {
			t.Fatalf("canary update ended %s: %s", upd.State, upd.Message)
		}
		return upd.State == "UPDATE_STATE_SUCCEEDED"
	})
	samples, _ := stop()
	t.Logf("canary: %d canaries waiting for promotion after %s, all %d instances on config %s %s later; max unavailable %d (SLA %d) over %d samples",
		canaries, waited.Round(time.Millisecond), sc.Instances, upd.ToVersion, (time.Since(start) - waited).Round(time.Millisecond), worst, sc.MaxUnavailable, samples)
	if worst > sc.MaxUnavailable {
		t.Errorf("%d instances unavailable at once during the canary update; the SLA allows %d", worst, sc.MaxUnavailable)
	}
}
