package storetest

import (
	"context"
	"fmt"
	"testing"

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

func testMigrationsCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	m := FullMigration("mig-1")
	m.Revision = 9 // ignored: a new migration starts at revision 1
	requireIs(t, s.CreateMigration(ctx, nil), store.ErrInvalid, "")
	requireIs(t, s.CreateMigration(ctx, FullMigration("")), store.ErrInvalid, "")
	mustNil(t, s.CreateMigration(ctx, m), "CreateMigration")
	if m.Revision != 1 {
		t.Fatalf("caller's Revision after create = %d, want 1", m.Revision)
	}
	got, err := s.GetMigration(ctx, "mig-1")
	mustNil(t, err, "GetMigration")
	requireUTC(t, "migration", got)
	requireEqual(t, "stored migration", got, m)
	if zero := zeroFieldPaths(got); len(zero) != 0 {
		t.Fatalf("FullMigration leaves fields zero, extend it: %v", zero)
	}
	dup := FullMigration("mig-1")
	dup.Message = "impostor"
	requireIs(t, s.CreateMigration(ctx, dup), store.ErrExists, "mig-1")

	m.State, m.Jobs[0].Moved = model.MigrationSucceeded, append(m.Jobs[0].Moved, 70_001)
	delete(m.Jobs[0].Surge, 30)
	mustNil(t, s.WriteMigration(ctx, m), "WriteMigration")
	if m.Revision != 2 {
		t.Fatalf("caller's Revision after write = %d, want 2", m.Revision)
	}
	for _, rev := range []uint64{0, 1, 3} {
		stale := *m
		stale.Revision, stale.Message = rev, "stale"
		requireIs(t, s.WriteMigration(ctx, &stale), store.ErrConflict, "mig-1")
		if stale.Revision != rev {
			t.Fatalf("rejected write changed caller's Revision %d to %d", rev, stale.Revision)
		}
	}
	requireIs(t, s.WriteMigration(ctx, FullMigration("ghost")), store.ErrNotFound, "ghost")
	got, err = s.GetMigration(ctx, "mig-1")
	mustNil(t, err, "GetMigration")
	requireEqual(t, "migration after rejected writes", got, m)
	_, err = s.GetMigration(ctx, "mig")
	requireIs(t, err, store.ErrNotFound, "mig")
}

func testListMigrationsOldestFirst(t *testing.T, s store.Store) {
	ctx := context.Background()
	got, err := s.ListMigrations(ctx)
	mustNil(t, err, "ListMigrations")
	if len(got) != 0 {
		t.Fatalf("ListMigrations of an empty store: %d", len(got))
	}
	// Created out of order; two share a create time and go by id.
	for i, sec := range []int64{50, 10, 30, 10} {
		m := FullMigration(model.MigrationID(fmt.Sprintf("m%d", i)))
		m.CreateTime = fixtureTime(sec, 0)
		mustNil(t, s.CreateMigration(ctx, m), "CreateMigration")
	}
	got, err = s.ListMigrations(ctx)
	mustNil(t, err, "ListMigrations")
	var ids []model.MigrationID
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if want := []model.MigrationID{"m1", "m3", "m2", "m0"}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ListMigrations order %v, want %v", ids, want)
	}
}
