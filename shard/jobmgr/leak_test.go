package jobmgr

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine they started is
// still running after them: every loop stops with its context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
