package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A periodic job through the binary: created from examples/nightly.yaml's
// shape, it lists its next run, launches a run at the tick that succeeds,
// lists its runs, runs by hand, is suspended and resumed over HTTP, takes
// an update for its next runs, refuses a bad schedule naming each field,
// and stopped, launches no more.
func TestPeriodicJob(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=2,cpu=4,mem=8192")
	spec := `name: report
instances: 2
schedule:
  cron: "* * * * *"
  timeZone: Europe/Berlin
  concurrencyPolicy: forbid
  keepRuns: 2
task:
  command: sim
  env: {PELOTON_SIM_DURATION: %s}
  resources: {cpu: 0.1, memMb: 16}
`
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "report.yaml", fmt.Sprintf(spec, "2s"))))
	if out := s.MustCLI("job", "list"); !strings.Contains(out, "NEXT RUN") || !strings.Contains(out, "in ") {
		t.Errorf("job list shows no next run:\n%s", out)
	}
	get := s.MustCLI("job", "get", job)
	for _, want := range []string{"* * * * * (Europe/Berlin), FORBID", "Next run:", "0 launched"} {
		if !strings.Contains(get, want) {
			t.Errorf("job get lacks %q:\n%s", want, get)
		}
	}
	var first struct {
		Jobs []struct {
			ID     string `json:"id"`
			Spec   struct{ Name string }
			Status struct {
				State string `json:"state"`
				RunOf struct {
					JobID    string    `json:"jobId"`
					TickTime time.Time `json:"tickTime"`
				} `json:"runOf"`
			} `json:"status"`
		} `json:"jobs"`
	}
	waitFor(t, 90*time.Second, "the first tick's run to succeed", func() bool {
		s.JSON("GET", "/v1/jobs?runOf="+job, "", &first)
		return len(first.Jobs) == 1 && first.Jobs[0].Status.State == "JOB_STATE_SUCCEEDED"
	})
	run := first.Jobs[0]
	if run.Status.RunOf.JobID != job || run.Status.RunOf.TickTime.Second() != 0 || !strings.HasPrefix(run.Spec.Name, "report-") {
		t.Errorf("the run: %+v", run)
	}
	if out := s.MustCLI("job", "runs", job); !strings.Contains(out, run.ID) || !strings.Contains(out, "SUCCEEDED") {
		t.Errorf("job runs:\n%s", out)
	}
	if out := s.MustCLI("job", "get", run.ID); !strings.Contains(out, "Run of:") || !strings.Contains(out, job) {
		t.Errorf("job get of the run does not link its job:\n%s", out)
	}

	// By hand, over the CLI; suspended and resumed over HTTP.
	byHand := s.MustCLI("job", "run", job)
	if !strings.Contains(byHand, "launched") {
		t.Errorf("job run: %s", byHand)
	}
	if code, body := s.HTTP("POST", "/v1/jobs/"+job+"/suspend", ""); code != 200 || !strings.Contains(string(body), `"suspended":true`) {
		t.Fatalf("suspend over HTTP: %d %s", code, body)
	}
	if out := s.MustCLI("job", "list"); !strings.Contains(out, "suspended") {
		t.Errorf("job list of a suspended job:\n%s", out)
	}
	if code, body := s.HTTP("POST", "/v1/jobs/"+job+"/resume", ""); code != 200 || !strings.Contains(string(body), "nextRunTime") {
		t.Fatalf("resume over HTTP: %d %s", code, body)
	}

	// An update takes effect at the next run.
	s.MustCLI("job", "update", job, "-f", writeFile(t, dir, "report2.yaml", fmt.Sprintf(spec, "3s")))
	if out := s.MustCLI("job", "get", job); !strings.Contains(out, "Config version:") {
		t.Errorf("job get after the update:\n%s", out)
	}

	// Refused, naming each field, changing nothing.
	bad := writeFile(t, dir, "bad.yaml", `name: bad
type: service
instances: 1
schedule: {cron: "61 * * * *", timeZone: Nowhere/Land, keepRuns: 1000}
task: {command: sim, resources: {cpu: 0.1, memMb: 16}}
`)
	r := s.CLI("job", "create", "-f", bad)
	for _, want := range []string{"schedule:", "schedule.cron", "schedule.time_zone", "schedule.keep_runs"} {
		if r.Code == 0 || !strings.Contains(r.Stderr, want) {
			t.Errorf("a bad schedule: exit %d, no %q in %s", r.Code, want, r.Stderr)
		}
	}
	policy := writeFile(t, dir, "policy.yaml", `name: bad
instances: 1
schedule: {cron: "@daily", concurrencyPolicy: sometimes}
task: {command: sim, resources: {cpu: 0.1, memMb: 16}}
`)
	if r := s.CLI("job", "create", "-f", policy); r.Code == 0 || !strings.Contains(r.Stderr, "schedule.concurrency_policy") {
		t.Errorf("an unknown policy: exit %d %s", r.Code, r.Stderr)
	}
	if r := s.CLI("job", "suspend", run.ID); r.Code == 0 || !strings.Contains(r.Stderr, "no schedule") {
		t.Errorf("suspend of a job without a schedule: exit %d %s", r.Code, r.Stderr)
	}

	// Stopped: it launches no more.
	s.MustCLI("job", "stop", job)
	waitFor(t, 30*time.Second, "the job killed", func() bool {
		return strings.Contains(s.MustCLI("job", "get", job), "KILLED")
	})
	var after struct {
		Jobs []struct{ ID string } `json:"jobs"`
	}
	s.JSON("GET", "/v1/jobs?runOf="+job, "", &after)
	n := len(after.Jobs)
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 3*time.Second)))
	s.JSON("GET", "/v1/jobs?runOf="+job, "", &after)
	if len(after.Jobs) > n {
		t.Errorf("a stopped job launched %d runs more", len(after.Jobs)-n)
	}
}
