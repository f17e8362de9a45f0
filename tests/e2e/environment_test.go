package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// TestTasksSeeNoServerEnvironment runs a task that prints its environment
// under a server whose environment holds secrets: the task sees only its
// spec's variables, PATH, HOME, PWD and the documented PELOTON_* and
// PORT_* ones, and no API answer shows the server's variables.
func TestTasksSeeNoServerEnvironment(t *testing.T) {
	const secret = "hunter2-server-only"
	t.Setenv("SERVER_ONLY_SECRET", secret)
	t.Setenv("PELOTON_E2E_SERVER_SECRET", secret) // a PELOTON_ name is no way in either
	s := startDev(t, filepath.Join(t.TempDir(), "data"))

	code, body := s.HTTP("POST", "/v1/jobs",
		`{"name":"env","instances":1,"task":{"command":"env","env":{"GREETING":"hi"},"resources":{"cpu":0.1,"memMb":16}}}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var created struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Job.ID
	testkit.WaitFor(t, time.Minute, "the job to succeed", func() bool {
		_, body := s.HTTP("GET", "/v1/jobs/"+id, "")
		return strings.Contains(string(body), "JOB_STATE_SUCCEEDED")
	})
	out := s.MustCLI("task", "logs", id, "0")

	names := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("not an environment line: %q\n%s", line, out)
		}
		names[name] = value
	}
	if names["GREETING"] != "hi" || names["PELOTON_SANDBOX"] == "" || names["PATH"] == "" {
		t.Errorf("the task lacks its own variables:\n%s", out)
	}
	for name := range names {
		switch {
		case name == "PATH", name == "HOME", name == "PWD", name == "GREETING":
		case strings.HasPrefix(name, "PORT_"):
		case strings.HasPrefix(name, "PELOTON_") && name != "PELOTON_E2E_SERVER_SECRET":
		default:
			t.Errorf("the task sees %s, which neither its spec nor the documented variables give", name)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("the task sees the server's secret:\n%s", out)
	}

	for _, path := range []string{"/v1/jobs/" + id, "/v1/jobs/" + id + "/config", "/v1/jobs/" + id + "/tasks/0",
		"/v1/jobs/" + id + "/events", "/v1/jobs?view=JOB_VIEW_FULL", "/v1/version", "/v1/hosts", "/v1/regions"} {
		code, body := s.HTTP("GET", path, "")
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		if strings.Contains(string(body), secret) || strings.Contains(string(body), "SERVER_ONLY_SECRET") {
			t.Errorf("GET %s shows the server's environment: %s", path, body)
		}
	}
}
