package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/store"
)

// openStoreWaiting opens a store that may not be reachable yet: a server
// started beside its Cassandra cluster, or while a node restarts, finds
// the store unavailable (no node answers, or too few replicas are up for
// the consistency level) for a while. Such a failure is tried again, with
// a doubling pause, for up to wait; any other failure (a bad keyspace, a
// schema the binary does not know) ends the start at once.
func openStoreWaiting(ctx context.Context, log *slog.Logger, wait time.Duration, open func(context.Context) (store.Backend, error)) (store.Backend, error) {
	deadline := time.Now().Add(wait)
	pause := goalstate.Backoff{Base: 500 * time.Millisecond, Max: 5 * time.Second}
	for attempt := uint32(1); ; attempt++ {
		st, err := open(ctx)
		if err == nil {
			if attempt > 1 {
				log.Info("store reachable", "attempts", attempt)
			}
			return st, nil
		}
		if !errors.Is(err, store.ErrUnavailable) {
			return nil, err
		}
		next := pause.Delay(attempt)
		if time.Now().Add(next).After(deadline) {
			return nil, fmt.Errorf("%w (still so after %v of trying; store.cassandra.startWait sets how long)", err, wait)
		}
		log.Warn("store not reachable yet; trying again", "attempt", attempt, "in", next, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(next):
		}
	}
}
