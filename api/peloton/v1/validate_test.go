package pelotonv1

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"
)

// checked runs one check of a specChecker and returns its problems as
// "path: message" lines, sorted as ValidateJobSpec sorts them.
func checked(run func(v *specChecker)) []string {
	v := &specChecker{}
	run(v)
	SortFieldErrors(v.problems)
	var out []string
	for _, p := range v.problems {
		out = append(out, p.String())
	}
	return out
}

func TestJobLevelChecks(t *testing.T) {
	cases := []struct {
		name string
		run  func(v *specChecker)
		want []string
	}{
		{"name empty", func(v *specChecker) { v.name("  ") }, []string{"name: is required"}},
		{"name too long", func(v *specChecker) { v.name(strings.Repeat("é", MaxJobNameLength+1)) },
			[]string{"name: must be at most 128 characters"}},
		{"name with a tab", func(v *specChecker) { v.name("a\tb") }, []string{"name: must not contain control characters"}},
		{"name fine", func(v *specChecker) { v.name("web") }, nil},
		{"instances zero", func(v *specChecker) { v.instances(&JobSpec{}) }, []string{"instances: must be between 1 and 1000000"}},
		{"max_running above instances", func(v *specChecker) { v.instances(&JobSpec{Instances: 2, MaxRunning: 3}) },
			[]string{"max_running: must not exceed instances (2)"}},
		{"daemon with instances", func(v *specChecker) { v.instances(&JobSpec{Type: JobType_JOB_TYPE_DAEMON, Instances: 2}) },
			[]string{"instances: must be left out for a daemon job: it runs one instance on every matching host"}},
		{"gang ignored with bad instances", func(v *specChecker) { v.gang(&JobSpec{GangSize: 4}) }, nil},
		{"gang not a divisor, max_running below it", func(v *specChecker) { v.gang(&JobSpec{Instances: 6, GangSize: 4, MaxRunning: 2}) },
			[]string{"gang_size: instances (6) must be a multiple of it", "max_running: must be 0 or at least gang_size (4): a gang runs whole"}},
		{"gang_restart without a gang", func(v *specChecker) { v.gang(&JobSpec{Instances: 2, GangRestart: true}) },
			[]string{"gang_restart: needs gang_size > 1"}},
		{"failover regions with mode any", func(v *specChecker) {
			v.failover(&FailoverPolicy{Mode: FailoverPolicy_MODE_ANY, Regions: []string{"a"}})
		}, []string{"failover.regions: only allowed with mode REGIONS"}},
		{"failover mode regions without regions", func(v *specChecker) { v.failover(&FailoverPolicy{Mode: FailoverPolicy_MODE_REGIONS}) },
			[]string{"failover.regions: at least one region is needed with mode REGIONS"}},
		{"failover empty region", func(v *specChecker) {
			v.failover(&FailoverPolicy{Mode: FailoverPolicy_MODE_REGIONS, Regions: []string{"a", " "}})
		}, []string{"failover.regions[1]: must not be empty"}},
		{"failover unknown mode", func(v *specChecker) { v.failover(&FailoverPolicy{Mode: 9}) },
			[]string{"failover.mode: unknown value 9"}},
		{"label key with a newline", func(v *specChecker) { v.labelKeys(&JobSpec{Labels: map[string]string{"a\n": "v", "b": "v"}}) },
			[]string{`labels["a\n"]: key must be a non-empty printable string`}},
	}
	for _, tc := range cases {
		if got := checked(tc.run); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}
	if !knownJobType(JobType_JOB_TYPE_UNSPECIFIED) || knownJobType(JobType(42)) {
		t.Errorf("knownJobType: unspecified must be known, 42 unknown")
	}
}

