package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The README's tour: hello job with --wait, its logs, the same job via HTTP,
// the OpenAPI document; then a restart on the same data dir keeps it all.
func TestHelloTourAndRestart(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir)

	s.MustCLI("job", "create", "-f", repoFile("examples", "hello.yaml"), "--wait")
	jobs := s.Jobs()
	if len(jobs) != 1 || jobs[0].Status.State != "JOB_STATE_SUCCEEDED" {
		t.Fatalf("jobs after --wait: %+v", jobs)
	}
	id := jobs[0].ID

	logs := s.MustCLI("task", "logs", id, "0")
	if !strings.Contains(logs, "Hello") {
		t.Fatalf("task logs do not show the task's output: %q", logs)
	}

	// The logs of a run that never was are not found (they were a 500).
	if code, body := s.HTTP("GET", "/v1/jobs/"+id+"/tasks/0/logs?run=7", ""); code != 404 {
		t.Errorf("logs of run 7 of a task that ran once: %d %s, want 404", code, body)
	}

	code, body := s.HTTP("GET", "/v1/jobs/"+id, "")
	if code != 200 {
		t.Fatalf("GET /v1/jobs/%s: %d %s", id, code, body)
	}
	var got struct{ Job testkit.Job }
	if err := json.Unmarshal(body, &got); err != nil || got.Job.Status.State != "JOB_STATE_SUCCEEDED" {
		t.Fatalf("GET /v1/jobs/%s: %v %s", id, err, body)
	}

	code, body = s.HTTP("GET", "/v1/openapi.json", "")
	var doc map[string]any
	if code != 200 || json.Unmarshal(body, &doc) != nil || doc["paths"] == nil {
		t.Fatalf("openapi.json: %d, parses=%v", code, json.Unmarshal(body, &doc))
	}
	if _, ok := doc["paths"].(map[string]any)["/v1/jobs/{id}"]; !ok {
		t.Fatalf("openapi.json lacks /v1/jobs/{id}")
	}
	for _, p := range []string{"/healthz", "/metrics"} {
		if code, _ := s.HTTP("GET", p, ""); code != 200 {
			t.Fatalf("GET %s: %d", p, code)
		}
	}

	// A long job left running across the restart, and the finished one.
	longID := s.CreateJob(`{"name":"long","instances":2,"task":{"command":"sh","args":["-c","sleep 3; echo done"],"resources":{"cpu":0.1,"memMb":16}}}`)
	waitFor(t, 20*time.Second, "long job running", func() bool {
		n := 0
		for _, tk := range s.Tasks(longID) {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		return n == 2
	})
	before := s.Tasks(id)
	s.Stop()

	s2 := startDev(t, dir)
	jobs2 := s2.Jobs()
	if len(jobs2) != 2 {
		t.Fatalf("after restart: %d jobs, want 2", len(jobs2))
	}
	after := s2.Tasks(id)
	if len(after) != len(before) || after[0].State != before[0].State || after[0].Run != before[0].Run {
		t.Fatalf("tasks changed across restart:\nbefore %+v\nafter  %+v", before, after)
	}
	if !strings.Contains(s2.MustCLI("task", "logs", id, "0"), "Hello") {
		t.Fatal("logs lost across restart")
	}
	// The running tasks were adopted, not forgotten or run twice.
	s2.WaitJob(longID, "JOB_STATE_SUCCEEDED", 30*time.Second)
	for _, tk := range s2.Tasks(longID) {
		if tk.Run != 1 {
			t.Errorf("instance %d ran %d times; want the run adopted", tk.Instance, tk.Run)
		}
	}
}

