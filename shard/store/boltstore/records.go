package boltstore

import (
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
)

// The records of store.RecordStore's tables: one bucket a table, named
// after it, holding each record under its key.

// CreateRecord stores rec under key unless the key is taken.
func (s *Store) CreateRecord(ctx context.Context, t *store.Table, key string, rec []byte) error {
	if err := store.CheckRevisioned(t); err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(t.Name))
		if err != nil {
			return err
		}
		if b.Get([]byte(key)) != nil {
			return store.ErrExists
		}
		return b.Put([]byte(key), rec)
	})
}

// SwapRecord replaces key's record if its stored revision is rev.
func (s *Store) SwapRecord(ctx context.Context, t *store.Table, key string, rev uint64, rec []byte) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		return swapRecord(tx, store.Prepared{Table: t, Key: key, Rev: rev, Data: rec})
	})
}

// swapRecord is SwapRecord within tx.
func swapRecord(tx *bolt.Tx, p store.Prepared) error {
	b := tx.Bucket([]byte(p.Table.Name))
	var stored []byte
	if b != nil {
		stored = b.Get([]byte(p.Key))
	}
	if err := store.CheckSwap(p.Table, stored, p.Rev); err != nil {
		return err
	}
	return b.Put([]byte(p.Key), p.Data)
}

// GetRecord returns key's record.
func (s *Store) GetRecord(ctx context.Context, t *store.Table, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(t.Name))
		if b == nil {
			return store.ErrNotFound
		}
		v := b.Get([]byte(key))
		if v == nil {
			return store.ErrNotFound
		}
		out = slices.Clone(v)
		return nil
	})
	return out, err
}

// ListRecords returns every record of t, in key order.
func (s *Store) ListRecords(ctx context.Context, t *store.Table) ([]store.Record, error) {
	var out []store.Record
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(t.Name))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out = append(out, store.Record{Key: string(k), Data: slices.Clone(v)})
			return nil
		})
	})
	return out, err
}

// DeleteRecord removes key's record.
func (s *Store) DeleteRecord(ctx context.Context, t *store.Table, key string) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(t.Name))
		if b == nil || b.Get([]byte(key)) == nil {
			if !t.Revisioned() {
				return nil
			}
			return store.ErrNotFound
		}
		return b.Delete([]byte(key))
	})
}

// PutRecords stores or replaces records of a table without revisions in
// one transaction.
func (s *Store) PutRecords(ctx context.Context, t *store.Table, recs []store.Record) error {
	if err := store.CheckPut(t, recs); err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(t.Name))
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := b.Put([]byte(r.Key), r.Data); err != nil {
				return fmt.Errorf("%s %s: %w", t.Name, r.Key, err)
			}
		}
		return nil
	})
}
