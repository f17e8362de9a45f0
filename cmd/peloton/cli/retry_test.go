package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func TestRetriesOfRefusedCalls(t *testing.T) {
	f := startFakeServer(t)
	spec := writeSpec(t, "succeeded")

	f.mu.Lock()
	f.shed = 3
	f.mu.Unlock()
	if r := runCLI(t, f.addr, false, "job", "create", "-f", spec); r.code != 0 {
		t.Fatalf("create while shed three times: exit %d: %s", r.code, r.stderr)
	}
	if n := f.creates(); n != 1 {
		t.Fatalf("%d creates reached the server, want 1", n)
	}

	f.mu.Lock()
	f.unavailable = 2
	f.mu.Unlock()
	if r := runCLI(t, f.addr, false, "job", "list"); r.code != 0 {
		t.Fatalf("a read while the server is unavailable twice: exit %d: %s", r.code, r.stderr)
	}

	f.mu.Lock()
	f.unavailable = 1
	f.mu.Unlock()
	if r := runCLI(t, f.addr, false, "job", "create", "-f", spec); r.code == 0 {
		t.Fatal("a create that found the server unavailable was sent again")
	}
	if n := f.creates(); n != 1 {
		t.Fatalf("%d creates reached the server, want still 1", n)
	}
}

func TestRetryBackoff(t *testing.T) {
	cases := []struct {
		n      int
		hint   time.Duration
		jitter float64
		want   time.Duration
	}{
		{0, 0, 0.5, 200 * time.Millisecond},
		{1, 0, 0.5, 400 * time.Millisecond},
		{10, 0, 0.5, 5 * time.Second},
		{0, 0, 0, 160 * time.Millisecond},
		{0, 0, 1, 240 * time.Millisecond},
		{3, time.Second, 0.5, time.Second},
		{0, time.Hour, 0.5, 30 * time.Second},
	}
	for _, c := range cases {
		if got := retryBackoff(c.n, c.hint, c.jitter); got != c.want {
			t.Errorf("retryBackoff(%d, %v, %v) = %v, want %v", c.n, c.hint, c.jitter, got, c.want)
		}
	}
}

func TestJobListPages(t *testing.T) {
	f := startFakeServer(t)
	var ids []string
	for i := range 8 {
		ids = append(ids, f.addJob(fmt.Sprintf("j%d", i), pelotonv1.JobState_JOB_STATE_RUNNING))
	}
	r := runCLI(t, f.addr, false, "job", "list")
	if r.code != 0 {
		t.Fatalf("job list: %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 1+len(ids) {
		t.Fatalf("job list shows %d lines, want a header and %d jobs:\n%s", len(lines), len(ids), r.stdout)
	}
	for i, id := range ids {
		if !strings.HasPrefix(lines[1+i], id+" ") {
			t.Errorf("line %d is %q, want job %s (oldest first)", 1+i, lines[1+i], id)
		}
	}
	f.mu.Lock()
	calls := f.listCalls
	f.mu.Unlock()
	if calls != 3 {
		t.Errorf("%d pages fetched, want 3 of at most %d jobs", calls, fakePageSize)
	}
	r = runCLI(t, f.addr, false, "job", "list", "--limit", "4")
	if got := strings.Count(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || got != 4 {
		t.Fatalf("job list --limit 4: %d, %d jobs:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	r = runCLI(t, f.addr, false, "job", "list", "--label", "=x")
	if r.code == 0 || !strings.Contains(r.stderr, "--label") {
		t.Fatalf("job list --label =x: %d %s", r.code, r.stderr)
	}
}
