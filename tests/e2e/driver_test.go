package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// examples/driver: a driver task launches executors as a second job through
// the API address it is handed, scales them 2 -> 4 -> 1, collects their
// results and stops them. Needs python3 with the Python client's packages
// (clients/python/requirements.txt; CI installs them).
func TestDriverLaunchesExecutors(t *testing.T) {
	s := startDev(t, filepath.Join(t.TempDir(), "data"))
	cmd := exec.Command("python3", repoFile("examples", "driver", "submit.py"), "--addr", s.Addr, "--timeout", "150")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"calls the API at " + s.Addr, "scaled up to 4", "scaled down to 1: only instance 0 runs", "executors KILLED", "driver SUCCEEDED"} {
		if !strings.Contains(text, want) {
			t.Errorf("driver output lacks %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`total \d+ ok`).MatchString(text) {
		t.Errorf("driver's total is wrong:\n%s", text)
	}
	// The executors' job: one job of the driver's, four instances made,
	// all stopped.
	jobs := s.MustCLI("job", "list")
	if !strings.Contains(jobs, "executors-of-") {
		t.Errorf("no executors job in:\n%s", jobs)
	}
	t.Logf("%s", text)
}
