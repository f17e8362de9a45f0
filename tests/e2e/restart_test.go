package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Restarting tasks through the binary: a service instance gets a new run
// on the same config and the others keep theirs; three at once are
// refused by an SLA of two (nothing changes) and go with --force; a finished
// batch task, an instance the job does not have and an empty list are
// refused naming why.
func TestRestartTasks(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=2,cpu=4,mem=8192,duration=1h")
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "svc.yaml", fmt.Sprintf(sloService, "1", ""))))
	waitFor(t, 30*time.Second, "6 running", func() bool { return runningIn(t, s, job) == 6 })
	runs := map[uint32]uint32{}
	for _, tk := range s.Tasks(job) {
		runs[tk.Instance] = tk.Run
	}

	s.MustCLI("task", "restart", job, "3")
	waitFor(t, 30*time.Second, "instance 3 running its next run", func() bool {
		for _, tk := range s.Tasks(job) {
			if tk.Instance == 3 {
				return tk.Run == runs[3]+1 && tk.State == "TASK_STATE_RUNNING"
			}
		}
		return false
	})
	for _, tk := range s.Tasks(job) {
		if tk.Instance != 3 && tk.Run != runs[tk.Instance] {
			t.Errorf("instance %d was restarted too: run %d, was %d", tk.Instance, tk.Run, runs[tk.Instance])
		}
		if tk.ConfigVersion != "1" {
			t.Errorf("instance %d on config %s after a restart", tk.Instance, tk.ConfigVersion)
		}
	}

	// Three at once: the SLA (maxUnavailable 2) refuses and nothing moves.
	r := s.CLI("task", "restart", job, "0", "1", "2")
	if r.Code == 0 || !strings.Contains(r.Stderr, "SLA") {
		t.Fatalf("restart of three instances under an SLA of two: exit %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, tk := range s.Tasks(job) {
		if tk.Instance <= 2 && tk.Run != runs[tk.Instance] {
			t.Errorf("a refused restart restarted instance %d", tk.Instance)
		}
	}
	s.MustCLI("task", "restart", job, "0", "1", "2", "--force")
	waitFor(t, 30*time.Second, "instances 0-2 on their next runs", func() bool {
		n := 0
		for _, tk := range s.Tasks(job) {
			if tk.Instance <= 2 && tk.Run == runs[tk.Instance]+1 && tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		return n == 3
	})

	// Over HTTP, and the refusals.
	if code, body := s.HTTP("POST", "/v1/jobs/"+job+"/tasks/restart", `{"instances":[4]}`); code != 200 {
		t.Fatalf("restart over HTTP: %d %s", code, body)
	}
	if code, body := s.HTTP("POST", "/v1/jobs/"+job+"/tasks/restart", `{"instances":[]}`); code != 400 || !strings.Contains(string(body), "instances") {
		t.Errorf("restart of no instance: %d %s", code, body)
	}
	if r := s.CLI("task", "restart", job, "9"); r.Code == 0 || !strings.Contains(r.Stderr, "instance 9") {
		t.Errorf("restart of an instance the job does not have: exit %d %s", r.Code, r.Stderr)
	}
	batch := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "batch.yaml", `name: quick
instances: 1
task:
  command: sim
  env: {PELOTON_SIM_DURATION: 10ms}
  resources: {cpu: 0.1, memMb: 16}
`)))
	waitFor(t, 30*time.Second, "the batch job done", func() bool {
		for _, tk := range s.Tasks(batch) {
			return tk.State == "TASK_STATE_SUCCEEDED"
		}
		return false
	})
	if r := s.CLI("task", "restart", batch, "0"); r.Code == 0 || !strings.Contains(r.Stderr, "only a running job") && !strings.Contains(r.Stderr, "no run to restart") {
		t.Errorf("restart of a finished task: exit %d %s", r.Code, r.Stderr)
	}
}
