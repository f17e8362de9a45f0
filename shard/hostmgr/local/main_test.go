package local

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the peloton binary: started as
// `<test binary> executor ...` it runs ExecutorMain instead of the tests.
// No test is ever started with that first argument, and nothing needs to be
// put in the environment (where the task's command would inherit it).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ExecutorCommand {
		os.Exit(ExecutorMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// testExecutable is the test binary itself.
func testExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
