package pelotonv1

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// validSpec is a minimal valid spec as generic JSON; cases patch it.
func validSpec() map[string]any {
	return map[string]any{
		"name":      "hello",
		"instances": 2,
		"task": map[string]any{
			"command":   "echo",
			"resources": map[string]any{"cpu": 0.5, "memMb": 64},
		},
	}
}

// patch returns validSpec with the value at a dotted path set (nil deletes).
func patch(edits map[string]any) []byte {
	spec := validSpec()
	for path, value := range edits {
		parts := strings.Split(path, ".")
		node := spec
		for _, p := range parts[:len(parts)-1] {
			next, ok := node[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[p] = next
			}
			node = next
		}
		last := parts[len(parts)-1]
		if value == nil {
			delete(node, last)
		} else {
			node[last] = value
		}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		panic(err)
	}
	return data
}

// problemsOf decodes data and returns "path: message" lines (nil if valid).
func problemsOf(t *testing.T, data []byte) map[string]string {
	t.Helper()
	_, err := DecodeJobSpec(data)
	if err == nil {
		return nil
	}
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("error is %T, want *SpecError: %v", err, err)
	}
	if !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("error does not wrap ErrInvalidSpec")
	}
	got := map[string]string{}
	for _, p := range se.Problems {
		if _, dup := got[p.Path]; dup {
			t.Errorf("path %q reported twice: %v", p.Path, se.Problems)
		}
		got[p.Path] = p.Message
	}
	return got
}

