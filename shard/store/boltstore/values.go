package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
)

// GetValue returns a named value.
func (s *Store) GetValue(ctx context.Context, key string) ([]byte, error) {
	if key == "" {
		return nil, fmt.Errorf("get value: empty key: %w", store.ErrInvalid)
	}
	var out []byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(valueBucket).Get([]byte(key))
		if v == nil {
			return fmt.Errorf("value %s: %w", key, store.ErrNotFound)
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// PutValue stores or replaces a named value.
func (s *Store) PutValue(ctx context.Context, key string, value []byte) error {
	if key == "" {
		return fmt.Errorf("put value: empty key: %w", store.ErrInvalid)
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(valueBucket).Put([]byte(key), append([]byte(nil), value...))
	})
}

// ListValues returns every named value.
func (s *Store) ListValues(ctx context.Context) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(valueBucket).ForEach(func(k, v []byte) error {
			out[string(k)] = append([]byte{}, v...)
			return nil
		})
	})
	return out, err
}
