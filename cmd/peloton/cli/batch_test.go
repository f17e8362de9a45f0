package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSplitDocuments(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		docs  []string
		lines []int
	}{
		{"one document", "name: a\n", []string{"name: a\n"}, []int{1}},
		{"a leading marker", "---\nname: a\n", []string{"name: a\n"}, []int{2}},
		{"two", "name: a\n---\nname: b\n", []string{"name: a\n", "name: b\n"}, []int{1, 3}},
		{"markers with comments, blank and comment-only documents", "# header\n--- # first\nname: a\n---\n\n# nothing\n---\nname: b\n---\n",
			[]string{"name: a\n", "name: b\n"}, []int{3, 8}},
		{"not markers", "name: a\nargs: [\"---\"]\n---x: 1\n  ---\n", []string{"name: a\nargs: [\"---\"]\n---x: 1\n  ---\n"}, []int{1}},
		{"CRLF", "name: a\r\n---\r\nname: b\r\n", []string{"name: a\r\n", "name: b\r\n"}, []int{1, 3}},
		{"no final newline", "name: a\n---\nname: b", []string{"name: a\n", "name: b"}, []int{1, 3}},
		{"empty", "", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, lines := splitDocuments([]byte(c.in))
			var got []string
			for _, d := range docs {
				got = append(got, string(d))
			}
			if fmt.Sprintf("%q %v", got, lines) != fmt.Sprintf("%q %v", c.docs, c.lines) {
				t.Fatalf("got %q at lines %v, want %q at %v", got, lines, c.docs, c.lines)
			}
		})
	}
}

// writeSpecs writes a multi-document YAML of the given documents.
func writeSpecs(t *testing.T, docs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func doc(name, outcome string) string {
	return fmt.Sprintf("name: %s\ninstances: 1\nlabels: {outcome: %s}\ntask:\n  command: echo\n  resources: {cpu: 0.5, memMb: 64}\n", name, outcome)
}

// A multi-document file goes through CreateJobs in requests of
// --batch-size: one line per document, the id or why the server refused
// it (named by its place in the file), a non-zero exit when any was
// refused; -o json prints the results.
func TestJobCreateMultiDocument(t *testing.T) {
	f := startFakeServer(t)
	path := writeSpecs(t, doc("a", "succeeded"), doc("b", "succeeded"), doc("c", "succeeded"), doc("d", "reject"), doc("e", "succeeded"))
	r := runCLI(t, f.addr, false, "job", "create", "-f", path, "--batch-size", "2")
	if r.code != ExitError {
		t.Fatalf("exit %d, want %d: %s%s", r.code, ExitError, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{"job-1", "job-2", "job-3", "refused d (InvalidArgument): jobs[3].pool: has no quota for this job; jobs[3].priority: above the pool's maximum", "job-4"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stderr, "1 of 5 jobs refused") {
		t.Fatalf("stderr: %s", r.stderr)
	}
	f.mu.Lock()
	batches := f.batches
	f.mu.Unlock()
	if len(batches) != 3 || len(batches[0].GetJobs()) != 2 || len(batches[2].GetJobs()) != 1 {
		t.Fatalf("%d requests, want 3 of 2, 2 and 1 specs", len(batches))
	}
	ids := map[string]bool{}
	for _, b := range batches {
		if !strings.HasPrefix(b.GetRequestId(), "cli-") || ids[b.GetRequestId()] {
			t.Fatalf("request id %q: want a new one per request", b.GetRequestId())
		}
		ids[b.GetRequestId()] = true
	}

	r = runCLI(t, f.addr, false, "-o", "json", "job", "create", "-f", writeSpecs(t, doc("one", "succeeded"), doc("two", "succeeded")))
	var out struct {
		Results []struct {
			JobID   string `json:"jobId"`
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || len(out.Results) != 2 || out.Results[1].JobID != "job-6" {
		t.Fatalf("-o json: exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
}

// Every document is checked before anything is sent; problems are named
// by document.
func TestJobCreateMultiDocumentCheckedLocally(t *testing.T) {
	f := startFakeServer(t)
	path := writeSpecs(t, doc("a", "succeeded"), "instances: 1\ntask: {command: echo, resources: {cpu: 1, memMb: 1}}\n", doc("c", "succeeded"), "name: [\n")
	r := runCLI(t, f.addr, false, "job", "create", "-f", path)
	if r.code != ExitError || !strings.Contains(r.stderr, "jobs[1].name: is required") || !strings.Contains(r.stderr, "jobs[3]: not valid YAML or JSON") ||
		!strings.Contains(r.stderr, "the document at line 18") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f.mu.Lock()
	sent := len(f.batches) + f.createCalls
	f.mu.Unlock()
	if sent != 0 {
		t.Fatalf("%d requests sent for a file with a bad document", sent)
	}
	r = runCLI(t, f.addr, false, "job", "create", "-f", writeSpecs(t, doc("a", "succeeded"), doc("b", "succeeded")), "--wait")
	if r.code != ExitError || !strings.Contains(r.stderr, "--wait follows one job") {
		t.Fatalf("--wait with two documents: exit %d: %s", r.code, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "create", "-f", writeSpecs(t, doc("a", "succeeded"), doc("b", "succeeded")), "--batch-size", "0")
	if r.code != ExitError || !strings.Contains(r.stderr, "--batch-size") {
		t.Fatalf("--batch-size 0: exit %d: %s", r.code, r.stderr)
	}
}

// A request the server could not finish is sent again with its request
// id: the specs it created are not created twice.
func TestJobCreateMultiDocumentRetries(t *testing.T) {
	f := startFakeServer(t)
	f.mu.Lock()
	f.itemsDown = 1 // the first spec of the first request
	f.mu.Unlock()
	path := writeSpecs(t, doc("a", "succeeded"), doc("b", "succeeded"), doc("c", "succeeded"))
	r := runCLI(t, f.addr, false, "job", "create", "-f", path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != "job-3\njob-1\njob-2" {
		t.Fatalf("stdout %q, want a, b and c created once each", got)
	}
	f.mu.Lock()
	if len(f.batches) != 2 || f.batches[0].GetRequestId() != f.batches[1].GetRequestId() || len(f.jobs) != 3 {
		t.Fatalf("%d requests, %d jobs; want the request sent twice with one id and 3 jobs", len(f.batches), len(f.jobs))
	}
	// A whole request refused as unavailable is sent again.
	f.unavailable = 1
	f.mu.Unlock()
	r = runCLI(t, f.addr, false, "job", "create", "-f", writeSpecs(t, doc("d", "succeeded"), doc("e", "succeeded")))
	if r.code != 0 || strings.TrimSpace(r.stdout) != "job-4\njob-5" {
		t.Fatalf("after an unavailable server: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
