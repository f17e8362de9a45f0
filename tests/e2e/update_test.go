package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

type updateJSON struct {
	ID              string `json:"id"`
	State           string `json:"state"`
	InstancesDone   uint32 `json:"instancesDone"`
	InstancesFailed uint32 `json:"instancesFailed"`
	Paused          bool   `json:"paused"`
	Message         string `json:"message"`
	ToVersion       string `json:"toVersion"`
}

// runningOnConfig counts a job's tasks running on a config version.
func runningOnConfig(t *testing.T, s *server, job, config string) int {
	t.Helper()
	n := 0
	for _, tk := range s.Tasks(job) {
		if tk.ConfigVersion == config && tk.State == "TASK_STATE_RUNNING" {
			n++
		}
	}
	return n
}

func getUpdate(t *testing.T, s *server, id string) updateJSON {
	t.Helper()
	var u updateJSON
	if err := json.Unmarshal([]byte(s.MustCLI("update", "get", id, "-o", "json")), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

const sloService = `name: slo
type: service
instances: 6
sla: {maxUnavailable: 2}
task:
  command: sim
  env: {V: "%s"%s}
  healthCheck: {command: ["true"]}
  resources: {cpu: 0.5, memMb: 16}
`

// An update to a config whose health check fails rolls back by itself
// (--rollback-on-failure); a good update can be started paused, resumed,
// and rolled back by hand, through the CLI and over HTTP.
func TestUpdateRollbackPauseResume(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=3,cpu=4,mem=8192,duration=1h")
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "v1.yaml", fmt.Sprintf(sloService, "1", ""))))
	waitFor(t, 20*time.Second, "6 running", func() bool { return runningIn(t, s, job) == 6 })

	hosts := map[uint32]string{}
	for _, tk := range s.Tasks(job) {
		hosts[tk.Instance] = tk.Host
	}
	bad := writeFile(t, dir, "bad.yaml", fmt.Sprintf(sloService, "2", `, PELOTON_SIM_HEALTH: unhealthy`))
	r := s.CLI("job", "update", job, "-f", bad, "--batch-size", "2", "--max-failures", "1", "--rollback-on-failure", "--in-place", "--wait", "--timeout", "60s")
	if r.Code != 2 || !strings.Contains(r.Stderr, "ROLLED_BACK") {
		t.Fatalf("update to a failing config: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	waitFor(t, 30*time.Second, "every instance back on config 1 and running", func() bool { return runningOnConfig(t, s, job, "1") == 6 })
	// In place: forward and back, every instance stayed on its host.
	movedTwice := 0
	for _, tk := range s.Tasks(job) {
		if tk.Host != hosts[tk.Instance] {
			t.Errorf("instance %d: run %d on %s after the rollback, was on %s", tk.Instance, tk.Run, tk.Host, hosts[tk.Instance])
		}
		if tk.Run >= 3 {
			movedTwice++ // restarted onto the failing config and back
		}
	}
	if movedTwice < 2 {
		t.Errorf("%d instances went forward and back; the first batch of 2 should have", movedTwice)
	}

	good := writeFile(t, dir, "good.yaml", fmt.Sprintf(sloService, "3", ""))
	out := s.MustCLI("job", "update", job, "-f", good, "--batch-size", "1", "--start-paused", "-o", "json")
	var u updateJSON
	if err := json.Unmarshal([]byte(out), &u); err != nil || !u.Paused {
		t.Fatalf("start-paused update: %v %s", err, out)
	}
	time.Sleep(500 * time.Millisecond) // a paused update must not move in this time
	if got := getUpdate(t, s, u.ID); got.InstancesDone != 0 || got.Message != "paused" {
		t.Fatalf("paused update moved: %+v", got)
	}
	// Rolled back while paused: nothing had moved; the job is back on config 1.
	s.MustCLI("update", "rollback", u.ID)
	waitFor(t, 20*time.Second, "rolled back", func() bool { return getUpdate(t, s, u.ID).State == "UPDATE_STATE_ROLLED_BACK" })

	// Over HTTP: resume a paused update, which then succeeds; pausing it
	// once it ended is refused with 400.
	out = s.MustCLI("job", "update", job, "-f", good, "--batch-size", "1", "--start-paused", "-o", "json")
	if err := json.Unmarshal([]byte(out), &u); err != nil || !u.Paused {
		t.Fatalf("start-paused update: %v %s", err, out)
	}
	code, body := s.HTTP("POST", "/v1/updates/"+u.ID+":resume", `{}`)
	if code != 200 {
		t.Fatalf("resume over HTTP: %d %s", code, body)
	}
	waitFor(t, 30*time.Second, "resumed update succeeded", func() bool { return getUpdate(t, s, u.ID).State == "UPDATE_STATE_SUCCEEDED" })
	code, body = s.HTTP("POST", "/v1/updates/"+u.ID+":pause", `{}`)
	if code != 400 || !strings.Contains(string(body), "not the job's running update") {
		t.Fatalf("pause of an ended update over HTTP: %d %s", code, body)
	}
	if r := s.CLI("update", "rollback", u.ID); r.Code == 0 {
		t.Fatalf("rollback of an ended update accepted: %s", r.Stdout)
	}

	// Abort, over HTTP and through the CLI; a batch size of 0 is refused.
	if r := s.CLI("job", "update", job, "-f", good, "--batch-size", "0"); r.Code != 1 || !strings.Contains(r.Stderr, "batch_size") {
		t.Fatalf("batch size 0: exit %d %s", r.Code, r.Stderr)
	}
	for _, via := range []string{"http", "cli"} {
		out = s.MustCLI("job", "update", job, "-f", writeFile(t, dir, via+".yaml", fmt.Sprintf(sloService, via, "")), "--batch-size", "1", "--start-paused", "-o", "json")
		if err := json.Unmarshal([]byte(out), &u); err != nil {
			t.Fatal(err)
		}
		if via == "http" {
			if code, body := s.HTTP("POST", "/v1/updates/"+u.ID+":abort", `{}`); code != 200 {
				t.Fatalf("abort over HTTP: %d %s", code, body)
			}
		} else {
			s.MustCLI("update", "abort", u.ID)
		}
		if got := getUpdate(t, s, u.ID); got.State != "UPDATE_STATE_ABORTED" {
			t.Fatalf("aborted through %s: %+v", via, got)
		}
	}
}
