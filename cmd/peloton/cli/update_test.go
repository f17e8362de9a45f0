package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"sigs.k8s.io/yaml"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// writeFile writes text to a file in a fresh directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// updateSpec is a valid spec of 4 instances with overrides.
const updateSpec = `name: demo
instances: 4
labels: {update: %s}
task:
  command: echo
  resources: {cpu: 0.5, memMb: 64}
overrides:
  - instances: 0-1
    task: {env: {SHARD: low}}
  - instances: 3
    task: {resources: {memMb: 128}}
`

func specWithOutcome(t *testing.T, outcome string) string {
	return writeFile(t, "update.yaml", strings.Replace(updateSpec, "%s", outcome, 1))
}

func TestJobUpdate(t *testing.T) {
	cases := []struct {
		name    string
		outcome string
		argv    []string
		code    int
		stdout  []string
		stderr  string
	}{
		{"prints the update", "ok", nil, ExitOK, []string{"ID:", "job-1.2", "ROLLING_FORWARD", "Versions:", "1 -> 2", "Batch size:", "all", "0/4 instances"}, ""},
		{"waits until it succeeds", "ok", []string{"--batch-size", "1", "--wait"}, ExitOK,
			[]string{"job-1.2\n", "ROLLING_FORWARD", "SUCCEEDED", "SUCCEEDED       [########################] 4/4"}, ""},
		{"waits, aborted", "abort", []string{"--batch-size", "1", "--wait"}, ExitJobFailed,
			[]string{"ABORTED"}, "Error: update job-1.2 ended ABORTED: aborted by an operator (1 of 4 instances moved keep the new config)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFakeServer(t)
			job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
			argv := append([]string{"job", "update", job, "-f", specWithOutcome(t, tc.outcome)}, tc.argv...)
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
		})
	}
}

func TestJobUpdateWaitJSONKeepsStdoutParseable(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
	r := runCLI(t, f.addr, false, "-o", "json", "job", "update", job, "-f", specWithOutcome(t, "ok"), "--batch-size", "2", "--wait")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var u map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &u); err != nil || u["state"] != "UPDATE_STATE_SUCCEEDED" {
		t.Fatalf("stdout is not the final update as JSON: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "SUCCEEDED") {
		t.Fatalf("progress belongs on stderr: %q", r.stderr)
	}
}

func TestJobUpdateInvalidSpecSendsNothing(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
	spec := writeFile(t, "bad.yaml", `name: demo
instances: 4
task: {command: echo, resources: {cpu: 1, memMb: 1}}
overrides:
  - {instances: "0-2", task: {args: [a]}}
  - {instances: "2-5", task: {resources: {cpu: -1}}}
  - {instances: "x", task: {colour: red}}
`)
	r := runCLI(t, f.addr, false, "job", "update", job, "-f", spec)
	want := []string{
		"is not a valid job spec (6 problems):",
		"  overrides[0].instances: instance 2 also named by overrides[1]",
		"  overrides[1].instances: instance 2 also named by overrides[0]",
		"  overrides[1].instances: instance 5 is beyond the job's instances (0-3)",
		"  overrides[1].task.resources.cpu: must be >= 0",
		`  overrides[2].instances: "x" is not an instance number or a range FROM-TO`,
		"  overrides[2].task.colour: unknown field",
	}
	if r.code != ExitError {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.updates) != 0 {
		t.Fatalf("an invalid spec reached the server")
	}
}

func TestJobConfigRoundTrips(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
	if r := runCLI(t, f.addr, false, "job", "update", job, "-f", specWithOutcome(t, "ok")); r.code != 0 {
		t.Fatalf("update: %d %s", r.code, r.stderr)
	}
	r := runCLI(t, f.addr, false, "job", "config", job)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "# job "+job+", config version 2 (stored versions: 1, 2)\n") {
		t.Fatalf("job config: %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"instances: 0-1", "SHARD: low", "memMb: 128"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config lacks %q:\n%s", want, r.stdout)
		}
	}
	// What job config prints, job create and job update read back.
	printed := writeFile(t, "printed.yaml", r.stdout)
	spec, err := LoadJobSpec(printed, nil)
	if err != nil {
		t.Fatalf("the printed config does not load: %v\n%s", err, r.stdout)
	}
	if got := spec.GetOverrides(); len(got) != 2 || got[0].GetInstances() != "0-1" || got[1].GetInstances() != "3" {
		t.Fatalf("overrides read back as %v", got)
	}
	if r := runCLI(t, f.addr, false, "job", "update", job, "-f", printed); r.code != 0 {
		t.Fatalf("update from the printed config: %d %s", r.code, r.stderr)
	}

	r = runCLI(t, f.addr, false, "-o", "json", "job", "config", job, "--version", "1")
	if r.code != 0 {
		t.Fatalf("job config -o json: %d %s", r.code, r.stderr)
	}
	old, err := pelotonv1.DecodeJobSpec([]byte(r.stdout))
	if err != nil || old.GetInstances() != 1 || len(old.GetOverrides()) != 0 {
		t.Fatalf("version 1 as JSON: %v %v\n%s", old, err, r.stdout)
	}
	if r := runCLI(t, f.addr, false, "job", "config", job, "--version", "9"); r.code != ExitNotFound {
		t.Fatalf("missing version: exit %d %s", r.code, r.stderr)
	}
}

