package cassandra

import (
	"context"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreateMigration stores a new migration with Revision 1 and sets
// m.Revision to 1.
func (s *Store) CreateMigration(ctx context.Context, m *model.Migration) error {
	if err := codec.CheckMigration(m); err != nil {
		return fmt.Errorf("create migration: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("create migration %s: %w", m.ID, err)
	}
	err := s.insertNew(ctx, s.q.createMigration, string(m.ID), int64(1), codec.EncodeMigration(m, 1))
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
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("write migration %s: %w", m.ID, err)
	}
	err := s.compareAndSet(ctx, s.q.writeMigration, m.Revision, nil,
		int64(m.Revision+1), codec.EncodeMigration(m, m.Revision+1), string(m.ID), int64(m.Revision))
	if err != nil {
		return fmt.Errorf("write migration %s: %w", m.ID, err)
	}
	m.Revision++
	return nil
}

// GetMigration returns a stored migration.
func (s *Store) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("migration %s: %w", id, err)
	}
	record, err := s.getRecord(ctx, s.q.getMigration, string(id))
	if err != nil {
		return nil, fmt.Errorf("migration %s: %w", id, err)
	}
	return codec.DecodeMigration(id, record)
}

// ListMigrations returns every migration, oldest first.
func (s *Store) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	iter := s.query(ctx, s.q.listMigrations).Iter()
	var (
		out    []*model.Migration
		id     string
		record []byte
	)
	for iter.Scan(&id, &record) {
		m, err := codec.DecodeMigration(model.MigrationID(id), record)
		if err != nil {
			_ = iter.Close()
			return nil, err
		}
		out = append(out, m)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("list migrations: %w", s.classify(ctx, err))
	}
	slices.SortFunc(out, codec.CompareMigrations)
	return out, nil
}
