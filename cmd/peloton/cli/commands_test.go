package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
)

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the peloton command against addr, the way Main would.
func runCLI(t *testing.T, addr string, tty bool, argv ...string) result {
	t.Helper()
	a := &app{
		clock:        clock.Real{},
		pollInterval: 5 * time.Millisecond,
		rpcTimeout:   10 * time.Second,
		isTerminal:   func(io.Writer) bool { return tty },
	}
	root := newRootCommand(a)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(append([]string{"--addr", addr}, argv...))
	code := Main(root)
	return result{out.String(), errOut.String(), code}
}

// writeSpec writes a valid spec whose fake outcome is given.
func writeSpec(t *testing.T, outcome string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	spec := fmt.Sprintf("name: demo\ninstances: 3\nlabels: {outcome: %s}\ntask:\n  command: echo\n  resources: {cpu: 0.5, memMb: 64}\n", outcome)
	if err := os.WriteFile(path, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestJobCreateWait(t *testing.T) {
	cases := []struct {
		name        string
		outcome     string
		watchBroken bool
		extra       []string
		code        int
		stdout      []string
		stderr      string
	}{
		{"succeeds, followed by events", "succeeded", false, nil, ExitOK, []string{"job-1\n", "SUCCEEDED", "3/3", "succeeded=3"}, ""},
		{"succeeds, followed by polling", "succeeded", true, nil, ExitOK, []string{"job-1\n", "SUCCEEDED"}, ""},
		{"fails", "failed", false, nil, ExitJobFailed, []string{"FAILED", "failed=1"}, "Error: job job-1 ended FAILED: instance 0 exited with code 3"},
		{"fails, followed by polling", "failed", true, nil, ExitJobFailed, []string{"FAILED"}, "ended FAILED"},
		{"times out", "never", false, []string{"--timeout", "150ms"}, ExitTimeout, []string{"RUNNING"}, "Error: job job-1 is still RUNNING after 150ms"},
		{"times out while polling", "never", true, []string{"--timeout", "150ms"}, ExitTimeout, []string{"RUNNING"}, "still RUNNING"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFakeServer(t)
			f.watchBroken = tc.watchBroken
			argv := append([]string{"job", "create", "-f", writeSpec(t, tc.outcome), "--wait"}, tc.extra...)
			r := runCLI(t, f.addr, false, argv...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tc.stderr) || (tc.stderr == "" && r.stderr != "") {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tc.stderr)
			}
			if !strings.HasPrefix(r.stdout, "job-1\n") {
				t.Errorf("the job id must come first: %q", r.stdout)
			}
		})
	}
}

func TestJobCreateWaitDrawsOneLineOnATerminal(t *testing.T) {
	f := startFakeServer(t)
	r := runCLI(t, f.addr, true, "job", "create", "-f", writeSpec(t, "succeeded"), "--wait")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	progress := strings.TrimPrefix(r.stdout, "job-1\n")
	if !strings.HasPrefix(progress, "\r") || !strings.Contains(progress, "\x1b[K") || strings.Count(progress, "\n") != 1 {
		t.Fatalf("want one line redrawn with \\r, got %q", progress)
	}
}

func TestJobCreateWaitJSONKeepsStdoutParseable(t *testing.T) {
	f := startFakeServer(t)
	r := runCLI(t, f.addr, false, "-o", "json", "job", "create", "-f", writeSpec(t, "succeeded"), "--wait")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var job map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &job); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	if job["status"].(map[string]any)["state"] != "JOB_STATE_SUCCEEDED" {
		t.Fatalf("final job: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "SUCCEEDED") {
		t.Fatalf("progress belongs on stderr: %q", r.stderr)
	}
}

func TestJobCreateInvalidSpecSendsNothing(t *testing.T) {
	f := startFakeServer(t)
	r := runCLI(t, f.addr, false, "job", "create", "-f", filepath.Join(examples, "invalid.yaml"))
	if r.code != ExitError {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, ExitError, r.stderr)
	}
	wantLines := []string{
		"Error: " + filepath.Join(examples, "invalid.yaml") + " is not a valid job spec (7 problems):",
		`  task.container.image: "Web Server" is not an image reference such as nginx:1.27 or registry.example:5000/team/app@sha256:<64 hex>`,
		"  task.health_check: needs one of command, http or tcp",
		`  task.ports[1].name: "http" is already the name of ports[0]`,
		"  task.ports[2].port: 70000 is out of range (1-65535, or 0 for a free host port)",
		"  task.resources.cpu: must be > 0",
		"  task.sleep: unknown field",
		"  task.volumes: only stateful jobs (type: stateful) have volumes",
	}
	if got := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("stderr\n%s\nwant\n%s", r.stderr, strings.Join(wantLines, "\n"))
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
	if n := f.creates(); n != 0 {
		t.Fatalf("%d CreateJob calls reached the server", n)
	}
}

