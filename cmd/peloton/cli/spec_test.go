package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// examples is the repository's examples directory, relative to this package.
var examples = filepath.Join("..", "..", "..", "examples")

func specPaths(t *testing.T, err error) []string {
	t.Helper()
	var se *pelotonv1.SpecError
	if !errors.As(err, &se) {
		t.Fatalf("want a *SpecError, got %T: %v", err, err)
	}
	var paths []string
	for _, p := range se.Problems {
		paths = append(paths, p.Path)
	}
	return paths
}

func TestExampleSpecs(t *testing.T) {
	hello, err := LoadJobSpec(filepath.Join(examples, "hello.yaml"), nil)
	if err != nil {
		t.Fatalf("hello.yaml: %v", err)
	}
	if hello.GetInstances() != 1 || hello.GetType() != pelotonv1.JobType_JOB_TYPE_BATCH || hello.GetTask().GetCommand() == "" {
		t.Errorf("hello.yaml decoded as %v", hello)
	}

	thousand, err := LoadJobSpec(filepath.Join(examples, "thousand.yaml"), nil)
	if err != nil {
		t.Fatalf("thousand.yaml: %v", err)
	}
	r := thousand.GetTask().GetResources()
	if thousand.GetInstances() != 1000 || thousand.GetMaxRunning() != 50 || r.GetCpu() != 0.01 || r.GetMemMb() != 8 || thousand.GetTask().GetCommand() != "true" {
		t.Errorf("thousand.yaml decoded as %v", thousand)
	}

	svc, err := LoadJobSpec(filepath.Join(examples, "service.yaml"), nil)
	if err != nil || svc.GetInstances() != 4 || svc.GetTask().GetCommand() != "sleep" || svc.GetType() != pelotonv1.JobType_JOB_TYPE_SERVICE {
		t.Fatalf("service.yaml: %v, %v", svc, err)
	}

	_, err = LoadJobSpec(filepath.Join(examples, "invalid.yaml"), nil)
	got := specPaths(t, err)
	want := []string{"task.container.image", "task.health_check", "task.ports[1].name", "task.ports[2].port", "task.resources.cpu", "task.sleep", "task.volumes"}
	if !slices.Equal(got, want) {
		t.Fatalf("invalid.yaml problems %v, want %v", got, want)
	}
}

