package memstore

import (
	"context"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreateMigration stores a new migration with Revision 1 and sets
// m.Revision to 1.
func (s *Store) CreateMigration(ctx context.Context, m *model.Migration) error {
	return migrationKind.create(ctx, s, s.migrations, m)
}

// WriteMigration replaces a migration whose stored revision equals
// m.Revision and increments m.Revision.
func (s *Store) WriteMigration(ctx context.Context, m *model.Migration) error {
	return migrationKind.write(ctx, s, s.migrations, m)
}

// GetMigration returns a copy of a migration.
func (s *Store) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	return migrationKind.get(ctx, s, s.migrations, id)
}

// ListMigrations returns copies of every migration, oldest first.
func (s *Store) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return migrationKind.list(s.migrations, nil, codec.CompareMigrations)
}
