package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var _ store.JobBatchUpdater = (*Store)(nil)

// UpdateJobs replaces several jobs in one transaction, each compared and
// set on its revision like UpdateJob; on any error nothing is written and no
// revision changes.
func (s *Store) UpdateJobs(ctx context.Context, jobs []*model.Job) error {
	records := make([][]byte, len(jobs))
	for i, job := range jobs {
		if err := codec.CheckJobRecord(job); err != nil {
			return fmt.Errorf("update jobs: %w", err)
		}
		records[i] = codec.EncodeJobRecord(job, job.Revision+1)
	}
	err := s.batch(ctx, func(tx *bolt.Tx) error {
		for i, job := range jobs {
			if err := replaceJobRecord(tx, job, records[i]); err != nil {
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
