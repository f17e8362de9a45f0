package pelotonv1

import (
	"fmt"
	"strings"
	"testing"
)

func TestSpecSizeLimits(t *testing.T) {
	many := func(n int, f func(i int) string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	labels := map[string]any{}
	for i := 0; i <= MaxLabels; i++ {
		labels[fmt.Sprintf("k%d", i)] = "v"
	}
	env := map[string]any{}
	for i := 0; i < 9; i++ {
		env[fmt.Sprintf("V%d", i)] = strings.Repeat("x", MaxEnvBytes)
	}
	constraints := many(MaxConstraints+1, func(int) string { return "" })
	for i := range constraints {
		constraints[i] = map[string]any{"key": "zone", "op": "exists"}
	}
	cases := []struct {
		name string
		data []byte
		want map[string]string
	}{
		{"command at the limit", patch(map[string]any{"task.command": strings.Repeat("x", MaxCommandBytes)}), nil},
		{"command too long", patch(map[string]any{"task.command": strings.Repeat("x", MaxCommandBytes+1)}),
			map[string]string{"task.command": "more than 131072"}},
		{"a 10 MB argument", patch(map[string]any{"task.args": []any{"a", strings.Repeat("x", 10<<20)}}),
			map[string]string{"task.args[1]": "is 10485760 bytes, more than 131072", "task": "more than 1048576"}},
		{"too many arguments", patch(map[string]any{"task.args": many(MaxArgs+1, func(int) string { return "a" })}),
			map[string]string{"task.args": "4097 arguments"}},
		{"too many labels", patch(map[string]any{"labels": labels}), map[string]string{"labels": "129 labels"}},
		{"label value too long", patch(map[string]any{"labels": map[string]any{"team": strings.Repeat("x", MaxLabelValueBytes+1)}}),
			map[string]string{`labels["team"]`: "more than 4096"}},
		{"label key too long", patch(map[string]any{"labels": map[string]any{strings.Repeat("k", 300): "v"}}),
			map[string]string{`labels["` + strings.Repeat("k", 32) + `..."]`: "key is 300 bytes"}},
		{"env value too long", patch(map[string]any{"task.env": map[string]any{"A": strings.Repeat("x", MaxEnvBytes+1)}}),
			map[string]string{`task.env["A"]`: "more than 131072"}},
		{"environment too large together", patch(map[string]any{"task.env": env}),
			map[string]string{"task": "more than 1048576"}},
		{"too many constraints", patch(map[string]any{"task.constraints": constraints}),
			map[string]string{"task.constraints": "65 constraints"}},
		{"cpu 1e308", patch(map[string]any{"task.resources.cpu": 1e308}),
			map[string]string{"task.resources.cpu": "at most 100000"}},
		{"memory beyond any machine", patch(map[string]any{"task.resources.memMb": float64(MaxTaskMemMB) * 2}),
			map[string]string{"task.resources.mem_mb": "at most"}},
		{"gpu beyond any machine", patch(map[string]any{"task.resources.gpu": 4096}),
			map[string]string{"task.resources.gpu": "at most 1024"}},
		{"instances over the ceiling", patch(map[string]any{"instances": MaxInstances + 1}),
			map[string]string{"instances": "between 1 and 1000000"}},
		{"override instances text too long", patch(map[string]any{"overrides": []any{map[string]any{
			"instances": strings.Repeat("1,", MaxInstanceRangesBytes), "task": map[string]any{"command": "x"}}}}),
			map[string]string{"overrides[0].instances": "more than 65536"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := problemsOf(t, c.data)
			if len(got) != len(c.want) {
				t.Fatalf("problems %v, want paths of %v", got, c.want)
			}
			for path, frag := range c.want {
				if !strings.Contains(got[path], frag) {
					t.Errorf("%s: got %q, want it to contain %q (all: %v)", path, got[path], frag, got)
				}
			}
		})
	}
}
