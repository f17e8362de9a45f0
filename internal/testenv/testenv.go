// Package testenv decides what a test does when a real dependency it needs
// (Cassandra, the Kubernetes control plane, a browser, network namespaces,
// a Python package) is not there.
//
// Under `make test` and CI (PELOTON_TEST_STRICT=1, or CI=true) such a test
// fails: the suite promises to run against the real parts, and
// tests/env.sh provides them. Under a plain `go test` or `make check` the
// test is skipped and the skip is appended to the file named by
// PELOTON_SKIP_LOG, which `make check` prints at its end, so that nothing
// is skipped silently.
//
// It imports nothing of ours, so any package's tests may use it.
package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Environment variables read here.
const (
	StrictEnv  = "PELOTON_TEST_STRICT"
	SkipLogEnv = "PELOTON_SKIP_LOG"
)

// Strict reports whether a missing dependency is a failure.
func Strict() bool {
	return os.Getenv(StrictEnv) == "1" || os.Getenv("CI") == "true"
}

// Missing stops t because what it needs is missing: a failure when Strict,
// otherwise a skip recorded in the skip log. how tells the reader how to
// get the dependency.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	msg := what + " is not available"
	if how != "" {
		msg += " (" + how + ")"
	}
	if Strict() {
		t.Fatal(msg + "; `make test` sets it up with tests/env.sh")
	}
	Record(t.Name(), msg)
	t.Skip(msg)
}

// Record appends one skipped test (or package) and the reason to the skip
// log, if one is named. Errors writing it are reported on stderr: a lost
// line would hide a skip.
func Record(name, reason string) {
	path := os.Getenv(SkipLogEnv)
	if path == "" {
		return
	}
	wd, _ := os.Getwd()
	line := fmt.Sprintf("%s %s: %s\n", shortDir(wd), name, strings.ReplaceAll(reason, "\n", " "))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: recording a skip in %s: %v\n", path, err)
	}
}

// shortDir names a test's package by its directory below the module root
// (go test runs a package's tests in its directory).
func shortDir(wd string) string {
	dir := wd
	for d := wd; ; {
		if _, err := os.Stat(d + "/go.mod"); err == nil {
			rel := strings.TrimPrefix(wd, d)
			return "." + rel
		}
		parent := d[:max(strings.LastIndex(d, "/"), 0)]
		if parent == "" || parent == d {
			return dir
		}
		d = parent
	}
}