func TestDecodeJobSpecProblems(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		// want maps each expected path to a fragment of its message.
		want map[string]string
	}{
		{"valid", patch(nil), nil},
		{"the three problems of examples/invalid.yaml", patch(map[string]any{
			"task.resources.cpu": -1, "task.command": nil, "task.foo": "bar",
		}), map[string]string{
			"task.resources.cpu": "must be > 0",
			"task.command":       "is required",
			"task.foo":           "unknown field",
		}},
		{"snake_case field names", patch(map[string]any{"max_running": 1, "task.resources.mem_mb": 8, "task.resources.memMb": nil}), nil},
		{"camelCase and snake_case of one field", patch(map[string]any{"maxRunning": 1, "max_running": 2}),
			map[string]string{"max_running": "set twice"}},
		{"unknown top-level and nested fields", patch(map[string]any{"colour": "red", "task.resources.tpu": 1}),
			map[string]string{"colour": "unknown field", "task.resources.tpu": "unknown field"}},
		{"string for a number", patch(map[string]any{"instances": "many"}),
			map[string]string{"instances": "must be a number"}},
		{"quoted number is fine", patch(map[string]any{"instances": "3"}), nil},
		{"cluster policy", patch(map[string]any{"clusters": map[string]any{"prefer": []any{"kubernetes:k8s-east"}, "avoid": []any{"dc1"}}}), nil},
		{"cluster policy problems", patch(map[string]any{"clusters": map[string]any{
			"prefer": []any{"k8s-east", "", "kubernetes:k8s-east"}, "avoid": []any{"mesos:k8s-east", "bad name"}}}),
			map[string]string{
				"clusters.prefer[1]": "must not be empty",
				"clusters.prefer[2]": "named twice",
				"clusters.avoid[0]":  "both preferred and avoided",
				"clusters.avoid[1]":  "not a cluster name",
			}},
		{"object for a number", patch(map[string]any{"priority": map[string]any{}}),
			map[string]string{"priority": "must be a number"}},
		{"fraction for an integer", patch(map[string]any{"instances": 1.5}),
			map[string]string{"instances": "whole number"}},
		{"exponent integer", patch(map[string]any{"instances": json.Number("1e3")}), nil},
		{"int32 overflow", patch(map[string]any{"priority": json.Number("3000000000")}),
			map[string]string{"priority": "out of range"}},
		{"int32 in exponent form", patch(map[string]any{"priority": json.Number("1e2")}), nil},
		{"uint32 overflow in exponent form", patch(map[string]any{"instances": json.Number("1e10")}),
			map[string]string{"instances": "out of range"}},
		{"negative unsigned", patch(map[string]any{"maxRunning": -1}),
			map[string]string{"max_running": "must not be negative"}},
		{"unsigned overflow", patch(map[string]any{"instances": json.Number("5000000000")}),
			map[string]string{"instances": "out of range"}},
		{"number for a string", patch(map[string]any{"name": 5}),
			map[string]string{"name": "must be a string"}},
		{"string for a bool", patch(map[string]any{"preemptible": "yes"}),
			map[string]string{"preemptible": "true or false"}},
		{"scalar for a message", patch(map[string]any{"task": "run"}),
			map[string]string{"task": "must be an object"}},
		{"scalar for a list", patch(map[string]any{"task.args": "a b"}),
			map[string]string{"task.args": "must be a list"}},
		{"list element of the wrong type", patch(map[string]any{"task.args": []any{"a", 2, "c"}}),
			map[string]string{"task.args[1]": "must be a string"}},
		{"map value of the wrong type", patch(map[string]any{"labels": map[string]any{"team": 7}}),
			map[string]string{`labels["team"]`: "must be a string"}},
		{"short enum names", patch(map[string]any{"type": "Batch", "task.constraints": []any{
			map[string]any{"key": "zone", "op": "not-in", "values": []any{"a"}},
			map[string]any{"key": "rack", "op": "NOT_IN", "values": []any{"b"}},
			map[string]any{"key": "ssd", "op": "CONSTRAINT_OP_EXISTS"},
			map[string]any{"key": "os", "op": 1, "values": []any{"linux"}},
		}}), nil},
		{"unknown enum value", patch(map[string]any{"type": "cron"}),
			map[string]string{"type": `unknown value "cron" (want one of batch, service, stateful, daemon)`}},
		{"unknown enum number", patch(map[string]any{"type": 9}),
			map[string]string{"type": "unknown value 9"}},
		{"service is a job type", patch(map[string]any{"type": "service"}), nil},
		{"stateful is a job type", patch(map[string]any{"type": "stateful"}), nil},
		{"daemon takes no instances", patch(map[string]any{"type": "daemon"}),
			map[string]string{"instances": "must be left out for a daemon job"}},
		{"daemon without instances", patch(map[string]any{"type": "daemon", "instances": nil}), nil},
		{"a web service", patch(map[string]any{"type": "service", "task.command": nil,
			"task.container": map[string]any{"image": "registry.example:5000/team/web-app:1.2.3", "pullPolicy": "always"},
			"task.ports":     []any{map[string]any{"name": "http"}, map[string]any{"name": "admin", "port": 9090}},
			"task.healthCheck": map[string]any{"http": map[string]any{"port": "http", "path": "/healthz"},
				"initialDelay": "2s", "interval": "500ms", "failureThreshold": 2},
			"task.readiness": map[string]any{"tcp": map[string]any{"port": 9090}},
			"maxPerHost":     1, "spread": []any{map[string]any{"label": "zone", "max": 2}}}), nil},
		{"bad workload fields", patch(map[string]any{"type": "batch",
			"task.container": map[string]any{"image": "Bad Image!", "pullPolicy": 9},
			"task.ports": []any{map[string]any{"name": "http"}, map[string]any{"name": "http", "port": 70000},
				map[string]any{"name": "Web_1", "port": 80}, map[string]any{"name": "x", "port": 80}},
			"task.healthCheck": map[string]any{"interval": "2h"},
			"task.readiness":   map[string]any{"http": map[string]any{"port": "nope", "path": "x"}, "tcp": map[string]any{"port": "0"}},
			"task.volumes":     []any{map[string]any{"name": "data", "sizeMb": 10, "path": "/data"}},
			"spread":           []any{map[string]any{"label": "", "max": 0}}}),
			map[string]string{
				"task.container.image":       "not an image reference",
				"task.container.pull_policy": "unknown value 9",
				"task.ports[1].name":         `"http" is already the name of ports[0]`,
				"task.ports[1].port":         "70000 is out of range",
				"task.ports[2].name":         "lower case",
				"task.ports[3].port":         "80 is already the port of ports[2]",
				"task.health_check":          "needs one of command, http or tcp",
				"task.health_check.interval": "between 0s and 1h0m0s",
				"task.readiness":             "more than one",
				"task.readiness.http.port":   `"nope" is not the name`,
				"task.readiness.http.path":   "must start with /",
				"task.readiness.tcp.port":    "0 is out of range",
				"task.volumes":               "only stateful jobs",
				"spread[0].label":            "is required",
				"spread[0].max":              "at least 1",
			}},
		{"sla as a count", patch(map[string]any{"type": "service", "sla": map[string]any{"maxUnavailable": 1}}), nil},
		{"sla as a percentage", patch(map[string]any{"type": "service", "sla": map[string]any{"maxUnavailable": "25%"}}), nil},
		{"sla above the instances", patch(map[string]any{"type": "service", "sla": map[string]any{"maxUnavailable": 5}}),
			map[string]string{"sla.max_unavailable": "5 is more than the job's 2 instances"}},
		{"sla above 100%", patch(map[string]any{"sla": map[string]any{"maxUnavailable": "120%"}}),
			map[string]string{"sla.max_unavailable": "more than 100%"}},
		{"sla not a number", patch(map[string]any{"sla": map[string]any{"maxUnavailable": "lots"}}),
			map[string]string{"sla.max_unavailable": "not a count"}},
		{"stateful volumes", patch(map[string]any{"type": "stateful",
			"task.volumes": []any{map[string]any{"name": "data", "sizeMb": 0, "path": "data"}, map[string]any{"name": "data", "sizeMb": 5, "path": "/d"}}}),
			map[string]string{
				"task.volumes[0].size_mb": "between 1 and",
				"task.volumes[0].path":    "absolute path",
				"task.volumes[1].name":    `"data" is already the name of volumes[0]`,
			}},
		{"explicit unspecified type means batch", patch(map[string]any{"type": "JOB_TYPE_UNSPECIFIED"}), nil},
		{"name required", patch(map[string]any{"name": " "}), map[string]string{"name": "is required"}},
		{"name too long", patch(map[string]any{"name": strings.Repeat("n", 129)}), map[string]string{"name": "at most 128"}},
		{"name of 128 runes", patch(map[string]any{"name": strings.Repeat("é", 128)}), nil},
		{"pool relative", patch(map[string]any{"pool": "a/b"}), map[string]string{"pool": "absolute path"}},
		{"pool trailing slash", patch(map[string]any{"pool": "/a/"}), map[string]string{"pool": "absolute path"}},
		{"pool empty segment", patch(map[string]any{"pool": "/a//b"}), map[string]string{"pool": "absolute path"}},
		{"pool dot-dot", patch(map[string]any{"pool": "/a/../b"}), map[string]string{"pool": "absolute path"}},
		{"pool nested", patch(map[string]any{"pool": "/maps/ingest"}), nil},
		{"priority too high", patch(map[string]any{"priority": 1001}), map[string]string{"priority": "between 0 and 1000"}},
		{"priority negative", patch(map[string]any{"priority": -1}), map[string]string{"priority": "between 0 and 1000"}},
		{"instances missing", patch(map[string]any{"instances": nil}), map[string]string{"instances": "between 1 and 1000000"}},
		{"instances too many", patch(map[string]any{"instances": 1000001}), map[string]string{"instances": "between 1 and 1000000"}},
		{"max running above instances", patch(map[string]any{"maxRunning": 3}), map[string]string{"max_running": "must not exceed instances (2)"}},
		{"max running equal to instances", patch(map[string]any{"maxRunning": 2}), nil},
		{"max attempts too many", patch(map[string]any{"maxAttempts": 101}), map[string]string{"max_attempts": "at most 100"}},
		{"task missing", patch(map[string]any{"task": nil}), map[string]string{"task": "is required"}},
		{"resources missing", patch(map[string]any{"task.resources": nil}), map[string]string{"task.resources": "is required"}},
		{"resource signs", patch(map[string]any{"task.resources": map[string]any{"cpu": 0, "memMb": -1, "diskMb": -1, "gpu": 0.5}}),
			map[string]string{
				"task.resources.cpu":     "must be > 0",
				"task.resources.mem_mb":  "must be > 0",
				"task.resources.disk_mb": "must be >= 0",
				"task.resources.gpu":     "whole number",
			}},
		{"resources finer than their unit", patch(map[string]any{"task.resources": map[string]any{"cpu": 0.0005, "memMb": 64.5, "diskMb": 0.25}}),
			map[string]string{
				"task.resources.cpu":     "must be a multiple of 0.001 cores",
				"task.resources.mem_mb":  "must be a whole number",
				"task.resources.disk_mb": "must be a whole number",
			}},
		{"millicores", patch(map[string]any{"task.resources": map[string]any{"cpu": 1.005, "memMb": 64, "diskMb": 10}}), nil},
		{"resources not finite", patch(map[string]any{"task.resources": map[string]any{"cpu": "NaN", "memMb": "Infinity", "gpu": "-Infinity"}}),
			map[string]string{
				"task.resources.cpu":    "finite",
				"task.resources.mem_mb": "finite",
				"task.resources.gpu":    "finite",
			}},
		{"resource overflow", patch(map[string]any{"task.resources.cpu": json.Number("1e400")}),
			map[string]string{"task.resources.cpu": "out of range"}},
		{"env names", patch(map[string]any{"task.env": map[string]any{"GOOD_1": "x", "1BAD": "y", "A-B": "z", "_ok": ""}}),
			map[string]string{`task.env["1BAD"]`: "environment variable name", `task.env["A-B"]`: "environment variable name"}},
		{"constraint problems", patch(map[string]any{"task.constraints": []any{
			map[string]any{"key": "zone", "op": "equals", "values": []any{"a", "b"}},
			map[string]any{"anyOf": []any{
				map[string]any{"op": "in"},
				map[string]any{"key": "ssd", "op": "exists", "values": []any{"yes"}},
			}},
			map[string]any{"key": "x", "op": "in", "values": []any{"1"}, "allOf": []any{map[string]any{"key": "y", "op": "exists"}}},
			map[string]any{"allOf": []any{map[string]any{"key": "y", "op": "exists"}}, "anyOf": []any{map[string]any{"key": "z", "op": "exists"}}},
			map[string]any{"key": "w"},
		}}), map[string]string{
			"task.constraints[0].values":           "exactly one value for equals (got 2)",
			"task.constraints[1].any_of[0].key":    "is required",
			"task.constraints[1].any_of[0].values": "at least one value for in",
			"task.constraints[1].any_of[1].values": "must be empty for exists",
			"task.constraints[2]":                  "key/op/values together with all_of/any_of",
			"task.constraints[3]":                  "both all_of and any_of",
			"task.constraints[4].op":               "is required",
		}},
		{"a bad element keeps the indexes of the others", patch(map[string]any{"task.constraints": []any{
			"zone=a",
			map[string]any{"key": "ssd", "op": "exists"},
			map[string]any{"op": "exists"},
		}}), map[string]string{
			"task.constraints[0]":     "must be an object",
			"task.constraints[2].key": "is required",
		}},
		{"null means unset", patch(map[string]any{"labels": nil, "region": nil}), nil},
		{"null list element", patch(map[string]any{"task.args": []any{nil}}), map[string]string{"task.args[0]": "must not be null"}},
		{"not an object", []byte(`[1,2]`), map[string]string{"": "must be an object"}},
		{"empty", []byte(``), map[string]string{"": "empty"}},
		{"null document", []byte(`null`), map[string]string{"": "empty"}},
		{"broken JSON", []byte(`{"name": `), map[string]string{"": "not valid JSON"}},
		{"trailing data", []byte(`{} {}`), map[string]string{"": "after the spec"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.data)
			for path, fragment := range tc.want {
				msg, ok := got[path]
				if !ok {
					t.Errorf("missing problem at %q; got %v", path, got)
					continue
				}
				if !strings.Contains(msg, fragment) {
					t.Errorf("%s: message %q does not contain %q", path, msg, fragment)
				}
			}
			for path, msg := range got {
				if _, ok := tc.want[path]; !ok {
					t.Errorf("unexpected problem %s: %s", path, msg)
				}
			}
		})
	}
}