// A 1,000-instance job of `true` completes on the local host manager and
// never has more than maxRunning tasks running at once (watched through the
// event stream).
func TestThousandTasksHonourMaxRunning(t *testing.T) {
	s := startDev(t, t.TempDir())
	const maxRunning = 50
	id := s.CreateJob(`{"name":"thousand","instances":1000,"maxRunning":50,"task":{"command":"true","resources":{"cpu":0.01,"memMb":8}}}`)

	resp, err := http.Get("http://" + s.Addr + "/v1/events?jobId=" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	active := map[uint32]bool{} // instances between pending and running
	peak, final := 0, ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	deadline := time.Now().Add(4 * time.Minute)
	for final == "" && sc.Scan() {
		if time.Now().After(deadline) {
			t.Fatal("job did not finish within 4 minutes")
		}
		var ev struct {
			Result struct {
				Job  *struct{ State string } `json:"job"`
				Task *testkit.Task           `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event: %v: %s", err, sc.Bytes())
		}
		if tk := ev.Result.Task; tk != nil {
			switch tk.State {
			case "TASK_STATE_PENDING", "TASK_STATE_READY", "TASK_STATE_PLACING", "TASK_STATE_PLACED", "TASK_STATE_LAUNCHING", "TASK_STATE_RUNNING":
				active[tk.Instance] = true
			default:
				delete(active, tk.Instance)
			}
			peak = max(peak, len(active))
		}
		if j := ev.Result.Job; j != nil && (j.State == "JOB_STATE_SUCCEEDED" || j.State == "JOB_STATE_FAILED" || j.State == "JOB_STATE_KILLED") {
			final = j.State
		}
	}
	if final != "JOB_STATE_SUCCEEDED" {
		t.Fatalf("job ended %q (scan err %v)", final, sc.Err())
	}
	if peak > maxRunning {
		t.Fatalf("peak of %d tasks active at once, maxRunning is %d", peak, maxRunning)
	}
	if peak < maxRunning/2 {
		t.Errorf("peak of %d active tasks: maxRunning %d was barely used", peak, maxRunning)
	}
	t.Logf("1000 tasks succeeded; peak active %d (maxRunning %d)", peak, maxRunning)
	tasks := s.Tasks(id)
	if len(tasks) != 1000 {
		t.Fatalf("%d tasks listed", len(tasks))
	}
	for _, tk := range tasks {
		if tk.State != "TASK_STATE_SUCCEEDED" {
			t.Fatalf("instance %d is %s", tk.Instance, tk.State)
		}
	}
}

// A spec with a negative cpu, a bad image, a port name used twice, a
// volume on a batch job and an unknown field is rejected with every path, through the CLI and over HTTP, and nothing
// is stored.
func TestInvalidSpecRejected(t *testing.T) {
	s := startDev(t, t.TempDir())
	r := s.CLI("job", "create", "-f", repoFile("examples", "invalid.yaml"))
	if r.Code == 0 {
		t.Fatalf("invalid spec accepted: %s", r.Stdout)
	}
	for _, path := range []string{"task.resources.cpu", "task.container.image", "task.sleep", "task.ports[1].name", "task.volumes"} {
		if !strings.Contains(r.Stderr, path) {
			t.Errorf("CLI error does not name %s:\n%s", path, r.Stderr)
		}
	}
	code, body := s.HTTP("POST", "/v1/jobs", `{"name":"bad","instances":1,"task":{"colour":"red","resources":{"cpu":-1,"memMb":8}}}`)
	if code != http.StatusBadRequest {
		t.Fatalf("HTTP status %d, want 400: %s", code, body)
	}
	for _, path := range []string{"task.resources.cpu", "task.command", "task.colour"} {
		if !strings.Contains(string(body), path) {
			t.Errorf("HTTP error does not name %s: %s", path, body)
		}
	}
	if jobs := s.Jobs(); len(jobs) != 0 {
		t.Fatalf("invalid specs stored %d jobs", len(jobs))
	}
}

// A failing command is retried up to maxAttempts and the job ends FAILED;
// `job create --wait` exits non-zero.
func TestFailingJobRetriesThenFails(t *testing.T) {
	s := startDev(t, t.TempDir())
	id := s.CreateJob(`{"name":"fails","instances":1,"maxAttempts":2,"task":{"command":"sh","args":["-c","echo boom >&2; exit 3"],"resources":{"cpu":0.1,"memMb":8}}}`)
	s.WaitJob(id, "JOB_STATE_FAILED", 30*time.Second)
	tk := s.Tasks(id)[0]
	if tk.State != "TASK_STATE_FAILED" || tk.ExitCode != 3 || tk.Run != 2 {
		t.Fatalf("task after failures: %+v (want FAILED, exit 3, run 2)", tk)
	}
	if !strings.Contains(s.MustCLI("task", "logs", id, "0", "--stderr"), "boom") {
		t.Fatal("stderr of the failed run not readable")
	}
}
