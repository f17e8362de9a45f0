package service

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Engine and store errors reach callers with the code that tells them
// what to do: a watch resuming past the events held is OutOfRange (list,
// then watch from now), a full pool ResourceExhausted, a store that does
// not answer Unavailable.
func TestEngineErrorsMapToCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want codes.Code
	}{
		{fmt.Errorf("%w: after seq 7", jobmgr.ErrEventsGone), codes.OutOfRange},
		{fmt.Errorf("pool /a: %w", jobmgr.ErrPoolFull), codes.ResourceExhausted},
		{fmt.Errorf("write: %w", store.ErrUnavailable), codes.Unavailable},
		{fmt.Errorf("job x: %w", jobmgr.ErrNotFound), codes.NotFound},
		{fmt.Errorf("logs of run x-0-1: %w", hostmgr.ErrUnknownRun), codes.NotFound},
		{fmt.Errorf("store job x: %w: %w", jobmgr.ErrNotStored, errors.New("disk full")), codes.Unavailable},
		{fmt.Errorf("store job x: %w: %w", jobmgr.ErrNotStored, store.ErrUnavailable), codes.Unavailable},
		{fmt.Errorf("store job x: %w: %w", jobmgr.ErrNotStored, context.DeadlineExceeded), codes.DeadlineExceeded},
	} {
		if got := status.Code(toStatus(c.err)); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}

// A create whose write the engine cancelled (its member stopped leading
// while the write was on its way) is Unavailable, which clients retry; one
// its own caller cancelled stays Canceled.
func TestCreateCancelledByTheEngineIsUnavailable(t *testing.T) {
	err := fmt.Errorf("store job: create job: %w", context.Canceled)
	if got := status.Code(toStatus(stoppedUnder(context.Background(), err))); got != codes.Unavailable {
		t.Errorf("cancelled by the engine: %s, want Unavailable", got)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if got := status.Code(toStatus(stoppedUnder(gone, err))); got != codes.Canceled {
		t.Errorf("cancelled by its caller: %s, want Canceled", got)
	}
}