func TestDecodeJobSpecValues(t *testing.T) {
	data := []byte(`{
		"name": "maps", "type": "batch", "pool": "/maps/ingest", "priority": 7,
		"preemptible": true, "instances": 10, "max_running": 4, "maxAttempts": 5,
		"labels": {"team": "maps"},
		"task": {"command": "run", "args": ["-v"], "env": {"MODE": "fast"},
			"resources": {"cpu": 1.5, "mem_mb": 256, "diskMb": 10, "gpu": 1},
			"constraints": [{"anyOf": [{"key": "zone", "op": "in", "values": ["a", "b"]}]}],
			"killGracePeriodSeconds": 30}
	}`)
	got, err := DecodeJobSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	want := &JobSpec{
		Name: "maps", Type: JobType_JOB_TYPE_BATCH, Pool: "/maps/ingest", Priority: 7,
		Preemptible: true, Instances: 10, MaxRunning: 4, MaxAttempts: 5,
		Labels: map[string]string{"team": "maps"},
		Task: &TaskSpec{
			Command: "run", Args: []string{"-v"}, Env: map[string]string{"MODE": "fast"},
			Resources: &Resources{Cpu: 1.5, MemMb: 256, DiskMb: 10, Gpu: 1},
			Constraints: []*Constraint{{AnyOf: []*Constraint{{
				Key: "zone", Op: ConstraintOp_CONSTRAINT_OP_IN, Values: []string{"a", "b"},
			}}}},
			KillGracePeriodSeconds: 30,
		},
	}
	if !proto.Equal(got, want) {
		t.Fatalf("decoded\n%v\nwant\n%v", got, want)
	}
}

