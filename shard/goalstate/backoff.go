package goalstate

import "time"

// Backoff is how long a task waits before it runs again after failures:
// Base before the first retry, doubling with every further failure, never
// more than Max. It is the one rule for every retry of the tree: a failed
// batch run, a service instance that exited or crashed, an instance whose
// health check failed.
type Backoff struct {
	Base time.Duration
	// Max caps the delay; zero or less means no cap.
	Max time.Duration
}

// Delay is the wait before the next run of a task that failed failures
// times so far: Base for none or one failure, then Base·2^(failures-1),
// capped at Max. A non-positive Base means no wait.
func (b Backoff) Delay(failures uint32) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	limit := b.Max
	if limit <= 0 {
		limit = time.Duration(1<<63 - 1)
	}
	if b.Base >= limit {
		return limit
	}
	var n uint32
	if failures > 0 {
		n = failures - 1
	}
	// Base<<n would pass limit: stop at it (this also keeps the shift from
	// overflowing).
	if n >= 63 || b.Base > limit>>n {
		return limit
	}
	return b.Base << n
}
