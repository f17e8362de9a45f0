package pelotonv1

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseInstanceRanges(t *testing.T) {
	cases := []struct {
		in   string
		want []InstanceRange
		err  string
	}{
		{"0-9,15,20-29", []InstanceRange{{0, 9}, {15, 15}, {20, 29}}, ""},
		{" 3 , 5 - 6 ", []InstanceRange{{3, 3}, {5, 6}}, ""},
		{"4-4", []InstanceRange{{4, 4}}, ""},
		{"0-4,5-9", []InstanceRange{{0, 4}, {5, 9}}, ""},
		{"", nil, "is required"},
		{"  ", nil, "is required"},
		{"1,,2", nil, "empty item"},
		{"1,", nil, "empty item"},
		{"a", nil, `"a" is not an instance number or a range FROM-TO`},
		{"-3", nil, "is not an instance number"},
		{"+3", nil, "is not an instance number"},
		{"1-2-3", nil, "is not an instance number"},
		{"4294967296", nil, "is not an instance number"},
		{"9-3", nil, "range 9-3 runs backwards (write 3-9)"},
		{"5,3", nil, "3 comes after 5: list instances in increasing order"},
		{"0-5,3-9", nil, "3-9 comes after 0-5"},
		{"2,2", nil, "2 comes after 2"},
	}
	for _, tc := range cases {
		got, err := ParseInstanceRanges(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseInstanceRanges(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseInstanceRanges(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back := FormatInstanceRanges(got); strings.ReplaceAll(tc.in, " ", "") != back && tc.in != "4-4" {
			t.Errorf("FormatInstanceRanges(%v) = %q", got, back)
		}
	}
}

func TestDecodeJobSpecOverrides(t *testing.T) {
	task := func(fields map[string]any) map[string]any { return fields }
	override := func(instances any, t map[string]any) map[string]any {
		o := map[string]any{"instances": instances}
		if t != nil {
			o["task"] = t
		}
		return o
	}
	cases := []struct {
		name      string
		overrides []any
		instances int
		want      map[string]string
	}{
		{"a valid override of only env", []any{override("0-1", task(map[string]any{"env": map[string]any{"SHARD": "a"}}))}, 0, nil},
		{"a number for a lone instance", []any{override(1, task(map[string]any{"args": []any{"x"}}))}, 0, nil},
		{"resources partly set, command left out", []any{override("0", task(map[string]any{"resources": map[string]any{"gpu": 1}}))}, 0, nil},
		{"unknown field in an override", []any{override("0", task(map[string]any{"colour": "red"}))}, 0,
			map[string]string{"overrides[0].task.colour": "unknown field"}},
		{"unknown field beside the task", []any{map[string]any{"instances": "0", "task": map[string]any{}, "weight": 2}}, 0,
			map[string]string{"overrides[0].weight": "unknown field"}},
		{"task missing", []any{override("0", nil)}, 0, map[string]string{"overrides[0].task": "is required"}},
		{"instances missing", []any{map[string]any{"task": map[string]any{"args": []any{"x"}}}}, 0,
			map[string]string{"overrides[0].instances": "is required"}},
		{"negative number", []any{override(-1, task(map[string]any{}))}, 0,
			map[string]string{"overrides[0].instances": "must not be negative"}},
		{"a bool for instances", []any{override(true, task(map[string]any{}))}, 0,
			map[string]string{"overrides[0].instances": "must be a string"}},
		{"bad syntax", []any{override("0-x", task(map[string]any{}))}, 0,
			map[string]string{"overrides[0].instances": `"0-x" is not an instance number`}},
		{"beyond the job", []any{override("0,2", task(map[string]any{}))}, 2,
			map[string]string{"overrides[0].instances": "instance 2 is beyond the job's instances (0-1)"}},
		{"not increasing", []any{override("1,0", task(map[string]any{}))}, 0,
			map[string]string{"overrides[0].instances": "0 comes after 1"}},
		{"two overrides name one instance", []any{
			override("0-4", task(map[string]any{"args": []any{"a"}})),
			override("5", task(map[string]any{"args": []any{"b"}})),
			override("3-6", task(map[string]any{"args": []any{"c"}})),
		}, 10, map[string]string{
			"overrides[0].instances": "instances 3-4 also named by overrides[2]",
			"overrides[1].instances": "instance 5 also named by overrides[2]",
			"overrides[2].instances": "also named by overrides[",
		}},
		{"task fields checked where set", []any{override("0", task(map[string]any{
			"command":     " ",
			"env":         map[string]any{"1X": "y"},
			"resources":   map[string]any{"cpu": -1, "memMb": 0, "gpu": 0.5, "diskMb": "NaN"},
			"constraints": []any{map[string]any{"key": "zone", "op": "equals"}},
		}))}, 0, map[string]string{
			"overrides[0].task.command":               "is required",
			`overrides[0].task.env["1X"]`:             "environment variable name",
			"overrides[0].task.resources.cpu":         "must be >= 0",
			"overrides[0].task.resources.gpu":         "whole number",
			"overrides[0].task.resources.disk_mb":     "finite",
			"overrides[0].task.constraints[0].values": "exactly one value",
		}},
		{"a null override", []any{nil}, 0, map[string]string{"overrides[0]": "must not be null"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edits := map[string]any{"overrides": tc.overrides}
			if tc.instances > 0 {
				edits["instances"] = tc.instances
			}
			got := problemsOf(t, patch(edits))
			for path, fragment := range tc.want {
				if msg, ok := got[path]; !ok || !strings.Contains(msg, fragment) {
					t.Errorf("%s: got %q, want it to contain %q (all: %v)", path, msg, fragment, got)
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

func TestDecodeJobSpecOverrideValues(t *testing.T) {
	spec, err := DecodeJobSpec([]byte(`{"name":"o","instances":30,"task":{"command":"c","resources":{"cpu":1,"memMb":1}},
		"overrides":[{"instances":"0-9,15","task":{"env":{"SHARD":"low"},"resources":{"memMb":512}}},{"instances":29,"task":{"command":"other"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := spec.GetOverrides()
	if len(o) != 2 || o[0].GetInstances() != "0-9,15" || o[0].GetTask().GetResources().GetMemMb() != 512 ||
		o[1].GetInstances() != "29" || o[1].GetTask().GetCommand() != "other" {
		t.Fatalf("decoded overrides %v", o)
	}
}

// overlapsNaive is the reference: every pair of overrides that name a
// common instance, found by marking instances one by one.
func overlapsNaive(s *JobSpec) map[[2]int]bool {
	owner := map[uint32][]int{}
	for i, o := range s.GetOverrides() {
		ranges, err := ParseInstanceRanges(o.GetInstances())
		if err != nil {
			continue
		}
		for _, r := range ranges {
			for x := r.From; x <= r.To; x++ {
				owner[x] = append(owner[x], i)
			}
		}
	}
	pairs := map[[2]int]bool{}
	for _, os := range owner {
		for a := 0; a < len(os); a++ {
			for b := a + 1; b < len(os); b++ {
				pairs[[2]int{os[a], os[b]}] = true
			}
		}
	}
	return pairs
}

// TestOverlapCheckAgreesWithNaive: the sorted sweep flags exactly the
// overrides that share an instance with another (as the naive reference
// finds them), on random specs.
func TestOverlapCheckAgreesWithNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 500; round++ {
		s := &JobSpec{Name: "p", Instances: 40, Task: &TaskSpec{Command: "c", Resources: &Resources{Cpu: 1, MemMb: 1}}}
		for o := 0; o < 1+rng.IntN(6); o++ {
			var ranges []InstanceRange
			next := uint32(rng.IntN(10))
			for next < 40 && rng.IntN(3) > 0 {
				to := min(next+uint32(rng.IntN(5)), 39)
				ranges = append(ranges, InstanceRange{next, to})
				next = to + 1 + uint32(rng.IntN(8))
			}
			if len(ranges) == 0 {
				ranges = []InstanceRange{{next % 40, next % 40}}
			}
			s.Overrides = append(s.Overrides, &InstanceOverride{Instances: FormatInstanceRanges(ranges), Task: &TaskSpec{Args: []string{"x"}}})
		}
		flagged := map[int]bool{}
		for _, p := range ValidateJobSpec(s) {
			var i int
			if _, err := fmt.Sscanf(p.Path, "overrides[%d].instances", &i); err != nil {
				t.Fatalf("unexpected problem %v", p)
			}
			flagged[i] = true
		}
		want := map[int]bool{}
		for pair := range overlapsNaive(s) {
			want[pair[0]], want[pair[1]] = true, true
		}
		if len(flagged) != len(want) {
			t.Fatalf("round %d: flagged %v, naive %v (spec %v)", round, flagged, want, s.GetOverrides())
		}
		for i := range want {
			if !flagged[i] {
				t.Fatalf("round %d: override %d not flagged; flagged %v (spec %v)", round, i, flagged, s.GetOverrides())
			}
		}
	}
}

// manyOverrides is a JSON spec with one override per instance.
func manyOverrides(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"name":"big","instances":%d,"task":{"command":"run","resources":{"cpu":0.1,"memMb":16}},"overrides":[`, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"instances":"%d","task":{"env":{"SHARD":"s%d"},"resources":{"memMb":%d}}}`, i, i, 16+i%7)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestDecodeJobSpecWithAnOverridePerInstance(t *testing.T) {
	const n = 100_000
	spec, err := DecodeJobSpec(manyOverrides(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.GetOverrides()) != n || spec.GetOverrides()[n-1].GetInstances() != fmt.Sprint(n-1) {
		t.Fatalf("decoded %d overrides", len(spec.GetOverrides()))
	}
	// One instance named twice, at the far end: found, with both paths.
	spec.Overrides[n-1].Instances = "5"
	got := ValidateJobSpec(spec)
	if len(got) != 2 || got[0].Path != "overrides[5].instances" || got[1].Path != fmt.Sprintf("overrides[%d].instances", n-1) {
		t.Fatalf("problems %v", got)
	}
}

// BenchmarkDecodeJobSpecOverrides decodes and validates a spec with an
// override per instance; the baseline is the same spec without overrides.
func BenchmarkDecodeJobSpecOverrides(b *testing.B) {
	for _, n := range []int{0, 10_000, 100_000} {
		data := manyOverrides(n)
		if n == 0 {
			data = manyOverrides(1)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := DecodeJobSpec(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
