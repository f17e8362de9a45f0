package jobmgr

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine they started is
// still running after them: every loop stops with its context.
//
// The lock check is on: a store call made while an engine lock is held
// panics (see lockcheck.go).
func TestMain(m *testing.M) {
	lockCheck.Store(true)
	goleak.VerifyTestMain(m)
}
