// Package datadriven runs scenario files: the data-driven tests of the pure
// cores (entitlement, admission, placement, the goal-state decisions, the
// federation's policies).
//
// A scenario file is a sequence of commands. Each is a command line, input
// lines, a "----" line, then the expected output up to a blank line. Blank
// lines and lines starting with '#' between commands are kept as they are.
// Run a package's tests with -rewrite to regenerate the expected output
// after a deliberate change, then review the diff.
//
// It is imported by tests only and imports nothing of ours.
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// Case is one command of a scenario file.
type Case struct {
	// Where is "file:line" of the command line, for messages.
	Where   string
	Command string
	Input   []string
}

// Fields are the command line's words.
func (c Case) Fields() []string { return strings.Fields(c.Command) }

// Runner computes a case's output. A file's cases run in order on the
// runner made for that file, so it may keep state between them.
type Runner func(c Case) string

// RunFiles runs every file matching dir/*.txt as a subtest named after
// it, with a runner newRunner makes for each file.
func RunFiles(t *testing.T, dir string, newRunner func(t *testing.T) Runner) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			RunFile(t, file, newRunner(t))
		})
	}
}

// RunFile runs one scenario file, comparing each case's output with the
// expected one (or writing it, with -rewrite).
func RunFile(t *testing.T, file string, run Runner) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "#") {
			out.WriteString(line + "\n")
			i++
			continue
		}
		c := Case{Where: fmt.Sprintf("%s:%d", file, i+1), Command: line}
		start := i
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			c.Input = append(c.Input, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("%s: command without a ---- line", c.Where)
		}
		i++ // the ---- line
		var expected []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			expected = append(expected, lines[i])
		}
		actual := run(c)
		for _, l := range lines[start:i] {
			if l == "----" {
				break
			}
			out.WriteString(l + "\n")
		}
		out.WriteString("----\n" + actual + "\n")
		if !*rewrite && actual != strings.Join(expected, "\n") {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", c.Where, line, actual, strings.Join(expected, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
