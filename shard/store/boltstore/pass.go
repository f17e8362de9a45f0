package boltstore

import (
	"cmp"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var _ store.PassWriter = (*Store)(nil)

// WritePass writes a pass's tasks, job records, updates and migrations in
// one transaction, sharing its commit with the writes made meanwhile
// (group commit): one commit a pass instead of one per record kind.
func (s *Store) WritePass(ctx context.Context, p store.Pass) (err error) {
	if err := p.Check(); err != nil || p.Empty() {
		return cmp.Or(err, ctx.Err())
	}
	defer func() {
		if err != nil {
			p.Failed(err)
		}
	}()
	for i, t := range p.Tasks {
		if t == nil {
			return fmt.Errorf("write pass: %w: task %d is nil", store.ErrInvalid, i)
		}
	}
	// Encoded before the transaction, as the single-kind writes do; a new
	// job that cannot be encoded is left out with its error.
	created := make([]newJob, len(p.NewJobs))
	for i, j := range p.NewJobs {
		var err error
		if created[i], err = encodeNewJob(j); err != nil {
			p.NewJobErrs[i] = fmt.Errorf("create job: %w", err)
		}
	}
	ok := make([]bool, len(p.NewJobs)) // encoded: written unless its id is taken
	for i := range ok {
		ok[i] = p.NewJobErrs[i] == nil
	}
	jobs := make([][]byte, len(p.Jobs))
	for i, j := range p.Jobs {
		if err := codec.CheckJobRecord(j); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
		jobs[i] = codec.EncodeJobRecord(j, j.Revision+1)
	}
	updates := make([][]byte, len(p.Updates))
	for i, u := range p.Updates {
		if err := codec.CheckUpdate(u); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
		updates[i] = codec.EncodeUpdate(u, u.Revision+1)
	}
	migrations := make([][]byte, len(p.Migrations))
	for i, m := range p.Migrations {
		if err := codec.CheckMigration(m); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
		migrations[i] = codec.EncodeMigration(m, m.Revision+1)
	}
	err = s.batch(ctx, func(tx *bolt.Tx) error {
		// The group may run this again alone: outcomes start afresh.
		for i := range created {
			if !ok[i] {
				continue
			}
			p.NewJobErrs[i] = nil
			stored, err := putNewJob(tx, &created[i])
			if err != nil {
				return err
			}
			if !stored {
				p.NewJobErrs[i] = fmt.Errorf("create job %s: %w", p.NewJobs[i].ID, store.ErrExists)
			}
		}
		if err := putTasks(ctx, tx, p.Tasks); err != nil {
			return err
		}
		for i, j := range p.Jobs {
			if err := replaceJobRecord(tx, j, jobs[i]); err != nil {
				return err
			}
		}
		for i, u := range p.Updates {
			if err := putUpdate(tx, u, updates[i]); err != nil {
				return fmt.Errorf("update %s: %w", u.ID, err)
			}
		}
		for i, m := range p.Migrations {
			if err := putMigration(tx, m, migrations[i]); err != nil {
				return fmt.Errorf("migration %s: %w", m.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("write pass: %w", err)
		for i := range ok {
			if ok[i] {
				p.NewJobErrs[i] = err
			}
		}
		return err
	}
	for i, j := range p.NewJobs {
		if p.NewJobErrs[i] == nil {
			j.Revision, j.ConfigVersion = 1, created[i].version
		}
	}
	p.Stored()
	return nil
}
