package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func TestFormatResources(t *testing.T) {
	cases := []struct {
		in   *pelotonv1.Resources
		want string
	}{
		{&pelotonv1.Resources{Cpu: 1, MemMb: 128}, "cpu=1 mem=128MiB"},
		{&pelotonv1.Resources{Cpu: 0.25, MemMb: 1536, DiskMb: 2048, Gpu: 2}, "cpu=0.25 mem=1.5GiB disk=2GiB gpu=2"},
		{&pelotonv1.Resources{Cpu: 64, MemMb: 3 << 20}, "cpu=64 mem=3TiB"},
		{&pelotonv1.Resources{}, "cpu=0 mem=0MiB"},
		// Amounts print to their unit: millicores and whole MiB, no residue.
		{&pelotonv1.Resources{Cpu: -0.00000000000000008673617379884035, MemMb: 0.2}, "cpu=0 mem=0MiB"},
		{&pelotonv1.Resources{Cpu: 0.1 + 0.2, MemMb: 511.9999999}, "cpu=0.3 mem=512MiB"},
		{&pelotonv1.Resources{Cpu: 1.0005, MemMb: 64}, "cpu=1.001 mem=64MiB"},
		// A larger unit only where it shows the amount exactly.
		{&pelotonv1.Resources{Cpu: 2, MemMb: 1500, DiskMb: 10240.4, Gpu: 1.0000000002}, "cpu=2 mem=1500MiB disk=10GiB gpu=1"},
		{&pelotonv1.Resources{Cpu: 0.001, MemMb: 1025, DiskMb: 1024*1024 + 512}, "cpu=0.001 mem=1025MiB disk=1024.5GiB"},
		{nil, ""},
	}
	for _, tc := range cases {
		if got := formatResources(tc.in); got != tc.want {
			t.Errorf("formatResources(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		before time.Duration
		want   string
	}{
		{12 * time.Second, "12s ago"},
		{5*time.Minute + 59*time.Second, "5m ago"},
		{3 * time.Hour, "3h ago"},
		{47 * time.Hour, "47h ago"},
		{72 * time.Hour, "3d ago"},
		{-5 * time.Second, "in 5s"},
	}
	for _, tc := range cases {
		if got := ago(timestamppb.New(now.Add(-tc.before)), now); got != tc.want {
			t.Errorf("ago(-%s) = %q, want %q", tc.before, got, tc.want)
		}
	}
	if got := ago(nil, now); got != "-" {
		t.Errorf("ago(nil) = %q", got)
	}
}

func TestTaskCountsInLifecycleOrder(t *testing.T) {
	got := taskCounts(map[string]uint32{
		"TASK_STATE_SUCCEEDED": 8, "RUNNING": 2, "TASK_STATE_PENDING": 5, "TASK_STATE_FAILED": 0, "weird": 1,
	})
	want := "weird=1 pending=5 running=2 succeeded=8"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCommandLineQuotesWhatAShellWould(t *testing.T) {
	got := commandLine("sh", []string{"-c", "echo hi; sleep 1", ""})
	want := `sh -c "echo hi; sleep 1" ""`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestConstraintText(t *testing.T) {
	c := &pelotonv1.Constraint{AllOf: []*pelotonv1.Constraint{
		{Key: "zone", Op: pelotonv1.ConstraintOp_CONSTRAINT_OP_IN, Values: []string{"a", "b"}},
		{AnyOf: []*pelotonv1.Constraint{
			{Key: "ssd", Op: pelotonv1.ConstraintOp_CONSTRAINT_OP_EXISTS},
			{Key: "gpu", Op: pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_EQUALS, Values: []string{"0"}},
		}},
	}}
	want := "zone in (a, b) && (ssd exists || gpu != 0)"
	if got := constraintText(c); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPoolTreeIndentsChildrenUnderParents(t *testing.T) {
	var pools []*pelotonv1.Pool
	for _, p := range []string{"/maps/ingest", "/", "/ads", "/maps", "/orphan/child", "/ads/batch"} {
		pools = append(pools, &pelotonv1.Pool{Path: p})
	}
	var b bytes.Buffer
	if err := writePoolTree(&b, pools); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n")[1:] {
		// Keep the indentation, drop the other columns.
		indent := len(line) - len(strings.TrimLeft(line, " "))
		names = append(names, strings.Repeat(" ", indent)+strings.Fields(line)[0])
	}
	want := []string{"/", "  ads", "    batch", "  maps", "    ingest", "child"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("tree\n%s\nnames %q, want %q", b.String(), names, want)
	}
}

func TestLastLinesAgreesWithSplitting(t *testing.T) {
	// Property: lastLines returns the same lines as splitting the text and
	// keeping the last n, for random texts and n.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.IntN(8); j > 0; j-- {
			b.WriteString(strings.Repeat("x", rng.IntN(3)))
			b.WriteByte('\n')
		}
		if rng.IntN(2) == 0 {
			b.WriteString("tail")
		}
		text := b.String()
		n := rng.IntN(10)
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		want := strings.Join(lines[max(0, len(lines)-n):], "")
		if got := string(lastLines([]byte(text), n)); got != want {
			t.Fatalf("lastLines(%q, %d) = %q, want %q", text, n, got, want)
		}
	}
}

func TestProgressBarFillsItsWidthInProportion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		width := 1 + rng.IntN(40)
		total := uint32(rng.IntN(200))
		var segs []barSegment
		left := total
		for _, mark := range []byte{'#', 'x', '>'} {
			n := uint32(0)
			if left > 0 {
				n = uint32(rng.IntN(int(left) + 1))
			}
			left -= n
			segs = append(segs, barSegment{mark, n})
		}
		bar := progressBar(width, total, segs)
		if len(bar) != width {
			t.Fatalf("bar %q has width %d, want %d", bar, len(bar), width)
		}
		if total == 0 {
			continue
		}
		var done uint32
		for _, s := range segs {
			done += s.count
		}
		filled := width - strings.Count(bar, ".")
		exact := float64(done) / float64(total) * float64(width)
		if float64(filled) < exact-1 || float64(filled) > exact+1 {
			t.Fatalf("bar %q fills %d cells for %d/%d of %d", bar, filled, done, total, width)
		}
	}
	if got := progressBar(10, 4, []barSegment{{'#', 2}, {'x', 1}}); got != "#####xx..." && got != "#####xxx.." {
		t.Fatalf("got %q", got)
	}
}

