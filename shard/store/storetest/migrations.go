package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// migrationKind is the migrations of s, for the contract of a revisioned
// record kind.
func migrationKind(s store.Store) revisioned[model.Migration] {
	return revisioned[model.Migration]{
		name:   "Migration",
		full:   func(id string) *model.Migration { return FullMigration(model.MigrationID(id)) },
		create: func(ctx context.Context, m *model.Migration) error { return kinds.Migrations.Create(ctx, s, m) },
		write:  func(ctx context.Context, m *model.Migration) error { return kinds.Migrations.Write(ctx, s, m) },
		get: func(ctx context.Context, id string) (*model.Migration, error) {
			return kinds.Migrations.Get(ctx, s, id)
		},
		list:     func(ctx context.Context) ([]*model.Migration, error) { return kinds.Migrations.List(ctx, s) },
		revision: func(m *model.Migration) *uint64 { return &m.Revision },
		message:  func(m *model.Migration) *string { return &m.Message },
		created:  func(m *model.Migration) *time.Time { return &m.CreateTime },
		change: func(m *model.Migration) {
			m.State, m.Jobs[0].Moved = model.MigrationSucceeded, append(m.Jobs[0].Moved, 70_001)
			delete(m.Jobs[0].Surge, 30)
		},
	}
}

func testMigrationsCompareAndSet(t *testing.T, s store.Store) {
	testCompareAndSet(t, migrationKind(s))
}

func testListMigrationsOldestFirst(t *testing.T, s store.Store) {
	testListOldestFirst(t, migrationKind(s))
}
