package testkit

import (
	"testing"
	"time"
)

// WaitFor polls cond every 100ms until it holds, failing the test after d;
// it returns how long it waited.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}
