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

// Main runs the package's tests (Run) and exits.
func Main(m *testing.M, bin *string) { os.Exit(Run(m, bin)) }

// Run builds the binary into *bin (nil: tests build it with Binary when
// one needs it, so that a benchmark that does not runs without it), runs
// the package's tests, removes the binary and returns the tests' exit
// code. Their HTTP requests to a dev cluster carry its token
// (DevTransport).
func Run(m *testing.M, bin *string) int {
	if bin != nil {
		path, err := build()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		*bin = path
	}
	UseDevTokens()
	defer func() {
		if built.cleanup != nil {
			built.cleanup()
		}
	}()
	return m.Run()
}

// Binary returns the peloton binary, built on the first call of the test
// process (removed by Run); it fails t when it does not build.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
