package cassandra

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// GetValue returns a named value.
func (s *Store) GetValue(ctx context.Context, key string) ([]byte, error) {
	if key == "" {
		return nil, fmt.Errorf("get value: empty key: %w", store.ErrInvalid)
	}
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("value %s: %w", key, err)
	}
	var value []byte
	err := s.query(ctx, s.q.getValue, key).Scan(&value)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, fmt.Errorf("value %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("value %s: %w", key, s.classify(ctx, err))
	}
	return value, nil
}

// PutValue stores or replaces a named value.
func (s *Store) PutValue(ctx context.Context, key string, value []byte) error {
	if key == "" {
		return fmt.Errorf("put value: empty key: %w", store.ErrInvalid)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("put value %s: %w", key, err)
	}
	if value == nil {
		value = []byte{} // an empty value, not a null cell
	}
	if err := s.query(ctx, s.q.putValue, key, value).Exec(); err != nil {
		return fmt.Errorf("put value %s: %w", key, s.classify(ctx, err))
	}
	return nil
}

// ListValues returns every named value.
func (s *Store) ListValues(ctx context.Context) (map[string][]byte, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list values: %w", err)
	}
	iter := s.query(ctx, s.q.listValues).Iter()
	out := map[string][]byte{}
	var (
		name  string
		value []byte
	)
	for iter.Scan(&name, &value) {
		out[name] = append([]byte{}, value...)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("list values: %w", s.classify(ctx, err))
	}
	return out, nil
}
