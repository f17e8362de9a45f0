package boltstore

import (
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
func (s *Store) WritePass(ctx context.Context, p store.Pass) error {
	if p.Empty() {
		return ctx.Err()
	}
	for i, t := range p.Tasks {
		if t == nil {
			return fmt.Errorf("write pass: %w: task %d is nil", store.ErrInvalid, i)
		}
	}
	// Encoded before the transaction, as the single-kind writes do.
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
	err := s.batch(ctx, func(tx *bolt.Tx) error {
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
		return fmt.Errorf("write pass: %w", err)
	}
	p.Stored()
	return nil
}
