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

// A multi-document YAML through the real binary: `peloton job create -f`
// sends it through CreateJobs in several requests, prints a line per job
// (the id, or why the server refused the spec, named by its place in the
// file) and exits non-zero for the refused ones; every accepted job runs
// to SUCCEEDED on the local host manager. The same request id sent again
// over HTTP creates nothing new.
func TestBatchCreateThroughTheCLI(t *testing.T) {
	s := startDev(t, t.TempDir())
	var docs []string
	const n = 24
	for i := range n {
		cpu := "0.05"
		if i == 7 {
			cpu = "100000" // larger than this machine: refused by the server
		}
		pool := "/"
		if i == 15 {
			pool = "/nowhere" // no such pool: refused by the server
		}
		docs = append(docs, fmt.Sprintf("name: batch-%02d\ninstances: 1\npool: %s\nlabels: {suite: batch}\ntask:\n  command: sh\n  args: [-c, 'echo job %d']\n  resources: {cpu: %s, memMb: 8}\n", i, pool, i, cpu))
	}
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := s.CLI("job", "create", "-f", path, "--batch-size", "10")
	if r.Code != 1 || !strings.Contains(r.Stderr, "2 of 24 jobs refused") {
		t.Fatalf("exit %d, want 1 with 2 refused:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines for %d documents:\n%s", len(lines), n, r.Stdout)
	}
	ids := map[string]string{} // id → name
	for i, line := range lines {
		switch i {
		case 7:
			if !strings.HasPrefix(line, "refused batch-07 (InvalidArgument): jobs[7].task.resources.cpu") {
				t.Errorf("line %d: %q", i, line)
			}
		case 15:
			if !strings.HasPrefix(line, "refused batch-15 (InvalidArgument): jobs[15].pool") {
				t.Errorf("line %d: %q", i, line)
			}
		default:
			if strings.Contains(line, " ") || ids[line] != "" {
				t.Fatalf("line %d: %q, want a new job id", i, line)
			}
			ids[line] = fmt.Sprintf("batch-%02d", i)
		}
	}
	// Every accepted job runs to the end, with its own name.
	testkit.WaitFor(t, 2*time.Minute, "every accepted job succeeds", func() bool {
		done := 0
		for _, j := range s.Jobs() {
			if name, ok := ids[j.ID]; ok {
				if j.Spec.Name != name {
					t.Fatalf("job %s is named %s, want %s", j.ID, j.Spec.Name, name)
				}
				if j.Status.State == "JOB_STATE_SUCCEEDED" {
					done++
				}
			}
		}
		return done == len(ids)
	})
	for id := range ids {
		tasks := s.Tasks(id)
		if len(tasks) != 1 || tasks[0].State != "TASK_STATE_SUCCEEDED" || tasks[0].Host == "" {
			t.Fatalf("job %s: tasks %+v, want one that ran and succeeded", id, tasks)
		}
	}
	if got := len(s.Jobs()); got != len(ids) {
		t.Fatalf("%d jobs stored, want the %d accepted", got, len(ids))
	}

	// Over HTTP, with a request id: a retry answers with the same ids and
	// creates nothing.
	body := `{"requestId":"e2e-retry","jobs":[{"name":"h1","instances":1,"task":{"command":"true","resources":{"cpu":0.05,"memMb":8}}},` +
		`{"name":"h2","instances":1,"task":{"command":"true","resources":{"cpu":0.05,"memMb":8}}}]}`
	type results struct {
		Results []struct {
			JobID    string `json:"jobId"`
			Code     int    `json:"code"`
			Existing bool   `json:"existing"`
		} `json:"results"`
	}
	var first, again results
	for _, out := range []*results{&first, &again} {
		code, raw := s.HTTP("POST", "/v1/jobs:batchCreate", body)
		if code != 200 {
			t.Fatalf("POST /v1/jobs:batchCreate: %d %s", code, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil || len(out.Results) != 2 {
			t.Fatalf("%v: %s", err, raw)
		}
	}
	for i := range first.Results {
		if first.Results[i].JobID == "" || first.Results[i].JobID != again.Results[i].JobID || first.Results[i].Existing || !again.Results[i].Existing {
			t.Fatalf("results[%d]: first %+v, retry %+v", i, first.Results[i], again.Results[i])
		}
	}
	if got := len(s.Jobs()); got != len(ids)+2 {
		t.Fatalf("%d jobs after the retry, want %d", got, len(ids)+2)
	}

	// The README's example file.
	out := s.MustCLI("job", "create", "-f", repoFile("examples", "several.yaml"))
	if got := strings.Count(strings.TrimSpace(out), "\n") + 1; got != 3 {
		t.Fatalf("examples/several.yaml: %d lines, want 3:\n%s", got, out)
	}
}
