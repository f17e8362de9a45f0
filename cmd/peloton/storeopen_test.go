package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

func TestOpenStoreWaitingTriesAnUnavailableStoreAgain(t *testing.T) {
	calls := 0
	st, err := openStoreWaiting(context.Background(), slog.New(slog.DiscardHandler), time.Minute, func(context.Context) (store.Backend, error) {
		calls++
		if calls < 3 {
			return nil, fmt.Errorf("read schema: %w: not enough replicas", store.ErrUnavailable)
		}
		return memstore.New(), nil
	})
	if err != nil || st == nil || calls != 3 {
		t.Fatalf("store %v, err %v after %d calls; want a store after 3", st, err, calls)
	}
	st.Close()
}

func TestOpenStoreWaitingStopsAtOtherErrorsAndAtItsWait(t *testing.T) {
	calls := 0
	bad := errors.New("keyspace name too long")
	_, err := openStoreWaiting(context.Background(), slog.New(slog.DiscardHandler), time.Minute, func(context.Context) (store.Backend, error) {
		calls++
		return nil, bad
	})
	if !errors.Is(err, bad) || calls != 1 {
		t.Fatalf("err %v after %d calls; want the error at once", err, calls)
	}
	calls = 0
	_, err = openStoreWaiting(context.Background(), slog.New(slog.DiscardHandler), 1200*time.Millisecond, func(context.Context) (store.Backend, error) {
		calls++
		return nil, store.ErrUnavailable
	})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "startWait") || calls < 2 || calls > 3 {
		t.Fatalf("err %v after %d calls; want unavailable naming startWait after 2 or 3 tries", err, calls)
	}
}
