package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostState is the STATE column of a host's row in `peloton host list`.
func hostState(t *testing.T, s *server, id string) string {
	t.Helper()
	out := s.MustCLI("host", "list")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[len(f)-1] == id {
			return f[3]
		}
	}
	t.Fatalf("host %s not listed:\n%s", id, out)
	return ""
}

const serviceSpec = `name: web
type: service
instances: 6
task:
  command: serve
  env: {V: "%s"}
  resources: {cpu: 1, memMb: 16}
overrides:
  - instances: "5"
    task: {env: {ROLE: leader}, resources: {cpu: 2}}
`

// A service is rolled onto a new config two instances at a time; both
// configs stay readable; the history of every task, the update and a host
// drain are kept across a restart; a drained host takes no new work; an
// update that would shrink the job is refused and changes nothing.
func TestServiceUpdateDrainAndHistory(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=3,cpu=8,duration=1h")
	v1 := writeFile(t, dir, "v1.yaml", fmt.Sprintf(serviceSpec, "1"))
	id := strings.TrimSpace(s.MustCLI("job", "create", "-f", v1))
	waitFor(t, 30*time.Second, "6 instances running", func() bool { return runningIn(t, s, id) == 6 })

	v2 := writeFile(t, dir, "v2.yaml", fmt.Sprintf(serviceSpec, "2"))
	out := s.MustCLI("job", "update", id, "-f", v2, "--batch-size", "2", "--wait")
	if !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("job update --wait:\n%s", out)
	}
	waitFor(t, 30*time.Second, "6 running on config 2", func() bool {
		for _, tk := range s.Tasks(id) {
			if tk.ConfigVersion != "2" {
				return false
			}
		}
		return runningIn(t, s, id) == 6
	})
	if old := s.MustCLI("job", "config", id, "--version", "1"); !strings.Contains(old, `V: "1"`) || !strings.Contains(old, "leader") {
		t.Fatalf("config version 1:\n%s", old)
	}
	if cur := s.MustCLI("job", "config", id); !strings.Contains(cur, `V: "2"`) {
		t.Fatalf("current config:\n%s", cur)
	}
	history := s.MustCLI("job", "events", id, "--instance", "0", "--limit", "1000")
	if !strings.Contains(history, "RUNNING") || !strings.Contains(history, "UPDATED") {
		t.Fatalf("history of instance 0:\n%s", history)
	}

	// Shrinking is refused, naming the field; nothing changes.
	small := writeFile(t, dir, "small.yaml", strings.Replace(fmt.Sprintf(serviceSpec, "3"), "instances: 6", "instances: 2", 1))
	r := s.CLI("job", "update", id, "-f", small)
	if r.Code == 0 || !strings.Contains(r.Stderr, "instances") {
		t.Fatalf("shrinking update: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if list := s.MustCLI("update", "list", id); strings.Count(list, id+".") != 1 {
		t.Fatalf("a refused update was recorded:\n%s", list)
	}

	s.MustCLI("host", "drain", "sim/sim-0", "--reason", "disk swap")
	if st := hostState(t, s, "sim/sim-0"); st != "DRAINING" && st != "DRAINED" {
		t.Fatalf("drained host shows %s", st)
	}
	// The service's instances move off, one at a time (its SLA), and the
	// host ends DRAINED with the service whole elsewhere.
	waitFor(t, 30*time.Second, "host DRAINED, service running elsewhere", func() bool {
		if hostState(t, s, "sim/sim-0") != "DRAINED" || runningIn(t, s, id) != 6 {
			return false
		}
		for _, tk := range s.Tasks(id) {
			if tk.Host == "sim/sim-0" {
				return false
			}
		}
		return true
	})
	s.Stop()

	s2 := startDev(t, dir, "--hosts", "sim,hosts=3,cpu=8,duration=1h")
	waitFor(t, 30*time.Second, "hosts reported", func() bool { return strings.Contains(s2.MustCLI("host", "list"), "sim/sim-2") })
	if st := hostState(t, s2, "sim/sim-0"); st != "DRAINED" {
		t.Fatalf("after a restart the drained host shows %s", st)
	}
	if list := s2.MustCLI("update", "list", id); !strings.Contains(list, "SUCCEEDED") {
		t.Fatalf("updates after a restart:\n%s", list)
	}
	if again := s2.MustCLI("job", "events", id, "--instance", "0", "--limit", "1000"); !strings.Contains(again, "UPDATED") {
		t.Fatalf("history after a restart:\n%s", again)
	}
	batch := writeFile(t, dir, "batch.yaml", "name: b\ninstances: 8\ntask: {command: x, resources: {cpu: 1, memMb: 16}}\n")
	b := strings.TrimSpace(s2.MustCLI("job", "create", "-f", batch))
	waitFor(t, 30*time.Second, "batch job running", func() bool { return runningIn(t, s2, b) == 8 })
	for _, tk := range s2.Tasks(b) {
		if tk.Host == "sim/sim-0" {
			t.Fatalf("instance %d placed on the drained host", tk.Instance)
		}
	}
}

// A 100,000-instance job with an override per instance is accepted,
// stored, runs to completion and its config reads back whole.
func TestHundredThousandInstanceOverrides(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=40,cpu=64,mem=65536,duration=1s")
	spec := map[string]any{
		"name":      "sharded",
		"instances": n,
		"task":      map[string]any{"command": "work", "resources": map[string]any{"cpu": 0.01, "memMb": 1}},
	}
	ovs := make([]any, n)
	for i := range ovs {
		ovs[i] = map[string]any{"instances": fmt.Sprint(i), "task": map[string]any{
			"env": map[string]string{"SHARD": fmt.Sprintf("shard-%06d", i)}, "args": []string{"--part", fmt.Sprint(i)}}}
	}
	spec["overrides"] = ovs
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sharded.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	id := strings.TrimSpace(s.MustCLI("job", "create", "-f", path))
	t.Logf("spec of %d overrides, %.1f MB, accepted in %s", n, float64(len(raw))/1e6, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	s.WaitJob(id, "JOB_STATE_SUCCEEDED", 5*time.Minute)
	took := time.Since(start)
	t.Logf("%d tasks succeeded %s after acceptance", n, took.Round(time.Millisecond))
	code, body := s.HTTP("GET", "/v1/jobs/"+id+"/config", "")
	var cfg struct {
		Spec struct {
			Overrides []struct {
				Instances string `json:"instances"`
				Task      struct {
					Env map[string]string `json:"env"`
				} `json:"task"`
			} `json:"overrides"`
		} `json:"spec"`
	}
	if code != 200 || json.Unmarshal(body, &cfg) != nil {
		t.Fatalf("GET config: %d %.300s", code, body)
	}
	if len(cfg.Spec.Overrides) != n {
		t.Fatalf("config read back with %d overrides, want %d", len(cfg.Spec.Overrides), n)
	}
	last := cfg.Spec.Overrides[n-1]
	if last.Instances != fmt.Sprint(n-1) || last.Task.Env["SHARD"] != fmt.Sprintf("shard-%06d", n-1) {
		t.Fatalf("last override read back as %+v", last)
	}
}
