package jobmgr

import (
	"context"
	"errors"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// A migration moves the instances of jobs from the clusters they run on to
// one target cluster, a batch at a time, under each job's SLA: the rolling
// update's loop with the cluster as the thing that changes. Each pass,
// migration.Step decides for every job of every running migration from
// how its gangs stand, and migration.Job keeps the job's part beside it;
// this shell applies the plan: it pins instances
// to the target (a must placement preference), starts surge instances
// (with surge), restarts stale instances, stops surge instances that are
// no longer needed, and keeps the report. See docs/migration.md.

// writeMigration stores a migration, taking the stored revision once if an
// earlier write whose answer was lost did land.
func (s *migrationShell) write(ctx context.Context, m *model.Migration) error {
	err := kinds.Migrations.Write(ctx, s.e.cfg.Store, m)
	if errors.Is(err, store.ErrConflict) {
		if stored, gerr := kinds.Migrations.Get(ctx, s.e.cfg.Store, string(m.ID)); gerr == nil {
			m.Revision = stored.Revision
			err = kinds.Migrations.Write(ctx, s.e.cfg.Store, m)
		}
	}
	return err
}
