package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

const canaryService = `name: canary
type: service
instances: 10
sla: {maxUnavailable: 2}
task:
  command: sim
  env: {V: "%s"%s}
  healthCheck: {command: ["true"]}
  resources: {cpu: 0.5, memMb: 16}
`

// sampleServing samples a service's instances from outside, over HTTP,
// every 100 ms, until finish: the fewest available (running and healthy) at once, and
// the fewest of those on a given config version.
func sampleServing(s *server, job, config string, instances int) (finish func() (minUp, minOnConfig, samples int)) {
	leastUp, leastOnConfig := instances, instances
	stop := testkit.Sample(&s.API, job, 100*time.Millisecond, func(ts []testkit.Task) {
		up, onConfig := 0, 0
		for _, tk := range ts {
			if tk.State == "TASK_STATE_RUNNING" && tk.Health == "HEALTH_STATE_HEALTHY" {
				up++
				if tk.ConfigVersion == config {
					onConfig++
				}
			}
		}
		leastUp, leastOnConfig = min(leastUp, up), min(leastOnConfig, onConfig)
	})
	return func() (int, int, int) {
		samples, _ := stop()
		return leastUp, leastOnConfig, samples
	}
}

// A canary update through the binary: ten instances, SLA 2, two canaries.
// A config whose health check fails reverts by itself with never more than
// two instances unavailable and the old config serving the rest
// throughout; a good one waits for its promotion (the CLI says so), is
// promoted over HTTP, and then moves the rest. Promoting twice is refused.
func TestCanaryRevertsAndPromotes(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=4,cpu=4,mem=8192,duration=1h")
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "v1.yaml", fmt.Sprintf(canaryService, "1", ""))))
	waitFor(t, 30*time.Second, "10 running", func() bool { return runningIn(t, s, job) == 10 })

	w := sampleServing(s, job, "1", 10)
	bad := writeFile(t, dir, "bad.yaml", fmt.Sprintf(canaryService, "2", `, PELOTON_SIM_HEALTH: unhealthy`))
	r := s.CLI("job", "update", job, "-f", bad, "--canary", "2", "--batch-size", "2", "--rollback-on-failure", "--wait", "--timeout", "60s")
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "ROLLED_BACK") {
		t.Fatalf("canary update to a failing config: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	waitFor(t, 30*time.Second, "every instance back on config 1", func() bool { return runningOnConfig(t, s, job, "1") == 10 })
	minUp, minOld, samples := w()
	t.Logf("failing canary reverted: %d samples, at worst %d of 10 available, %d of them on config 1", samples, minUp, minOld)
	if samples < 5 || minUp < 8 || minOld < 8 {
		t.Errorf("during the revert: %d samples, at worst %d available and %d on the old config; the SLA keeps 8", samples, minUp, minOld)
	}
	moved := 0
	for _, tk := range s.Tasks(job) {
		if tk.Instance >= 2 && tk.Run > 1 {
			moved++
		}
	}
	if moved > 0 {
		t.Errorf("%d instances that were not canaries were restarted", moved)
	}

	// A good config: the canaries move and the update waits for promotion.
	good := writeFile(t, dir, "good.yaml", fmt.Sprintf(canaryService, "3", ""))
	var u updateJSON
	if err := json.Unmarshal([]byte(s.MustCLI("job", "update", job, "-f", good, "--canary", "2", "--batch-size", "2", "-o", "json")), &u); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the canaries waiting for promotion", func() bool {
		return strings.Contains(getUpdate(t, s, u.ID).Message, "waiting for promotion")
	})
	time.Sleep(time.Second) // nothing more moves while it waits
	if got := getUpdate(t, s, u.ID); got.InstancesDone != 2 || got.State != "UPDATE_STATE_ROLLING_FORWARD" {
		t.Fatalf("waiting for promotion: %+v", got)
	}
	if out := s.MustCLI("update", "get", u.ID); !strings.Contains(out, "waiting for promotion (peloton update promote "+u.ID+")") {
		t.Errorf("update get does not say how to promote:\n%s", out)
	}
	code, body := s.HTTP("POST", "/v1/updates/"+u.ID+":promote", `{}`)
	if code != 200 {
		t.Fatalf("promote over HTTP: %d %s", code, body)
	}
	waitFor(t, 60*time.Second, "promoted update succeeded", func() bool { return getUpdate(t, s, u.ID).State == "UPDATE_STATE_SUCCEEDED" })
	out := s.MustCLI("update", "get", u.ID)
	if !strings.Contains(out, "2, promoted by token:") {
		t.Errorf("update get does not say who promoted:\n%s", out)
	}
	if r := s.CLI("update", "promote", u.ID); r.Code == 0 {
		t.Errorf("promoting an ended update accepted: %s", r.Stdout)
	}
	if r := s.CLI("job", "update", job, "-f", good, "--canary", "10"); r.Code != 1 || !strings.Contains(r.Stderr, "canary") {
		t.Errorf("10 canaries of 10 instances: exit %d %s", r.Code, r.Stderr)
	}

	// Over HTTP, promoting itself once its canary has been available 1 s.
	spec := `{"name":"canary","type":"JOB_TYPE_SERVICE","instances":10,"sla":{"maxUnavailable":"2"},` +
		`"task":{"command":"sim","env":{"V":"4"},"healthCheck":{"command":["true"]},"resources":{"cpu":0.5,"memMb":16}}}`
	code, body = s.HTTP("POST", "/v1/jobs/"+job+"/updates?canary=1&batchSize=2&autoPromoteAfterSeconds=1", spec)
	if code != 200 {
		t.Fatalf("canary update over HTTP: %d %s", code, body)
	}
	var resp struct {
		Update struct {
			ID     string `json:"id"`
			Canary uint32 `json:"canary"`
		} `json:"update"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.Update.Canary != 1 {
		t.Fatalf("canary update over HTTP: %v %s", err, body)
	}
	waitFor(t, 60*time.Second, "promoted by itself and succeeded", func() bool { return getUpdate(t, s, resp.Update.ID).State == "UPDATE_STATE_SUCCEEDED" })
	if out := s.MustCLI("update", "get", resp.Update.ID); !strings.Contains(out, "promoted by itself") {
		t.Errorf("update get does not say it promoted itself:\n%s", out)
	}
}

// Extra canaries through the binary: ten instances, SLA 2; two canaries
// beside them on a failing config revert by themselves with all ten
// serving on the old config throughout and none restarted; on a good
// config they wait for promotion (update get says which instances), and
// promoted, the extra two go and the ten move under the SLA.
func TestExtraCanaries(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", "sim,hosts=4,cpu=4,mem=8192,duration=1h")
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "v1.yaml", fmt.Sprintf(canaryService, "1", ""))))
	waitFor(t, 30*time.Second, "10 running", func() bool { return runningIn(t, s, job) == 10 })

	w := sampleServing(s, job, "1", 10)
	bad := writeFile(t, dir, "bad.yaml", fmt.Sprintf(canaryService, "2", `, PELOTON_SIM_HEALTH: unhealthy`))
	r := s.CLI("job", "update", job, "-f", bad, "--canary", "2", "--canary-extra", "--rollback-on-failure", "--wait", "--timeout", "60s")
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "ROLLED_BACK") {
		t.Fatalf("extra canaries on a failing config: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	waitFor(t, 30*time.Second, "the extra canaries gone", func() bool { return runningIn(t, s, job) == 10 })
	minUp, minOld, samples := w()
	t.Logf("failing extra canaries reverted: %d samples, at worst %d of 10 available, %d of them on config 1", samples, minUp, minOld)
	if samples < 5 || minOld < 10 {
		t.Errorf("during the revert: %d samples, at worst %d of the job's 10 on its config; extra canaries take none down", samples, minOld)
	}
	for _, tk := range s.Tasks(job) {
		if tk.Instance < 10 && tk.Run > 1 {
			t.Errorf("instance %d was restarted by extra canaries", tk.Instance)
		}
	}

	good := writeFile(t, dir, "good.yaml", fmt.Sprintf(canaryService, "3", ""))
	var u updateJSON
	if err := json.Unmarshal([]byte(s.MustCLI("job", "update", job, "-f", good, "--canary", "2", "--canary-extra", "--batch-size", "2", "-o", "json")), &u); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the extra canaries waiting for promotion", func() bool {
		return strings.Contains(getUpdate(t, s, u.ID).Message, "waiting for promotion")
	})
	if out := s.MustCLI("update", "get", u.ID); !strings.Contains(out, "2 extra instances (10-11) beside the job's") {
		t.Errorf("update get does not say which instances are the extra canaries:\n%s", out)
	}
	if n := runningOnConfig(t, s, job, "1"); n != 10 {
		t.Errorf("%d instances on config 1 while the extra canaries wait, want all 10", n)
	}
	w = sampleServing(s, job, "", 10)
	s.MustCLI("update", "promote", u.ID)
	waitFor(t, 60*time.Second, "promoted update succeeded", func() bool { return getUpdate(t, s, u.ID).State == "UPDATE_STATE_SUCCEEDED" })
	waitFor(t, 30*time.Second, "ten instances on the new config and the extra two gone", func() bool {
		return runningOnConfig(t, s, job, getUpdate(t, s, u.ID).ToVersion) == 10 && runningIn(t, s, job) == 10
	})
	minUp, _, samples = w()
	t.Logf("promoted: %d samples, at worst %d available", samples, minUp)
	if minUp < 8 {
		t.Errorf("at worst %d available after the promotion; the SLA keeps 8", minUp)
	}
	if r := s.CLI("job", "update", job, "-f", good, "--canary-extra"); r.Code == 0 || !strings.Contains(r.Stderr, "canary") {
		t.Errorf("--canary-extra without --canary: exit %d %s", r.Code, r.Stderr)
	}
}