func TestUpdateCommands(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
	for range 2 {
		if r := runCLI(t, f.addr, false, "job", "update", job, "-f", specWithOutcome(t, "ok"), "--batch-size", "1"); r.code != 0 {
			t.Fatalf("update: %d %s", r.code, r.stderr)
		}
	}
	r := runCLI(t, f.addr, false, "update", "get", job+".2")
	if r.code != 0 || !strings.Contains(r.stdout, "1/4 instances") {
		t.Fatalf("update get: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "update", "abort", job+".3")
	if r.code != 0 || !strings.Contains(r.stdout, "ABORTED") || !strings.Contains(r.stdout, "aborted by an operator") {
		t.Fatalf("update abort: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "update", "abort", job+".3")
	if r.code != ExitRefused {
		t.Fatalf("abort twice: exit %d %s", r.code, r.stderr)
	}
	r = runCLI(t, f.addr, false, "update", "list", job)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.Contains(lines[1], "1 -> 2") || !strings.Contains(lines[2], "ABORTED") {
		t.Fatalf("update list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, f.addr, false, "update", "get", "nope.7"); r.code != ExitNotFound {
		t.Fatalf("update get of a missing update: exit %d", r.code)
	}

	// job get shows the config version and the latest update.
	r = runCLI(t, f.addr, false, "job", "get", job)
	for _, want := range []string{"Config version:", "3", "Update:", job + ".3 ABORTED", "Overrides:", "2 (peloton job config " + job + ")"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("job get lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestJobEvents(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("demo", pelotonv1.JobState_JOB_STATE_RUNNING)
	at := timestamppb.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local))
	f.mu.Lock()
	f.events[job] = []*pelotonv1.Event{
		{Seq: 10, Time: at, JobId: job, Kind: &pelotonv1.Event_Job{Job: &pelotonv1.JobStatus{State: pelotonv1.JobState_JOB_STATE_PENDING}}},
		{Seq: 11, Time: at, JobId: job, Kind: &pelotonv1.Event_Task{Task: &pelotonv1.Task{Instance: 0, State: pelotonv1.TaskState_TASK_STATE_RUNNING}}},
		{Seq: 12, Time: at, JobId: job, Kind: &pelotonv1.Event_Task{Task: &pelotonv1.Task{Instance: 1, State: pelotonv1.TaskState_TASK_STATE_FAILED,
			Reason: "EXIT_NONZERO", Message: "exited with code 3"}}},
		{Seq: 13, Time: at, JobId: job, Kind: &pelotonv1.Event_Job{Job: &pelotonv1.JobStatus{State: pelotonv1.JobState_JOB_STATE_FAILED, Message: "instance 1 failed"}}},
	}
	f.mu.Unlock()

	r := runCLI(t, f.addr, false, "job", "events", job)
	want := []string{
		"SEQ  TIME                     INSTANCE  STATE    DETAIL",
		"10   2026-03-01 12:00:00.000  job       PENDING  -",
		"11   2026-03-01 12:00:00.000  0         RUNNING  -",
		"12   2026-03-01 12:00:00.000  1         FAILED   EXIT_NONZERO: exited with code 3",
		"13   2026-03-01 12:00:00.000  job       FAILED   instance 1 failed",
	}
	if r.code != 0 || strings.TrimRight(r.stdout, "\n") != strings.Join(want, "\n") || r.stderr != "" {
		t.Fatalf("job events: %d\n%s\nwant\n%s\n%s", r.code, r.stdout, strings.Join(want, "\n"), r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "events", job, "--instance", "1")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, "EXIT_NONZERO") {
		t.Fatalf("job events --instance 1: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "events", job, "--after", "10", "--limit", "2")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 3 || r.stderr != "more events follow: peloton job events "+job+" --after 12\n" {
		t.Fatalf("job events --after 10 --limit 2: %d\n%s%q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "-o", "json", "job", "events", job, "--instance", "0")
	if r.code != 0 || !strings.Contains(r.stdout, `"state": "TASK_STATE_RUNNING"`) || strings.Contains(r.stdout, "JOB_STATE") {
		t.Fatalf("job events -o json: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, f.addr, false, "job", "events", "job-404"); r.code != ExitNotFound {
		t.Fatalf("events of a missing job: exit %d", r.code)
	}
}

func TestHostDrain(t *testing.T) {
	f := startFakeServer(t)
	seen := timestamppb.New(time.Now().Add(-30 * time.Second))
	f.hosts = []*pelotonv1.Host{
		{Id: "sim/host-1", Hostname: "host-1", Cluster: "sim", Kind: "sim", Region: "east", State: pelotonv1.HostState_HOST_STATE_UP, LastSeen: seen, Tasks: 2},
		{Id: "sim/host-2", Hostname: "host-2", Cluster: "sim", Kind: "sim", Region: "east", State: pelotonv1.HostState_HOST_STATE_DOWN, LastSeen: seen},
	}
	r := runCLI(t, f.addr, false, "host", "drain", "sim/host-1", "--reason", "disk swap")
	for _, want := range []string{"ID:", "sim/host-1", "State:", "DRAINING", "Drain reason:", "disk swap", "Drained:", "(0s ago)"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("host drain: %d, lacks %q\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = runCLI(t, f.addr, false, "host", "list")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "LAST SEEN") || !strings.Contains(lines[0], "REGION") ||
		!strings.Contains(lines[1], "DRAINING") || !strings.Contains(lines[1], "30s ago    disk swap") || !strings.HasSuffix(lines[1], "sim/host-1") ||
		!strings.Contains(lines[2], "DOWN") {
		t.Fatalf("host list:\n%s%s", r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "host", "undrain", "sim/host-1")
	if r.code != 0 || !strings.Contains(r.stdout, "UP") || strings.Contains(r.stdout, "Drain reason") {
		t.Fatalf("host undrain: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, f.addr, false, "host", "drain", "sim/nope"); r.code != ExitNotFound {
		t.Fatalf("drain of a missing host: exit %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, f.addr, false, "host", "drain", "host-1"); r.code != ExitError || !strings.Contains(r.stderr, "want <cluster>/<name>") {
		t.Fatalf("drain by hostname: exit %d %s", r.code, r.stderr)
	}
}

func TestTaskCommandsShowConfigVersion(t *testing.T) {
	f := startFakeServer(t)
	job := f.addJob("tasks", pelotonv1.JobState_JOB_STATE_RUNNING)
	addTask(f, job, 0, pelotonv1.TaskState_TASK_STATE_RUNNING)
	f.mu.Lock()
	f.tasks[job][0].ConfigVersion = 2
	f.mu.Unlock()
	r := runCLI(t, f.addr, false, "task", "list", job)
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || !strings.Contains(lines[0], "RUN  CONFIG  HOST") || !strings.Contains(lines[1], "1    2       host-a") {
		t.Fatalf("task list:\n%s%s", r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "task", "get", job, "0")
	if r.code != 0 || !strings.Contains(r.stdout, "Config version:  2") {
		t.Fatalf("task get:\n%s%s", r.stdout, r.stderr)
	}
}

// job config prints enums by their short names, and the text reads back
// as the same spec.
func TestSpecTextShortEnums(t *testing.T) {
	spec := &pelotonv1.JobSpec{Name: "web", Type: pelotonv1.JobType_JOB_TYPE_SERVICE, Instances: 2,
		Failover: &pelotonv1.FailoverPolicy{Mode: pelotonv1.FailoverPolicy_MODE_ANY},
		Task: &pelotonv1.TaskSpec{Command: "sleep", Env: map[string]string{"X": "JOB_TYPE_BATCH"}, Resources: &pelotonv1.Resources{Cpu: 0.5, MemMb: 64},
			Constraints: []*pelotonv1.Constraint{{Key: "zone", Op: pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_IN, Values: []string{"a"}}}}}
	out, err := specText(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"type: service", "op: not-in", "mode: any", "X: JOB_TYPE_BATCH"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "JOB_TYPE_SERVICE") || strings.Contains(text, "CONSTRAINT_OP") {
		t.Errorf("full enum names left:\n%s", text)
	}
	js, _ := yaml.YAMLToJSON(out)
	back, err := pelotonv1.DecodeJobSpec(js)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !proto.Equal(back, spec) {
		t.Fatalf("round trip: got %v, want %v", back, spec)
	}
}
