package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreateMigration stores a new migration with Revision 1 and sets
// m.Revision to 1.
func (s *Store) CreateMigration(ctx context.Context, m *model.Migration) error {
	if err := codec.CheckMigration(m); err != nil {
		return fmt.Errorf("create migration: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.migrations[m.ID]; ok {
		return fmt.Errorf("create migration %s: %w", m.ID, store.ErrExists)
	}
	s.migrations[m.ID] = codec.EncodeMigration(m, 1)
	m.Revision = 1
	return nil
}

// WriteMigration replaces a migration whose stored revision equals
// m.Revision and increments m.Revision.
func (s *Store) WriteMigration(ctx context.Context, m *model.Migration) error {
	if err := codec.CheckMigration(m); err != nil {
		return fmt.Errorf("write migration: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkMigration(m); err != nil {
		return err
	}
	s.migrations[m.ID] = codec.EncodeMigration(m, m.Revision+1)
	m.Revision++
	return nil
}

// checkMigration checks that m can replace the stored migration, as
// WriteMigration says; the caller holds the lock.
func (s *Store) checkMigration(m *model.Migration) error {
	b, ok := s.migrations[m.ID]
	if !ok {
		return fmt.Errorf("write migration %s: %w", m.ID, store.ErrNotFound)
	}
	old, err := codec.DecodeMigration(m.ID, b)
	if err != nil {
		return err
	}
	if old.Revision != m.Revision {
		return fmt.Errorf("write migration %s: stored revision %d, given %d: %w", m.ID, old.Revision, m.Revision, store.ErrConflict)
	}
	return nil
}

// GetMigration returns a copy of a migration.
func (s *Store) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	b, ok := s.migrations[id]
	if !ok {
		return nil, fmt.Errorf("migration %s: %w", id, store.ErrNotFound)
	}
	return codec.DecodeMigration(id, b)
}

// ListMigrations returns copies of every migration, oldest first.
func (s *Store) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]*model.Migration, 0, len(s.migrations))
	for id, b := range s.migrations {
		m, err := codec.DecodeMigration(id, b)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, codec.CompareMigrations)
	return out, nil
}
