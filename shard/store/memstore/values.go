package memstore

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/store"
)

// GetValue returns a copy of a named value.
func (s *Store) GetValue(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, fmt.Errorf("get value: empty key: %w", store.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	v, ok := s.values[key]
	if !ok {
		return nil, fmt.Errorf("value %s: %w", key, store.ErrNotFound)
	}
	return append([]byte(nil), v...), nil
}

// PutValue stores a copy of a named value.
func (s *Store) PutValue(ctx context.Context, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("put value: empty key: %w", store.ErrInvalid)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.values[key] = append([]byte(nil), value...)
	return nil
}

// ListValues returns copies of every named value.
func (s *Store) ListValues(ctx context.Context) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	out := make(map[string][]byte, len(s.values))
	for k, v := range s.values {
		out[k] = append([]byte{}, v...)
	}
	return out, nil
}
