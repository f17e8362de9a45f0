package jobmgr

import (
	"context"
	"errors"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// storeOutage is the loop's view of a store that stopped answering
// (store.ErrUnavailable). While it lasts, the loop asks the store a cheap
// question, without the engine's lock, before each pass, and runs the
// pass only once it is answered: a pass whose writes fail holds the lock
// for the store's whole timeout and gains nothing, while the API's reads
// need the lock. State does not move meanwhile; what plugins report waits
// in the inbox.
type storeOutage struct {
	since   time.Time // zero while the store answers
	backoff time.Duration
}

// Bounds of the wait between probes of a store that does not answer.
const (
	minProbeWait = 100 * time.Millisecond
	maxProbeWait = 2 * time.Second
)

// probeKey is the value a probe reads; it need not exist.
const probeKey = "jobmgr/probe"

// down reports whether the store is known not to answer.
func (o *storeOutage) down() bool { return !o.since.IsZero() }

// failed records a pass that failed; it reports whether an outage began.
func (o *storeOutage) failed(err error, now time.Time) bool {
	if !errors.Is(err, store.ErrUnavailable) || o.down() {
		return false
	}
	o.since, o.backoff = now, minProbeWait
	return true
}

// wait is how long the loop sleeps before its next probe, doubling up to
// maxProbeWait.
func (o *storeOutage) wait() time.Duration {
	d := o.backoff
	o.backoff = min(2*o.backoff, maxProbeWait)
	return d
}

// probe asks the store for a value: any answer, the value or ErrNotFound,
// ends the outage and returns how long it lasted.
func (o *storeOutage) probe(ctx context.Context, st store.RecordStore, now func() time.Time) (bool, time.Duration) {
	_, err := kinds.GetValue(ctx, st, probeKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, 0
	}
	lasted := now().Sub(o.since)
	o.since = time.Time{}
	return true, lasted
}