func TestSpecErrorListsProblemsSortedByPath(t *testing.T) {
	err := NewSpecError([]FieldError{
		{Path: "task.constraints[10].key", Message: "is required"},
		{Path: "name", Message: "is required"},
		{Path: "task.constraints[2].key", Message: "is required"},
		{Path: "", Message: "whole spec"},
		{Path: "name", Message: "is required"},
	})
	want := strings.Join([]string{
		"whole spec",
		"name: is required",
		"task.constraints[2].key: is required",
		"task.constraints[10].key: is required",
	}, "\n")
	if err.Error() != want {
		t.Fatalf("got\n%s\nwant\n%s", err.Error(), want)
	}
	if NewSpecError(nil) != nil {
		t.Fatal("no problems must give a nil error")
	}
}

func TestComparePathsAgreesWithNumericOrder(t *testing.T) {
	// Property: for paths differing only in an index, the order is the
	// numeric order of the indexes.
	for a := 0; a < 120; a += 7 {
		for b := 0; b < 120; b += 11 {
			pa := "c[" + strconv.Itoa(a) + "].k"
			pb := "c[" + strconv.Itoa(b) + "].k"
			got := comparePaths(pa, pb)
			if (got < 0) != (a < b) || (got == 0) != (a == b) {
				t.Fatalf("comparePaths(%q, %q) = %d", pa, pb, got)
			}
		}
	}
}