func TestProgressText(t *testing.T) {
	job := &pelotonv1.Job{
		Id:   "j1",
		Spec: &pelotonv1.JobSpec{Instances: 10},
		Status: &pelotonv1.JobStatus{State: pelotonv1.JobState_JOB_STATE_RUNNING, TaskStates: map[string]uint32{
			"TASK_STATE_SUCCEEDED": 4, "TASK_STATE_FAILED": 1, "TASK_STATE_RUNNING": 3, "TASK_STATE_PENDING": 2,
		}},
	}
	want := "job j1 RUNNING     [####x>>>..] 5/10  pending=2 running=3 succeeded=4 failed=1"
	if got := progressText(job, 10); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestNormalizeAddr(t *testing.T) {
	cases := []struct{ in, want string }{
		{"127.0.0.1:5390", "127.0.0.1:5390"},
		{"http://localhost:8080", "localhost:8080"},
		{"HTTPS://peloton.example:443/", "peloton.example:443"},
		{"localhost", "localhost:5390"},
		{"[::1]", "[::1]:5390"},
		{"[::1]:7000", "[::1]:7000"},
		{"dns:///peloton:5390", "dns:///peloton:5390"},
		{" grpc://h:1/x ", "h:1"},
	}
	for _, tc := range cases {
		got, err := NormalizeAddr(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "http://", "ftp://x:1"} {
		if got, err := NormalizeAddr(bad); err == nil {
			t.Errorf("NormalizeAddr(%q) = %q, want an error", bad, got)
		}
	}
}

func TestExitCodeAndMessage(t *testing.T) {
	cases := []struct {
		err  error
		code int
		msg  string
	}{
		{nil, ExitOK, ""},
		{fmt.Errorf("wait: %w", context.Canceled), ExitInterrupted, "interrupted"},
		{status.Error(codes.Canceled, "context canceled"), ExitInterrupted, "interrupted"},
		{errors.New("boom"), ExitError, "boom"},
		{status.Error(codes.InvalidArgument, "name: is required"), ExitError, "name: is required"},
		{fmt.Errorf("get job: %w", status.Error(codes.NotFound, "job j9 not found")), ExitNotFound, "job j9 not found"},
		{status.Error(codes.FailedPrecondition, "job is running"), ExitRefused, "job is running"},
		{status.Error(codes.ResourceExhausted, "quota"), ExitRefused, "quota"},
		{status.Error(codes.Unavailable, "down"), ExitUnavailable, "down"},
		{status.Error(codes.DeadlineExceeded, "slow"), ExitTimeout, "slow"},
		{&exitError{code: ExitJobFailed, msg: "job j1 ended FAILED"}, ExitJobFailed, "job j1 ended FAILED"},
		{&usageError{command: "peloton", err: errors.New("unknown flag: --x")}, ExitError, "unknown flag: --x"},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
		if tc.err != nil {
			if got := ErrorMessage(tc.err); got != tc.msg {
				t.Errorf("ErrorMessage(%v) = %q, want %q", tc.err, got, tc.msg)
			}
		}
	}
}

func TestMarshalJSONIsStableCamelCaseAndComplete(t *testing.T) {
	job := &pelotonv1.Job{Id: "j1", Spec: &pelotonv1.JobSpec{Name: "x", MaxRunning: 5}}
	first, err := MarshalJSON(job)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		again, _ := MarshalJSON(job)
		if !bytes.Equal(first, again) {
			t.Fatalf("output changed between calls:\n%s\n%s", first, again)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatal(err)
	}
	spec := doc["spec"].(map[string]any)
	if spec["maxRunning"] != float64(5) || spec["preemptible"] != false {
		t.Fatalf("want camelCase names and unset fields: %s", first)
	}
	if !strings.Contains(string(first), "\n  \"id\": \"j1\"") {
		t.Fatalf("want two-space indentation: %s", first)
	}
	y, err := MarshalYAML(job)
	if err != nil || !strings.Contains(string(y), "maxRunning: 5") {
		t.Fatalf("yaml %s, %v", y, err)
	}
}

func TestWriteJobShowsTheEssentials(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	job := &pelotonv1.Job{
		Id: "j1",
		Spec: &pelotonv1.JobSpec{Name: "hello", Pool: "/", Instances: 3, MaxAttempts: 3, Task: &pelotonv1.TaskSpec{
			Command: "echo", Args: []string{"hi there"}, Resources: &pelotonv1.Resources{Cpu: 1, MemMb: 128},
		}},
		Status: &pelotonv1.JobStatus{State: pelotonv1.JobState_JOB_STATE_SUCCEEDED, CreateTime: timestamppb.New(now.Add(-90 * time.Second)),
			TaskStates: map[string]uint32{"TASK_STATE_SUCCEEDED": 3}},
	}
	var b bytes.Buffer
	if err := writeJob(&b, job, nil, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ID:", "j1", "State:", "SUCCEEDED", `echo "hi there"`, "cpu=1 mem=128MiB", "succeeded=3", "(1m ago)", "Max running:", "unlimited"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "Completed:") {
		t.Errorf("unset times must be left out:\n%s", b.String())
	}
}

// The pool, host and job views print amounts to their unit whatever float
// residue the JSON numbers carry.
func TestPoolAndHostViewsShowNoResidue(t *testing.T) {
	residue := func(s string) bool {
		return strings.Contains(s, "0000") || strings.Contains(s, "9999") || strings.Contains(s, "e-")
	}
	p := &pelotonv1.Pool{Path: "/a", Jobs: 1, Resources: []*pelotonv1.PoolResource{
		{Name: "cpu", Reservation: 0.1 + 0.2, Limit: 10.000000000000002, Share: 0.1 + 0.2, Demand: 2.9999999999999996, Allocation: 1.0000000000000002, Entitlement: 0.30000000000000004},
		{Name: "mem", Reservation: 1500.0000000001, Limit: 2048, Share: 1, Demand: 1023.9999999, Allocation: 512.00000001, Entitlement: 3 << 10},
		{Name: "gpu", Reservation: 0.9999999999, Limit: 2.0000000001, Share: 1, Demand: 1, Allocation: 0, Entitlement: 1.0000000002},
	}}
	var out strings.Builder
	if err := writePool(&out, p); err != nil {
		t.Fatal(err)
	}
	if err := writePoolTree(&out, []*pelotonv1.Pool{p}); err != nil {
		t.Fatal(err)
	}
	h := &pelotonv1.Host{Id: "sim/h", Hostname: "h", Capacity: &pelotonv1.Resources{Cpu: 8.000000000000002, MemMb: 32768.00000001, Gpu: 1.9999999999},
		Allocated: &pelotonv1.Resources{Cpu: 0.1 + 0.2 + 0.4, MemMb: 100.5}}
	if err := writeHostTable(&out, []*pelotonv1.Host{h}, time.Now()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if residue(text) {
		t.Fatalf("residue in:\n%s", text)
	}
	for _, want := range []string{"cpu=0.3 mem=1500MiB gpu=1", "0.3", "1GiB", "3GiB", "cpu=8 mem=32GiB gpu=2", "cpu=0.7 mem=101MiB"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing in:\n%s", want, text)
		}
	}
}

func TestRegionTableNamesSuspectMembers(t *testing.T) {
	var buf bytes.Buffer
	minute := durationpb.New(time.Minute)
	regions := []*pelotonv1.Region{
		{Name: "east", Health: "alive", Members: []*pelotonv1.RegionMember{{Name: "east-0", Leader: true, Status: "alive"}}},
		{Name: "north", Health: "alive", Members: []*pelotonv1.RegionMember{
			{Name: "north-0", Leader: true, Status: "alive", Probes: &pelotonv1.ProbeCounts{Sent: 30, Window: minute}}}},
		{Name: "west", Health: "alive", Members: []*pelotonv1.RegionMember{
			{Name: "west-0", Leader: true, Status: "suspect", Probes: &pelotonv1.ProbeCounts{Sent: 20, Lost: 9, Failed: 2, Window: minute}},
			{Name: "west-1", Status: "alive", Probes: &pelotonv1.ProbeCounts{Sent: 21, Lost: 1, Window: minute}}}},
	}
	if err := writeRegionTable(&buf, regions, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := [][2]string{{"SUSPECT", "PROBES LOST (1m)"}, {"-", "-"}, {"-", "0/30 (0%)"}, {"west-0", "10/41 (24%), 2 failed"}}
	if len(lines) != len(want) {
		t.Fatalf("region table:\n%s", buf.String())
	}
	for i, line := range lines {
		cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		if got := [2]string{cells[len(cells)-2], cells[len(cells)-1]}; got != want[i] {
			t.Errorf("line %d ends %q, want %q:\n%s", i, got, want[i], buf.String())
		}
	}
}