func TestServerErrorsMapToExitCodes(t *testing.T) {
	f := startFakeServer(t)
	running := f.addJob("busy", pelotonv1.JobState_JOB_STATE_RUNNING)
	spec := filepath.Join(t.TempDir(), "pool.yaml")
	if err := os.WriteFile(spec, []byte("name: p\ninstances: 1\npool: /nope\ntask: {command: c, resources: {cpu: 1, memMb: 1}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		argv   []string
		code   int
		stderr string
	}{
		{[]string{"job", "get", "job-404"}, ExitNotFound, "Error: job job-404 not found\n"},
		{[]string{"job", "delete", running}, ExitRefused, "Error: job " + running + " is RUNNING; stop it first\n"},
		{[]string{"job", "create", "-f", spec}, ExitNotFound, "Error: pool /nope not found\n"},
		{[]string{"job", "create", "-f", writeSpec(t, "reject")}, ExitError,
			"Error: the server rejected the job spec (2 problems):\n  pool: has no quota for this job\n  priority: above the pool's maximum\n"},
		{[]string{"job", "list", "--state", "sleepy"}, ExitError, "--state: unknown value \"sleepy\""},
		{[]string{"-o", "xml", "job", "list"}, ExitError, "Error: unknown output format \"xml\""},
		{[]string{"job", "get"}, ExitError, "Run 'peloton job get --help' for usage."},
		{[]string{"job", "create"}, ExitError, "Error: -f FILE is required"},
		{[]string{"job", "list", "--bogus"}, ExitError, "Error: unknown flag: --bogus"},
		{[]string{"task", "get", running, "x"}, ExitError, "instance \"x\" must be a number"},
	}
	for _, tc := range cases {
		r := runCLI(t, f.addr, false, tc.argv...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.argv, r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}

func TestJobCommands(t *testing.T) {
	f := startFakeServer(t)
	done := f.addJob("finished", pelotonv1.JobState_JOB_STATE_SUCCEEDED)
	busy := f.addJob("busy", pelotonv1.JobState_JOB_STATE_RUNNING)

	r := runCLI(t, f.addr, false, "job", "list", "--state", "running")
	if r.code != 0 || !strings.Contains(r.stdout, busy) || strings.Contains(r.stdout, done) || !strings.HasPrefix(r.stdout, "ID ") {
		t.Fatalf("job list --state running: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "get", done)
	if r.code != 0 || !strings.Contains(r.stdout, "finished") || !strings.Contains(r.stdout, "SUCCEEDED") {
		t.Fatalf("job get: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "-o", "yaml", "job", "get", done)
	if r.code != 0 || !strings.Contains(r.stdout, "state: JOB_STATE_SUCCEEDED") {
		t.Fatalf("job get -o yaml: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "stop", busy)
	if r.code != 0 || r.stdout != "job "+busy+": KILLING\n" {
		t.Fatalf("job stop: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "delete", done)
	if r.code != 0 || r.stdout != "deleted job "+done+"\n" {
		t.Fatalf("job delete: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, f.addr, false, "job", "get", done); r.code != ExitNotFound {
		t.Fatalf("deleted job still there: %d", r.code)
	}
}

func addTask(f *fakeServer, job string, instance uint32, state pelotonv1.TaskState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks[job] = append(f.tasks[job], &pelotonv1.Task{
		JobId: job, Instance: instance, State: state, Run: 1, Host: "host-a",
		StartTime: timestamppb.New(time.Now().Add(-time.Minute)),
	})
}

func setLog(f *fakeServer, job string, instance uint32, stream, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[fakeLogKey{job, instance, stream}] = []byte(text)
}

func TestTaskLogs(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("logs", pelotonv1.JobState_JOB_STATE_RUNNING)
	addTask(f, job, 0, pelotonv1.TaskState_TASK_STATE_SUCCEEDED)
	addTask(f, job, 1, pelotonv1.TaskState_TASK_STATE_RUNNING)
	var big strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&big, "line %04d of a log long enough to need several windows\n", i)
	}
	setLog(f, job, 0, "stdout", big.String())
	setLog(f, job, 0, "stderr", "warning: something\nwarning: more\n")
	f.logChunk = 50_000

	lines := strings.SplitAfter(big.String(), "\n")
	cases := []struct {
		name string
		argv []string
		want string
	}{
		{"whole log", []string{"task", "logs", job, "0"}, big.String()},
		{"tail within the first window", []string{"task", "logs", job, "0", "--tail", "3"}, strings.Join(lines[2997:3000], "")},
		{"tail needing a bigger window", []string{"task", "logs", job, "0", "--tail", "2000"}, strings.Join(lines[1000:3000], "")},
		{"tail of more lines than there are", []string{"task", "logs", job, "0", "--tail", "5000"}, big.String()},
		{"tail zero", []string{"task", "logs", job, "0", "--tail", "0"}, ""},
		{"stderr", []string{"task", "logs", job, "0", "--stderr"}, "warning: something\nwarning: more\n"},
		{"follow an ended task", []string{"task", "logs", job, "0", "--stderr", "-f", "--tail", "1"}, "warning: more\n"},
	}
	for _, tc := range cases {
		r := runCLI(t, f.addr, false, tc.argv...)
		if r.code != 0 || r.stdout != tc.want {
			t.Errorf("%s: exit %d, stderr %q, stdout %d bytes, want %d bytes", tc.name, r.code, r.stderr, len(r.stdout), len(tc.want))
		}
	}

	f.logChunk = 7 // many small reads
	if r := runCLI(t, f.addr, false, "task", "logs", job, "0", "--stderr"); r.stdout != "warning: something\nwarning: more\n" {
		t.Errorf("small chunks: %q", r.stdout)
	}
	if r := runCLI(t, f.addr, false, "task", "logs", job, "1"); r.code != ExitNotFound {
		t.Errorf("missing log: exit %d, %s", r.code, r.stderr)
	}
}

func TestTaskLogsFollowUntilTheTaskEnds(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("follow", pelotonv1.JobState_JOB_STATE_RUNNING)
	addTask(f, job, 0, pelotonv1.TaskState_TASK_STATE_RUNNING)
	key := fakeLogKey{job, 0, "stdout"}
	f.growing, f.growSteps = &key, 5 // no log until the first GetTask

	r := runCLI(t, f.addr, false, "task", "logs", job, "0", "--follow")
	want := "line 1\nline 2\nline 3\nline 4\nline 5\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q (want %q), stderr %q", r.code, r.stdout, want, r.stderr)
	}
}

func TestTaskCommands(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("tasks", pelotonv1.JobState_JOB_STATE_RUNNING)
	addTask(f, job, 0, pelotonv1.TaskState_TASK_STATE_RUNNING)
	addTask(f, job, 1, pelotonv1.TaskState_TASK_STATE_PENDING)

	r := runCLI(t, f.addr, false, "task", "list", job, "--state", "pending")
	if r.code != 0 || !strings.Contains(r.stdout, "PENDING") || strings.Contains(r.stdout, "RUNNING") {
		t.Fatalf("task list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "task", "get", job, "0")
	if r.code != 0 || !strings.Contains(r.stdout, "host-a") || !strings.Contains(r.stdout, "(1m ago)") {
		t.Fatalf("task get: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "-o", "json", "task", "stop", job, "1")
	if r.code != 0 || !strings.Contains(r.stdout, `"goalState": "TASK_STATE_KILLED"`) || strings.Contains(r.stdout, `"instance": 0`) {
		t.Fatalf("task stop: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPoolListAndVersion(t *testing.T) {
	f := startFakeServer(t)
	r := runCLI(t, f.addr, false, "pool", "list")
	want := []string{"/ ", "  maps ", "    ingest "}
	got := strings.Split(r.stdout, "\n")
	if r.code != 0 || len(got) < 4 {
		t.Fatalf("pool list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for i, prefix := range want {
		if !strings.HasPrefix(got[i+1], prefix) {
			t.Errorf("row %d %q, want prefix %q", i+1, got[i+1], prefix)
		}
	}
	if !strings.Contains(r.stdout, "cpu=2 mem=2GiB") {
		t.Errorf("pool list lacks compact resources:\n%s", r.stdout)
	}

	r = runCLI(t, f.addr, false, "version")
	if r.code != 0 || r.stdout != "client: dev\nserver: v9.9.9 (commit abc123, region east)\n" {
		t.Fatalf("version: %d %q %s", r.code, r.stdout, r.stderr)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func TestUnreachableServer(t *testing.T) {
	addr := closedAddr(t)
	r := runCLI(t, "http://"+addr, false, "job", "list")
	if r.code != ExitUnavailable || !strings.HasPrefix(r.stderr, "Error: cannot reach the peloton server at http://"+addr+" (connection refused)") {
		t.Fatalf("job list: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, addr, false, "version")
	if r.code != 0 || r.stdout != "client: dev\nserver: unreachable at "+addr+" (connection refused)\n" {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, addr, false, "-o", "json", "version")
	var report map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || report["client"] != "dev" || report["serverError"] == nil {
		t.Fatalf("version -o json: %v %q", err, r.stdout)
	}
}

func TestRootLeavesRoomForServerRoles(t *testing.T) {
	root := NewRootCommand()
	ran := false
	root.AddCommand(&cobra.Command{Use: "dev", RunE: func(*cobra.Command, []string) error { ran = true; return nil }})
	root.SetArgs([]string{"dev"})
	root.SetOut(io.Discard)
	if code := Main(root); code != 0 || !ran {
		t.Fatalf("exit %d, ran %v", code, ran)
	}
	for _, path := range [][]string{{"job", "create"}, {"job", "get"}, {"job", "list"}, {"job", "stop"}, {"job", "delete"},
		{"task", "list"}, {"task", "get"}, {"task", "logs"}, {"task", "stop"},
		{"pool", "list"}, {"pool", "get"}, {"host", "list"}, {"host", "drain"}, {"host", "undrain"}, {"region", "list"}, {"version"},
		{"job", "update"}, {"job", "config"}, {"job", "events"}, {"update", "get"}, {"update", "list"}, {"update", "abort"}} {
		if c, _, err := root.Find(path); err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("command %v missing", path)
		}
	}
}