func TestParseJobSpecFormats(t *testing.T) {
	yamlSpec := "name: why\ninstances: 2\ntask:\n  command: run\n  resources: {cpu: 1, mem_mb: 64}\n  constraints:\n    - {key: zone, op: not-in, values: [a]}\n"
	jsonSpec := `{"name":"why","instances":2,"task":{"command":"run","resources":{"cpu":1,"memMb":64},"constraints":[{"key":"zone","op":"CONSTRAINT_OP_NOT_IN","values":["a"]}]}}`
	a, err := ParseJobSpec([]byte(yamlSpec))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseJobSpec([]byte(jsonSpec))
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("YAML and JSON of one spec differ:\n%v\n%v", a, b)
	}

	cases := []struct {
		name, text string
		want       []string
	}{
		{"yaml reads yes as a bool", "name: yes\ninstances: 1\ntask: {command: c, resources: {cpu: 1, memMb: 1}}\n", []string{"name"}},
		{"yaml syntax", "name: [unclosed\n", []string{""}},
		{"empty file", "", []string{""}},
		{"a list, not a spec", "- a\n- b\n", []string{""}},
		{"yaml types", "name: x\ninstances: lots\ntask:\n  command: c\n  resources: {cpu: 1, memMb: 1}\n  env: {1BAD: x}\n", []string{"instances", `task.env["1BAD"]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJobSpec([]byte(tc.text))
			if got := specPaths(t, err); !slices.Equal(got, tc.want) {
				t.Fatalf("paths %v, want %v (%v)", got, tc.want, err)
			}
		})
	}
}

func TestParseJobSpecOverrides(t *testing.T) {
	spec, err := ParseJobSpec([]byte(`name: o
instances: 20
task: {command: run, resources: {cpu: 1, memMb: 64}}
overrides:
  - instances: 7
    task: {args: [seven]}
  - instances: 0-5, 10
    task: {env: {SHARD: low}, resources: {memMb: 128}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if o := spec.GetOverrides(); len(o) != 2 || o[0].GetInstances() != "7" || o[1].GetInstances() != "0-5, 10" {
		t.Fatalf("overrides %v", o)
	}
	_, err = ParseJobSpec([]byte("name: o\ninstances: 4\ntask: {command: run, resources: {cpu: 1, memMb: 64}}\n" +
		"overrides:\n  - {instances: 3, task: {args: [a]}}\n  - {instances: 1-3, task: {args: [b]}}\n"))
	if got, want := specPaths(t, err), []string{"overrides[0].instances", "overrides[1].instances"}; !slices.Equal(got, want) {
		t.Fatalf("paths %v, want %v (%v)", got, want, err)
	}
}

// BenchmarkParseJobSpecOverrides reads a spec with an override per
// instance as YAML and as JSON (which skips the YAML conversion).
func BenchmarkParseJobSpecOverrides(b *testing.B) {
	var y, j strings.Builder
	const n = 100_000
	fmt.Fprintf(&y, "name: big\ninstances: %d\ntask: {command: run, resources: {cpu: 0.1, memMb: 16}}\noverrides:\n", n)
	fmt.Fprintf(&j, `{"name":"big","instances":%d,"task":{"command":"run","resources":{"cpu":0.1,"memMb":16}},"overrides":[`, n)
	for i := range n {
		fmt.Fprintf(&y, "  - {instances: %d, task: {env: {SHARD: s%d}}}\n", i, i)
		if i > 0 {
			j.WriteByte(',')
		}
		fmt.Fprintf(&j, `{"instances":"%d","task":{"env":{"SHARD":"s%d"}}}`, i, i)
	}
	j.WriteString("]}")
	for name, data := range map[string]string{"yaml": y.String(), "json": j.String()} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseJobSpec([]byte(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestLoadJobSpecFromStdinAndMissingFile(t *testing.T) {
	spec, err := LoadJobSpec("-", strings.NewReader("name: s\ninstances: 1\ntask: {command: c, resources: {cpu: 1, memMb: 1}}\n"))
	if err != nil || spec.GetName() != "s" {
		t.Fatalf("stdin: %v, %v", spec, err)
	}
	_, err = LoadJobSpec(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if err == nil {
		t.Fatal("want an error for a missing file")
	}
	msg := specProblems("nope.yaml", err).Error()
	if !strings.Contains(msg, "cannot read job spec") || !strings.Contains(msg, "nope.yaml") {
		t.Fatalf("message %q", msg)
	}
}

// The workload examples decode into what their comments promise.
func TestWorkloadExamplesLoad(t *testing.T) {
	web, err := LoadJobSpec(filepath.Join(examples, "web.yaml"), nil)
	if err != nil {
		t.Fatalf("web.yaml: %v", err)
	}
	task := web.GetTask()
	if task.GetContainer().GetImage() != "nginx:1.27" || len(task.GetPorts()) != 1 || task.GetHealthCheck().GetHttp().GetPort() != "http" ||
		task.GetHealthCheck().GetInterval().AsDuration() != 5*time.Second || task.GetReadiness().GetTcp() == nil || web.GetMaxPerHost() != 1 {
		t.Errorf("web.yaml decoded as %v", web)
	}
	local, err := LoadJobSpec(filepath.Join(examples, "web-local.yaml"), nil)
	if err != nil || local.GetTask().GetContainer() != nil || local.GetTask().GetHealthCheck().GetHttp().GetPath() != "/healthz" {
		t.Errorf("web-local.yaml: %v, %v", local, err)
	}
	st, err := LoadJobSpec(filepath.Join(examples, "stateful.yaml"), nil)
	if err != nil || st.GetType() != pelotonv1.JobType_JOB_TYPE_STATEFUL || len(st.GetTask().GetVolumes()) != 1 {
		t.Errorf("stateful.yaml: %v, %v", st, err)
	}
	d, err := LoadJobSpec(filepath.Join(examples, "daemon.yaml"), nil)
	if err != nil || d.GetType() != pelotonv1.JobType_JOB_TYPE_DAEMON || d.GetInstances() != 0 {
		t.Errorf("daemon.yaml: %v, %v", d, err)
	}
}

// A JSON spec file is read as the HTTP API reads a body: a key given twice
// is refused with its path (decoders would keep the last one), the CLI
// exits non-zero and nothing reaches the server.
func TestJSONSpecDuplicateKeys(t *testing.T) {
	f := startFakeServer(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dup := write("dup.json", `{"name": "a", "instances": 1,
  "task": {"command": "true", "env": {"A": "1", "A": "2"}, "resources": {"cpu": 1, "memMb": 1}},
  "name": "b"}`)
	r := runCLI(t, f.addr, false, "job", "create", "-f", dup)
	if r.code != ExitError {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitError, r.stderr)
	}
	for _, want := range []string{"dup.json is not a valid job spec (2 problems)", "  name: given twice in one object", `  task.env["A"]: given twice in one object`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := f.creates(); n != 0 {
		t.Fatalf("%d creates reached the server, want 0", n)
	}

	// The same spec without the second key is created.
	ok := write("ok.json", `{"name": "a", "instances": 1, "task": {"command": "true", "env": {"A": "1"}, "resources": {"cpu": 1, "memMb": 1}}}`)
	if r := runCLI(t, f.addr, false, "job", "create", "-f", ok); r.code != 0 {
		t.Fatalf("ok.json: exit %d: %s", r.code, r.stderr)
	}

	// A batch of one JSON document and a pool spec are read the same way.
	if _, err := LoadJobSpecs(dup, nil); err == nil || !strings.Contains(err.Error(), "name: given twice in one object") {
		t.Errorf("LoadJobSpecs: %v", err)
	}
	pool := write("pool.json", `{"path": "/a", "path": "/b"}`)
	if _, err := LoadPoolSpec(pool, nil); err == nil || err.Error() != "path: given twice in one object" {
		t.Errorf("LoadPoolSpec: %v", err)
	}
}

// A YAML spec file with a key given twice in one mapping is refused with
// its line, in a single document and in any document of many; nothing
// reaches the server.
func TestYAMLSpecDuplicateKeys(t *testing.T) {
	f := startFakeServer(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"top.yaml", "name: a\ninstances: 1\ntask: {command: x, resources: {cpu: 1, memMb: 1}}\nname: b\n", `line 4: key "name" already set in map`},
		{"nested.yaml", "name: a\ninstances: 1\ntask:\n  command: x\n  resources: {cpu: 1, memMb: 1, cpu: 2}\n", `line 5: key "cpu" already set in map`},
		{"multi.yaml", "name: a\ninstances: 1\ntask: {command: x, resources: {cpu: 1, memMb: 1}}\n---\nname: b\ninstances: 1\ninstances: 2\ntask: {command: x, resources: {cpu: 1, memMb: 1}}\n", `jobs[1]: not valid YAML or JSON`},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, f.addr, false, "job", "create", "-f", path)
		if r.code != ExitError || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", c.name, r.code, ExitError, c.want, r.stderr)
		}
	}
	if n := f.creates(); n != 0 {
		t.Fatalf("%d creates reached the server, want 0", n)
	}
}