func TestApplyJobSpecDefaults(t *testing.T) {
	s := &JobSpec{Name: "x", Instances: 1, Task: &TaskSpec{Command: "true"}}
	ApplyJobSpecDefaults(s)
	if s.Type != JobType_JOB_TYPE_BATCH || s.Pool != DefaultPool || s.MaxAttempts != DefaultMaxAttempts ||
		s.Task.KillGracePeriodSeconds != DefaultKillGracePeriodSeconds {
		t.Fatalf("defaults not applied: %v", s)
	}
	set := &JobSpec{Type: JobType_JOB_TYPE_SERVICE, Pool: "/a", MaxAttempts: 7, Task: &TaskSpec{KillGracePeriodSeconds: 2}}
	ApplyJobSpecDefaults(set)
	if set.Type != JobType_JOB_TYPE_SERVICE || set.Pool != "/a" || set.MaxAttempts != 7 || set.Task.KillGracePeriodSeconds != 2 {
		t.Fatalf("set fields overwritten: %v", set)
	}
	ApplyJobSpecDefaults(nil)
}

func TestValidateJobSpecOnGRPCInput(t *testing.T) {
	s := &JobSpec{
		Name: "x", Instances: 1, Type: JobType(42),
		Task: &TaskSpec{
			Command:     "true",
			Resources:   &Resources{Cpu: math.Inf(1), MemMb: 1},
			Constraints: []*Constraint{nil, {Key: "k", Op: ConstraintOp(99)}},
		},
	}
	got := ValidateJobSpec(s)
	var paths []string
	for _, p := range got {
		paths = append(paths, p.Path)
	}
	want := []string{"task.constraints[0]", "task.constraints[1].op", "task.resources.cpu", "type"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v (%v)", paths, want, got)
	}
	if p := ValidateJobSpec(nil); len(p) != 1 {
		t.Fatalf("nil spec: %v", p)
	}
}

