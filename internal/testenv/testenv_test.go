package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStrict(t *testing.T) {
	for _, c := range []struct {
		strict, ci string
		want       bool
	}{
		{"", "", false},
		{"1", "", true},
		{"", "true", true},
		{"0", "false", false},
	} {
		t.Setenv(StrictEnv, c.strict)
		t.Setenv("CI", c.ci)
		if got := Strict(); got != c.want {
			t.Errorf("%s=%q CI=%q: Strict() = %v, want %v", StrictEnv, c.strict, c.ci, got, c.want)
		}
	}
}

func TestRecordAppendsToTheSkipLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	Record("TestA", "cassandra is not available")
	Record("TestB", "two\nlines")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("skip log holds %d lines, want 2:\n%s", len(lines), b)
	}
	if want := "./internal/testenv TestA: cassandra is not available"; lines[0] != want {
		t.Errorf("line 1 = %q, want %q", lines[0], want)
	}
	if !strings.HasSuffix(lines[1], "TestB: two lines") {
		t.Errorf("line 2 = %q: a reason must stay on one line", lines[1])
	}
}

func TestMissingSkipsOutsideStrictMode(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	t.Setenv(StrictEnv, "")
	t.Setenv("CI", "")
	skipped := false
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Missing(t, "a thing", "install it")
	})
	if !skipped {
		t.Fatal("Missing did not skip outside strict mode")
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "TestMissingSkipsOutsideStrictMode/inner: a thing is not available (install it)") {
		t.Fatalf("skip log = %q", b)
	}
}
