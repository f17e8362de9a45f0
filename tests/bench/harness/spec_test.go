package harness

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

const validScenario = `
name: tiny
seed: 7
sizes:
  full: {hosts: 20, jobs: 6, tasksPerJob: 10, endToEndBudget: 5s}
  small: {hosts: 10, jobs: 3, tasksPerJob: 4}
hosts:
  shapes:
    - {weight: 3, cpu: 8, memMB: 1024}
    - {weight: 1, cpu: 16, memMB: 2048, gpu: 2, labels: {gpu: v100}}
  labels: {zone: [a, b]}
  blocks: [{key: rack, size: 4, prefix: r}]
jobs:
  - name: plain
    weight: 2
    cpu: [1, 2]
    memMB: 100
  - name: picky
    cpu: {min: 0.5, max: 1.5}
    strategy: spread
    maxPerHost: 1
    spread: [{key: zone, fraction: 0.5}]
    constraints:
      - [{key: zone, op: "==", values: [a]}]
    duration: 2s
arrival: {pattern: steady, jobsPerSecond: 2}
`

func TestParseRejectsBadScenarios(t *testing.T) {
	cases := []struct {
		name, from, to, field string
	}{
		{"no name", "name: tiny", "name: ''", "name"},
		{"no small size", "small: {hosts: 10, jobs: 3, tasksPerJob: 4}", "", "sizes.small"},
		{"zero hosts", "small: {hosts: 10,", "small: {hosts: 0,", "sizes.small.hosts"},
		{"no tasks per job", "tasksPerJob: 4}", "tasksPerJob: 0}", "sizes.small.tasksPerJob"},
		{"negative capacity", "cpu: 8, memMB: 1024", "cpu: -8, memMB: 1024", "hosts.shapes[0]"},
		{"unknown op", `op: "=="`, `op: "=~"`, "jobs[1].constraints[0][0].op"},
		{"bad range", "{min: 0.5, max: 1.5}", "{min: 2, max: 1}", "jobs[1].cpu"},
		{"no cpu", "cpu: [1, 2]", "", "jobs[0].cpu"},
		{"bad strategy", "strategy: spread", "strategy: scatter", "jobs[1].strategy"},
		{"spread without max", "fraction: 0.5", "fraction: 0", "jobs[1].spread[0]"},
		{"steady without rate", "jobsPerSecond: 2", "jobsPerSecond: 0", "arrival.jobsPerSecond"},
		{"bad pattern", "pattern: steady", "pattern: random", "arrival.pattern"},
		{"unknown field", "seed: 7", "seed: 7\ncolour: red", "colour"},
		{"bad duration", "duration: 2s", "duration: soon", "duration"},
	}
	if _, err := Parse("valid.yaml", []byte(validScenario)); err != nil {
		t.Fatalf("the valid scenario: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(validScenario, c.from) {
				t.Fatalf("case does not apply: %q not in the scenario", c.from)
			}
			_, err := Parse("bad.yaml", []byte(strings.Replace(validScenario, c.from, c.to, 1)))
			if !errors.Is(err, ErrInvalidScenario) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("got %v, want ErrInvalidScenario naming %q", err, c.field)
			}
		})
	}
}

func TestBuildFollowsTheScenario(t *testing.T) {
	s, err := Parse("valid.yaml", []byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Build(SizeFull)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Hosts) != 20 || len(w.Jobs) != 6 || w.Tasks != 60 || !w.Steady {
		t.Fatalf("hosts %d, jobs %d, tasks %d, steady %v", len(w.Hosts), len(w.Jobs), w.Tasks, w.Steady)
	}
	for i, h := range w.Hosts {
		gpuHost := i%4 == 3
		if (h.Capacity.GPU == 2) != gpuHost || (h.Labels["gpu"] == "v100") != gpuHost {
			t.Errorf("host %d: %+v, want gpu host %v", i, h, gpuHost)
		}
		if want := []string{"a", "b"}[i%2]; h.Labels["zone"] != want {
			t.Errorf("host %d zone %q, want %q", i, h.Labels["zone"], want)
		}
		if want := "r" + string(rune('0'+i/4)); h.Labels["rack"] != want {
			t.Errorf("host %d rack %q, want %q", i, h.Labels["rack"], want)
		}
	}
	for j, job := range w.Jobs {
		picky := j%3 == 2
		if (job.Group == "picky") != picky {
			t.Errorf("job %d in group %s", j, job.Group)
		}
		if want := time.Duration(j) * 500 * time.Millisecond; job.Arrival != want {
			t.Errorf("job %d arrives at %s, want %s", j, job.Arrival, want)
		}
		if !picky {
			if job.Resources.MilliCPU != 1000 && job.Resources.MilliCPU != 2000 || job.Constraints != nil || job.Strategy != placement.StrategyPack {
				t.Errorf("plain job %d: %+v", j, job)
			}
			continue
		}
		if job.Resources.MilliCPU < 500 || job.Resources.MilliCPU > 1500 || job.Duration != 2*time.Second ||
			job.Strategy != placement.StrategySpread || job.MaxPerHost != 1 ||
			len(job.Spread) != 1 || job.Spread[0].Max != 5 ||
			len(job.Constraints) != 1 || job.Constraints[0].Op != model.OpEquals {
			t.Errorf("picky job %d: %+v", j, job)
		}
		spec := w.JobSpec(j)
		if spec.Type != model.JobService || spec.Instances != 10 || spec.Task.Env["PELOTON_SIM_DURATION"] != "2s" {
			t.Errorf("picky job %d spec: %+v", j, spec)
		}
	}
	// The same scenario builds the same workload.
	again, _ := s.Build(SizeFull)
	for j := range w.Jobs {
		if w.Jobs[j].Resources != again.Jobs[j].Resources {
			t.Fatalf("job %d differs between builds", j)
		}
	}
	if _, err := s.Build("huge"); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("unknown size: %v", err)
	}
}

