package boltstore

import (
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Migrations live in bucket "migrations" (migration id → record).

// CreateMigration stores a new migration with Revision 1 and sets
// m.Revision to 1.
func (s *Store) CreateMigration(ctx context.Context, m *model.Migration) error {
	if err := codec.CheckMigration(m); err != nil {
		return fmt.Errorf("create migration: %w", err)
	}
	value := codec.EncodeMigration(m, 1)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(migrationsBucket)
		if b.Get([]byte(m.ID)) != nil {
			return store.ErrExists
		}
		return b.Put([]byte(m.ID), value)
	})
	if err != nil {
		return fmt.Errorf("create migration %s: %w", m.ID, err)
	}
	m.Revision = 1
	return nil
}

// WriteMigration replaces a migration whose stored revision equals
// m.Revision and increments m.Revision.
func (s *Store) WriteMigration(ctx context.Context, m *model.Migration) error {
	if err := codec.CheckMigration(m); err != nil {
		return fmt.Errorf("write migration: %w", err)
	}
	value := codec.EncodeMigration(m, m.Revision+1)
	err := s.update(ctx, func(tx *bolt.Tx) error { return putMigration(tx, m, value) })
	if err != nil {
		return fmt.Errorf("write migration %s: %w", m.ID, err)
	}
	m.Revision++
	return nil
}

// putMigration replaces m's record with value in tx, compared and set on
// m's revision as WriteMigration says.
func putMigration(tx *bolt.Tx, m *model.Migration, value []byte) error {
	b := tx.Bucket(migrationsBucket)
	old := b.Get([]byte(m.ID))
	if old == nil {
		return store.ErrNotFound
	}
	stored, err := codec.DecodeMigration(m.ID, old)
	switch {
	case err != nil:
		return err
	case stored.Revision != m.Revision:
		return fmt.Errorf("stored revision %d, given %d: %w", stored.Revision, m.Revision, store.ErrConflict)
	}
	return b.Put([]byte(m.ID), value)
}

// GetMigration returns a stored migration.
func (s *Store) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	var m *model.Migration
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(migrationsBucket).Get([]byte(id))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		m, err = codec.DecodeMigration(id, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("migration %s: %w", id, err)
	}
	return m, nil
}

// ListMigrations returns every migration, oldest first.
func (s *Store) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	var out []*model.Migration
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(migrationsBucket).ForEach(func(k, v []byte) error {
			m, err := codec.DecodeMigration(model.MigrationID(k), v)
			if err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.SortFunc(out, codec.CompareMigrations)
	return out, nil
}