func TestConstraintDepthIsBounded(t *testing.T) {
	leaf := &Constraint{Key: "k", Op: ConstraintOp_CONSTRAINT_OP_EXISTS}
	for i := 0; i < MaxConstraintDepth+5; i++ {
		leaf = &Constraint{AllOf: []*Constraint{leaf}}
	}
	s := &JobSpec{Name: "x", Instances: 1, Task: &TaskSpec{Command: "c", Resources: &Resources{Cpu: 1, MemMb: 1}, Constraints: []*Constraint{leaf}}}
	got := ValidateJobSpec(s)
	if len(got) != 1 || !strings.Contains(got[0].Message, "nested too deeply") {
		t.Fatalf("got %v", got)
	}
}

func TestUnknownFieldProblems(t *testing.T) {
	spec := &JobSpec{Name: "x", Task: &TaskSpec{Command: "c", Constraints: []*Constraint{{Key: "a"}, {Key: "b"}}}}
	// Unknown field 42 at the top, 77 (twice) inside the second constraint.
	spec.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 42, protowire.VarintType), 1))
	var extra []byte
	extra = protowire.AppendTag(extra, 77, protowire.BytesType)
	extra = protowire.AppendBytes(extra, []byte("hi"))
	extra = append(extra, extra...)
	spec.Task.Constraints[1].ProtoReflect().SetUnknown(extra)

	data, err := proto.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var received JobSpec
	if err := proto.Unmarshal(data, &received); err != nil {
		t.Fatal(err)
	}
	got := UnknownFieldProblems(&received)
	want := []FieldError{
		{Path: "#42", Message: "unknown field"},
		{Path: "task.constraints[1].#77", Message: "unknown field"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if p := UnknownFieldProblems(&JobSpec{Name: "clean"}); len(p) != 0 {
		t.Fatalf("clean message: %v", p)
	}
	if p := UnknownFieldProblems(nil); p != nil {
		t.Fatalf("nil message: %v", p)
	}
}

func TestParseEnumNameAndShortName(t *testing.T) {
	cases := []struct {
		in   string
		want TaskState
		ok   bool
	}{
		{"TASK_STATE_RUNNING", TaskState_TASK_STATE_RUNNING, true},
		{"running", TaskState_TASK_STATE_RUNNING, true},
		{"Succeeded", TaskState_TASK_STATE_SUCCEEDED, true},
		{"task-state-lost", TaskState_TASK_STATE_LOST, true},
		{"runnin", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		n, err := ParseEnumName(TaskState(0).Descriptor(), tc.in)
		if (err == nil) != tc.ok || (tc.ok && TaskState(n) != tc.want) {
			t.Errorf("ParseEnumName(%q) = %v, %v", tc.in, n, err)
		}
	}
	if got := ShortEnumName(JobState_JOB_STATE_SUCCEEDED); got != "SUCCEEDED" {
		t.Errorf("ShortEnumName = %q", got)
	}
	if got := ShortEnumName(ConstraintOp_CONSTRAINT_OP_NOT_IN); got != "NOT_IN" {
		t.Errorf("ShortEnumName = %q", got)
	}
	if got := ShortEnumName(JobState(77)); got != "77" {
		t.Errorf("ShortEnumName(77) = %q", got)
	}
}

func TestValidateGangFields(t *testing.T) {
	base := func() *JobSpec {
		return &JobSpec{Name: "g", Instances: 8, Task: &TaskSpec{Command: "true", Resources: &Resources{Cpu: 1, MemMb: 1}}}
	}
	cases := []struct {
		name  string
		edit  func(*JobSpec)
		paths []string
	}{
		{"gang of 4 in 8", func(s *JobSpec) { s.GangSize = 4 }, nil},
		{"gang larger than job", func(s *JobSpec) { s.GangSize = 16 }, []string{"gang_size"}},
		{"not a multiple", func(s *JobSpec) { s.GangSize = 3 }, []string{"gang_size"}},
		{"maxRunning below gang", func(s *JobSpec) { s.GangSize = 4; s.MaxRunning = 2 }, []string{"max_running"}},
		{"restart without gang", func(s *JobSpec) { s.GangRestart = true }, []string{"gang_restart"}},
	}
	for _, tc := range cases {
		s := base()
		tc.edit(s)
		got := ValidateJobSpec(s)
		if len(got) != len(tc.paths) {
			t.Errorf("%s: got %v, want paths %v", tc.name, got, tc.paths)
			continue
		}
		for i, p := range tc.paths {
			if got[i].Path != p {
				t.Errorf("%s: got %v, want paths %v", tc.name, got, tc.paths)
			}
		}
	}
}

func TestDecodePoolSpec(t *testing.T) {
	ok, err := DecodePoolSpec([]byte(`{"path":"/maps","reservation":{"cpu":10},"limit":{"cpu":50},"share":{"cpu":2}}`))
	if err != nil || ok.GetLimit().GetCpu() != 50 || ok.GetLimit().MemMb != nil {
		t.Fatalf("valid pool: %v %v", ok, err)
	}
	_, err = DecodePoolSpec([]byte(`{"path":"maps","reservation":{"cpu":-1},"limit":{"cpu":0.5},"share":{"gpu":0},"colour":1}`))
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("want a SpecError, got %v", err)
	}
	want := []string{"colour", "path", "reservation.cpu", "share.gpu"}
	if len(se.Problems) != len(want) {
		t.Fatalf("problems %v, want paths %v", se.Problems, want)
	}
	for i, p := range want {
		if se.Problems[i].Path != p {
			t.Fatalf("problems %v, want paths %v", se.Problems, want)
		}
	}
}

// Pool reservations and limits are amounts to the unit; shares are weights.
func TestDecodePoolSpecUnits(t *testing.T) {
	_, err := DecodePoolSpec([]byte(`{"path":"/maps","reservation":{"cpu":0.0001,"memMb":1.5},"limit":{"cpu":2.0005,"diskMb":0.5},"share":{"cpu":0.125}}`))
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("want a SpecError, got %v", err)
	}
	want := map[string]string{
		"reservation.cpu":   "must be a multiple of 0.001 cores",
		"reservation.memMb": "must be a whole number",
		"limit.cpu":         "must be a multiple of 0.001 cores",
		"limit.diskMb":      "must be a whole number",
	}
	if len(se.Problems) != len(want) {
		t.Fatalf("problems %v, want %v", se.Problems, want)
	}
	for _, p := range se.Problems {
		if want[p.Path] != p.Message {
			t.Errorf("%s: %q, want %q", p.Path, p.Message, want[p.Path])
		}
	}
	if _, err := DecodePoolSpec([]byte(`{"path":"/maps","reservation":{"cpu":0.001,"memMb":512},"share":{"cpu":0.125}}`)); err != nil {
		t.Fatalf("amounts to the unit: %v", err)
	}
}

func TestResourceAmountsResolve(t *testing.T) {
	two := 2.0
	if got := (*ResourceAmounts)(nil).Resolve(1); got.Cpu != 1 || got.MemMb != 1 || got.DiskMb != 1 || got.Gpu != 1 {
		t.Fatalf("nil amounts: %v", got)
	}
	got := (&ResourceAmounts{Cpu: &two}).Resolve(7)
	if got.Cpu != 2 || got.MemMb != 7 || got.DiskMb != 7 || got.Gpu != 7 {
		t.Fatalf("partial amounts: %v", got)
	}
}