// The placement check catches what it exists to catch.
func TestPlacementCheckFindsBrokenPlacements(t *testing.T) {
	hosts := []placement.Host{
		{ID: "c/h0", Free: model.Resources{MilliCPU: 2000}, Labels: map[string]string{"zone": "a"}, Ports: 10, Schedulable: true},
		{ID: "c/h1", Free: model.Resources{MilliCPU: 2000}, Labels: map[string]string{"zone": "b"}, Ports: 10, Schedulable: true},
		{ID: "c/h2", Free: model.Resources{MilliCPU: 2000}, Labels: map[string]string{"zone": "b"}, Ports: 10},
	}
	zoneA := []model.Constraint{{Key: "zone", Op: model.OpEquals, Values: []string{"a"}}}
	tasks := []placement.Task{
		{Ref: 0, Job: "j", Resources: model.Resources{MilliCPU: 1000}, MaxPerHost: 1},
		{Ref: 1, Job: "j", Resources: model.Resources{MilliCPU: 1000}, MaxPerHost: 1},
		{Ref: 2, Job: "k", Resources: model.Resources{MilliCPU: 1000}, Constraints: zoneA},
		{Ref: 3, Job: "g", Resources: model.Resources{MilliCPU: 1000}, Gang: 1},
		{Ref: 4, Job: "g", Resources: model.Resources{MilliCPU: 1000}, Gang: 1},
	}
	cases := []struct {
		name       string
		asg        []placement.Assignment
		over, rule int
	}{
		{"sound", []placement.Assignment{{Ref: 0, Host: "c/h0"}, {Ref: 1, Host: "c/h1"}, {Ref: 2, Host: "c/h0"}}, 0, 0},
		{"too much cpu", []placement.Assignment{{Ref: 0, Host: "c/h1"}, {Ref: 2, Host: "c/h0"}, {Ref: 3, Host: "c/h1"}, {Ref: 4, Host: "c/h1"}}, 1, 0},
		{"per-host limit", []placement.Assignment{{Ref: 0, Host: "c/h1"}, {Ref: 1, Host: "c/h1"}}, 0, 1},
		{"constraint", []placement.Assignment{{Ref: 2, Host: "c/h1"}}, 0, 1},
		{"half a gang", []placement.Assignment{{Ref: 3, Host: "c/h0"}}, 0, 1},
		{"closed host", []placement.Assignment{{Ref: 0, Host: "c/h2"}}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := newPlacementCheck(hosts)
			ch.apply(tasks, c.asg)
			if ch.overcommitted() != c.over || ch.violations != c.rule {
				t.Errorf("overcommitted %d, violations %d; want %d, %d", ch.overcommitted(), ch.violations, c.over, c.rule)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.99, 4 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
	}
	for _, c := range cases {
		if got := quantile(c.in, c.q); got != c.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", c.in, c.q, got, c.want)
		}
	}
}

const validAPIScenario = `
name: api-tiny
seed: 7
api: {call: batch, batchSize: 100, target: {perSecond: 1000}}
sizes:
  full: {hosts: 20, jobs: 600, clients: 2, apiBudget: 30s}
  small: {hosts: 10, jobs: 30, clients: 1, apiBudget: 10s}
hosts:
  shapes:
    - {cpu: 8, memMB: 1024, diskMB: 102400}
  labels: {zone: [a, b]}
jobs:
  - name: one
    distinct: true
    cpu: {min: 0.1, max: 1}
    constraints:
      - [{key: zone, op: "==", values: [a]}]
`

func TestParseRejectsBadAPIScenarios(t *testing.T) {
	s, err := Parse("valid.yaml", []byte(validAPIScenario))
	if err != nil || !s.IsAPI() {
		t.Fatalf("the valid API scenario: %v", err)
	}
	cases := []struct {
		name, from, to, field string
	}{
		{"unknown call", "call: batch", "call: stream", "api.call"},
		{"batch without a size", "batchSize: 100", "batchSize: 0", "api.batchSize"},
		{"negative target", "perSecond: 1000", "perSecond: -1", "api.target"},
		{"no clients", "clients: 1,", "clients: 0,", "sizes.small.clients"},
		{"batch without a budget", "clients: 1, apiBudget: 10s", "clients: 1", "sizes.small.apiBudget"},
		{"single without a duration", "call: batch, batchSize: 100", "call: single", "apiDuration"},
		{"two shapes", "- {cpu: 8, memMB: 1024, diskMB: 102400}", "- {cpu: 8, memMB: 1024}\n    - {cpu: 4, memMB: 512}", "hosts"},
		{"a label the sim hosts lack", "labels: {zone: [a, b]}", "labels: {rack: [a, b]}", "hosts.labels.rack"},
		{"gangs", "distinct: true", "distinct: true\n    gangSize: 2", "jobs[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(validAPIScenario, c.from) {
				t.Fatalf("case does not apply: %q not in the scenario", c.from)
			}
			_, err := Parse("bad.yaml", []byte(strings.Replace(validAPIScenario, c.from, c.to, 1)))
			if !errors.Is(err, ErrInvalidScenario) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("got %v, want ErrInvalidScenario naming %q", err, c.field)
			}
		})
	}
	// The dev server's --hosts flag makes the scenario's hosts.
	w, err := s.Build(SizeSmall)
	if err != nil {
		t.Fatal(err)
	}
	if got := simHostsFlag(s, len(w.Hosts)); got != "sim:bench,hosts=10,cpu=8,mem=1024,duration=24h,zones=a|b" {
		t.Fatalf("--hosts %s", got)
	}
}
