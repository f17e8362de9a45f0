package testkit

import (
	"strings"
	"testing"
	"time"
)

func TestCLIRun(t *testing.T) {
	for _, c := range []struct {
		name                   string
		script                 string
		within                 time.Duration
		stdout, stderr, output string
		code                   int
	}{
		{name: "in order", script: "echo progress >&2; sleep 0.1; echo '{}'",
			stdout: "{}\n", stderr: "progress\n", output: "progress\n{}\n"},
		{name: "exit status", script: "echo no >&2; exit 7", stderr: "no\n", output: "no\n", code: 7},
		{name: "stopped at its deadline", script: "sleep 5", within: 100 * time.Millisecond, code: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := CLI{Bin: "sh", Within: c.within}.Run("-c", c.script)
			if r.Code != c.code {
				t.Fatalf("code %d, want %d: %s", r.Code, c.code, r)
			}
			if c.code == -1 {
				if !strings.Contains(r.Stderr, "stopped after") || !strings.Contains(r.Output(), "stopped after") {
					t.Errorf("a run stopped at its deadline does not say so: %s", r)
				}
				return
			}
			if r.Stdout != c.stdout || r.Stderr != c.stderr || r.Output() != c.output {
				t.Errorf("stdout %q stderr %q output %q, want %q %q %q", r.Stdout, r.Stderr, r.Output(), c.stdout, c.stderr, c.output)
			}
		})
	}
}