func TestWorkloadChecks(t *testing.T) {
	ports := map[string]int{"web": 0}
	cases := []struct {
		name string
		run  func(v *specChecker)
		want []string
	}{
		{"container without an image", func(v *specChecker) { v.container("c", &Container{PullPolicy: 9}) },
			[]string{"c.image: is required", "c.pull_policy: unknown value 9"}},
		{"container with a bad image", func(v *specChecker) { v.container("c", &Container{Image: "Bad Image"}) },
			[]string{`c.image: "Bad Image" is not an image reference such as nginx:1.27 or registry.example:5000/team/app@sha256:<64 hex>`}},
		{"ports: names and numbers once each", func(v *specChecker) {
			v.ports("t", []*PortSpec{{Name: "web", Port: 80}, {Name: "web", Port: 80}, nil, {Name: "Web"}, {Port: 70000}})
		}, []string{
			`t.ports[1].name: "web" is already the name of ports[0]`,
			"t.ports[1].port: 80 is already the port of ports[0]",
			"t.ports[2]: must not be empty",
			`t.ports[3].name: "Web" must be lower case letters, digits and '-', start with a letter, at most 15 characters`,
			"t.ports[4].name: is required",
			"t.ports[4].port: 70000 is out of range (1-65535, or 0 for a free host port)",
		}},
		{"volumes: a duplicate names the last volume before it", func(v *specChecker) {
			v.volumes("t", []*Volume{
				{Name: "a", SizeMb: 1, Path: "/x"}, {Name: "a", SizeMb: 1, Path: "/x"}, {Name: "a", SizeMb: 1, Path: "/x"},
			})
		}, []string{
			`t.volumes[1].name: "a" is already the name of volumes[0]`,
			`t.volumes[1].path: "/x" is already the path of volumes[0]`,
			`t.volumes[2].name: "a" is already the name of volumes[1]`,
			`t.volumes[2].path: "/x" is already the path of volumes[1]`,
		}},
		{"volume size, path and name", func(v *specChecker) {
			v.volumes("t", []*Volume{{Name: strings.Repeat("v", 64), Path: "/a/.."}, {Name: "b", SizeMb: 1, Path: "/"}})
		}, []string{
			`t.volumes[0].name: "` + strings.Repeat("v", 64) + `" must be lower case letters, digits and '-', start with a letter, at most 63 characters`,
			"t.volumes[0].path: must not contain NUL bytes or ..",
			"t.volumes[0].size_mb: must be between 1 and 16777216",
			"t.volumes[1].path: must be an absolute path other than /",
		}},
		{"probe of no kind", func(v *specChecker) { v.probe("h", &HealthCheck{}, ports) },
			[]string{"h: needs one of command, http or tcp"}},
		{"probe of two kinds", func(v *specChecker) {
			v.probe("h", &HealthCheck{Command: []string{"true"}, Tcp: &TCPProbe{Port: "web"}}, ports)
		}, []string{"h: sets more than one of command, http and tcp; use one"}},
		{"probe command", func(v *specChecker) { v.probe("h", &HealthCheck{Command: []string{" ", "a\x00"}}, ports) },
			[]string{"h.command[0]: must name the command to run", "h.command[1]: must not contain NUL bytes"}},
		{"probe http", func(v *specChecker) { v.probe("h", &HealthCheck{Http: &HTTPProbe{Port: "db", Path: "x y"}}, ports) },
			[]string{`h.http.path: must start with / and hold no spaces or control characters`, `h.http.port: "db" is not the name of one of the task's ports`}},
		{"probe tcp by number", func(v *specChecker) { v.probe("h", &HealthCheck{Tcp: &TCPProbe{Port: "0"}}, ports) },
			[]string{"h.tcp.port: 0 is out of range (1-65535)"}},
		{"probe durations and threshold", func(v *specChecker) {
			v.probe("h", &HealthCheck{
				Tcp: &TCPProbe{Port: "web"}, Interval: durationpb.New(-1), Timeout: &durationpb.Duration{Seconds: 7200}, FailureThreshold: 101,
			}, ports)
		}, []string{"h.failure_threshold: must be at most 100", "h.interval: must be between 0s and 1h0m0s", "h.timeout: must be between 0s and 1h0m0s"}},
	}
	for _, tc := range cases {
		if got := checked(tc.run); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}
}
