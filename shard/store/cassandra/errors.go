package cassandra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// ErrSchemaVersion means the keyspace's schema is not the version this
// build uses: run `peloton store migrate` (or open with Migrate).
var ErrSchemaVersion = errors.New("cassandra schema version mismatch")

// unavailableCodes are Cassandra's answers that mean "not now": too few
// replicas alive, overloaded, starting, or a timeout. A timed-out write,
// compare-and-set included, may or may not have been applied.
var unavailableCodes = map[int]string{
	gocql.ErrCodeUnavailable:     "not enough replicas alive",
	gocql.ErrCodeOverloaded:      "coordinator overloaded",
	gocql.ErrCodeBootstrapping:   "coordinator bootstrapping",
	gocql.ErrCodeTruncate:        "truncate failed",
	gocql.ErrCodeWriteTimeout:    "write timed out; it may or may not have been applied",
	gocql.ErrCodeReadTimeout:     "read timed out",
	gocql.ErrCodeReadFailure:     "replica failed the read",
	gocql.ErrCodeWriteFailure:    "replica failed the write; it may or may not have been applied",
	gocql.ErrCodeCASWriteUnknown: "compare-and-set outcome unknown",
}

// connectionErrors are the driver's errors for "cannot reach a node".
var connectionErrors = []error{
	gocql.ErrNoConnections, gocql.ErrNoConnectionsStarted, gocql.ErrSessionClosed,
	gocql.ErrConnectionClosed, gocql.ErrTimeoutNoResponse, gocql.ErrTooManyTimeouts,
	gocql.ErrNoStreams, gocql.ErrHostQueryFailed, gocql.ErrUnavailable,
	io.EOF, io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE,
}

// classify maps a driver error to the store's sentinels: the caller's own
// cancellation stays as it is, anything meaning "Cassandra cannot be
// reached or cannot answer now" becomes store.ErrUnavailable naming the
// hosts, and any other error (a bug: bad CQL, wrong types) is returned
// wrapped as it is.
func (s *Store) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	hosts := s.cfg.hostsString()
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) {
		if why, ok := unavailableCodes[reqErr.Code()]; ok {
			return fmt.Errorf("cassandra %s: %w: %s: %w", hosts, store.ErrUnavailable, why, err)
		}
		return fmt.Errorf("cassandra %s: %w", hosts, err)
	}
	if isConnectionError(err) {
		return fmt.Errorf("cassandra %s: %w: %w", hosts, store.ErrUnavailable, err)
	}
	return fmt.Errorf("cassandra %s: %w", hosts, err)
}

func isConnectionError(err error) bool {
	for _, target := range connectionErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}
