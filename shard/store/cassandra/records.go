package cassandra

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// The statements every record kept with a revision (jobs, updates,
// migrations, pools) is written and read by: a create conditional on the
// row not existing, a write conditional on its revision, and a read of
// its record.

// insertNew runs an "INSERT ... IF NOT EXISTS" statement: nil when
// applied, ErrExists when the row exists.
func (s *Store) insertNew(ctx context.Context, stmt string, args ...any) error {
	applied, err := s.query(ctx, stmt, args...).MapScanCAS(map[string]any{})
	if err != nil {
		return s.classify(ctx, err)
	}
	if !applied {
		return store.ErrExists
	}
	return nil
}

// compareAndSet runs an "UPDATE ... IF revision = ?" statement: nil when
// applied, ErrNotFound when the row does not exist, ErrConflict naming
// the stored revision when it is not given. A statement with more
// conditions passes refused, which says why a row at the given revision
// was not written from the row's columns (nil: ErrConflict as well).
func (s *Store) compareAndSet(ctx context.Context, stmt string, given uint64, refused func(row map[string]any) error, args ...any) error {
	prev := map[string]any{}
	applied, err := s.query(ctx, stmt, args...).MapScanCAS(prev)
	if err != nil {
		return s.classify(ctx, err)
	}
	if applied {
		return nil
	}
	stored, _ := prev["revision"].(int64)
	switch {
	case stored == 0:
		// Revisions start at 1: no stored revision means no row.
		return store.ErrNotFound
	case refused != nil && uint64(stored) == given:
		return refused(prev)
	}
	return fmt.Errorf("stored revision %d, given %d: %w", stored, given, store.ErrConflict)
}

// getRecord reads the one record column a "SELECT record ..." statement
// selects: ErrNotFound when there is no row or it holds no record.
func (s *Store) getRecord(ctx context.Context, stmt string, args ...any) ([]byte, error) {
	var record []byte
	err := s.query(ctx, stmt, args...).Scan(&record)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && record == nil) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	return record, nil
}
