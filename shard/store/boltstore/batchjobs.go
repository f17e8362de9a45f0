package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

var _ store.JobBatchUpdater = (*Store)(nil)

// UpdateJobs replaces several jobs in one transaction, each compared and
// set on its revision like UpdateJob; on any error nothing is written and no
// revision changes.
func (s *Store) UpdateJobs(ctx context.Context, jobs []*model.Job) error {
	values := make([][]byte, len(jobs))
	for i, job := range jobs {
		if err := checkJob(job); err != nil {
			return fmt.Errorf("update jobs: %w", err)
		}
		v, err := encodeJob(job, job.Revision+1)
		if err != nil {
			return fmt.Errorf("update job %s: %w", job.ID, err)
		}
		values[i] = v
	}
	err := s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(jobsBucket)
		for i, job := range jobs {
			key := []byte(job.ID)
			old := b.Get(key)
			if old == nil {
				return fmt.Errorf("job %s: %w", job.ID, store.ErrNotFound)
			}
			rev, err := storedRevision(old, jobRecordVersion)
			if err != nil {
				return fmt.Errorf("job %s: %w", job.ID, err)
			}
			if rev != job.Revision {
				return fmt.Errorf("job %s: stored revision %d, given %d: %w", job.ID, rev, job.Revision, store.ErrConflict)
			}
			if err := b.Put(key, values[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update jobs: %w", err)
	}
	for _, job := range jobs {
		job.Revision++
	}
	return nil
}
