package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// FullMigration returns a migration whose every field but Revision holds
// a non-zero value.
func FullMigration(id model.MigrationID) *model.Migration {
	return &model.Migration{
		ID:             id,
		Job:            "job-1",
		Pool:           "/maps/ingest",
		To:             "k8s-east",
		BatchSize:      3,
		Surge:          true,
		MoveRunning:    true,
		AllowStateful:  true,
		Paused:         true,
		State:          model.MigrationRollingBack,
		Message:        "waiting for SLA: 3/3 unavailable",
		CreateTime:     fixtureTime(30, 5),
		CompletionTime: fixtureTime(900, 999_999_999),
		PoolClusters:   &model.ClusterPolicy{Prefer: []string{"dc1"}, Avoid: []string{"dc2"}},
		Jobs: []model.MigrationJob{{
			Job:               "job-1",
			Type:              model.JobService,
			From:              "dc1",
			Clusters:          &model.ClusterPolicy{Prefer: []string{"mesos:dc1"}, Avoid: []string{"k8s-west"}},
			Instances:         30,
			Moved:             []uint32{0, 1, 2, 7, 70_000},
			Moving:            []uint32{3, 4},
			Surge:             map[uint32]uint32{30: 3, 31: 4},
			InFlight:          2,
			MaxUnavailable:    1,
			SLAMaxUnavailable: 3,
			Failures:          2,
			Retries:           1,
			Done:              true,
			Message:           "2 instances in flight",
		}, {Job: "job-2", Type: model.JobBatch, Instances: 2000}},
	}
}

// migrationKind is the migrations of s, for the contract of a revisioned
// record kind.
func migrationKind(s store.Store) revisioned[model.Migration] {
	return revisioned[model.Migration]{
		name:   "Migration",
		full:   func(id string) *model.Migration { return FullMigration(model.MigrationID(id)) },
		create: s.CreateMigration,
		write:  s.WriteMigration,
		get: func(ctx context.Context, id string) (*model.Migration, error) {
			return s.GetMigration(ctx, model.MigrationID(id))
		},
		list:     s.ListMigrations,
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
