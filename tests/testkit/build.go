package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BuildPeloton builds the peloton binary into a temporary directory and
// returns its path and a function that removes it.
func BuildPeloton() (string, func(), error) {
	dir, err := os.MkdirTemp("", "peloton-test-bin")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "peloton")
	build := exec.Command("go", "build", "-o", bin, "github.com/peloton-federated/peloton/cmd/peloton")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building peloton: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// built is the binary of this test process, built once.
var built struct {
	once    sync.Once
	path    string
	cleanup func()
	err     error
}

func build() (string, error) {
	built.once.Do(func() { built.path, built.cleanup, built.err = BuildPeloton() })
	return built.path, built.err
}

// Main builds the binary into *bin, runs the package's tests, removes the
// binary and exits. Their HTTP requests to a dev cluster carry its token
// (DevTransport).
func Main(m *testing.M, bin *string) {
	path, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	MainLazy(m)
}

// MainLazy runs the package's tests, which build the binary with Binary
// when one needs it (a benchmark that does not runs without it), removes
// the binary and exits. HTTP requests to a dev cluster carry its token.
func MainLazy(m *testing.M) {
	UseDevTokens()
	code := m.Run()
	if built.cleanup != nil {
		built.cleanup()
	}
	os.Exit(code)
}

// Binary returns the peloton binary, built on the first call of the test
// process (removed by Main or MainLazy); it fails t when it does not build.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
