package cassandra

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// CreateUpdate stores a new update of an existing job with Revision 1 and
// sets u.Revision to 1. The job's list of updates names it before the
// update row, a compare-and-set, is written.
func (s *Store) CreateUpdate(ctx context.Context, u *model.Update) error {
	if err := codec.CheckUpdate(u); err != nil {
		return fmt.Errorf("create update: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("create update %s: %w", u.ID, err)
	}
	if _, err := s.incarnation(ctx, u.Job); err != nil {
		return fmt.Errorf("create update %s: job %s: %w", u.ID, u.Job, err)
	}
	if err := s.query(ctx, s.q.addJobUpdate, string(u.Job), string(u.ID)).Exec(); err != nil {
		return fmt.Errorf("create update %s: %w", u.ID, s.classify(ctx, err))
	}
	err := s.insertNew(ctx, s.q.createUpdate, string(u.ID), string(u.Job), int64(1), codec.EncodeUpdate(u, 1))
	if err != nil {
		return fmt.Errorf("create update %s: %w", u.ID, err)
	}
	u.Revision = 1
	return nil
}

// WriteUpdate replaces an update whose stored revision equals u.Revision
// and increments u.Revision. An update's job never changes.
func (s *Store) WriteUpdate(ctx context.Context, u *model.Update) error {
	if err := codec.CheckUpdate(u); err != nil {
		return fmt.Errorf("write update: %w", err)
	}
	if err := s.beginWrite(ctx); err != nil {
		return fmt.Errorf("write update %s: %w", u.ID, err)
	}
	otherJob := func(row map[string]any) error {
		job, _ := row["job_id"].(string)
		return fmt.Errorf("%w: it is of job %s, not %s", store.ErrInvalid, job, u.Job)
	}
	err := s.compareAndSet(ctx, s.q.writeUpdate, u.Revision, otherJob,
		int64(u.Revision+1), codec.EncodeUpdate(u, u.Revision+1), string(u.ID), int64(u.Revision), string(u.Job))
	if err != nil {
		return fmt.Errorf("write update %s: %w", u.ID, err)
	}
	u.Revision++
	return nil
}

// getUpdate reads an update; ErrNotFound if there is none.
func (s *Store) getUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	record, err := s.getRecord(ctx, s.q.getUpdate, string(id))
	if err != nil {
		return nil, err
	}
	return codec.DecodeUpdate(id, record)
}

// GetUpdate returns a stored update.
func (s *Store) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	u, err := s.getUpdate(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	return u, nil
}

// jobUpdateIDs returns the update ids listed for a job.
func (s *Store) jobUpdateIDs(ctx context.Context, job model.JobID) ([]model.UpdateID, error) {
	iter := s.query(ctx, s.q.listJobUpdates, string(job)).Iter()
	var (
		ids []model.UpdateID
		id  string
	)
	for iter.Scan(&id) {
		ids = append(ids, model.UpdateID(id))
	}
	return ids, s.classify(ctx, iter.Close())
}

// ListUpdates returns a job's updates, oldest first; ErrNotFound if the
// job does not exist. A listed id whose update is missing, or is another
// job's (a CreateUpdate that found the id taken), is left out.
func (s *Store) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("updates of job %s: %w", job, err)
	}
	if _, err := s.incarnation(ctx, job); err != nil {
		return nil, fmt.Errorf("updates of job %s: %w", job, err)
	}
	ids, err := s.jobUpdateIDs(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("updates of job %s: %w", job, err)
	}
	updates := make([]*model.Update, len(ids))
	err = parallel(ctx, len(ids), listParallelism, func(ctx context.Context, i int) error {
		u, err := s.getUpdate(ctx, ids[i])
		if err == nil && u.Job == job {
			updates[i] = u
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("updates of job %s: %w", job, err)
	}
	updates = slices.DeleteFunc(updates, func(u *model.Update) bool { return u == nil })
	slices.SortFunc(updates, codec.CompareUpdates)
	return updates, nil
}

// removeUpdates deletes a job's updates, then its list of them.
func (s *Store) removeUpdates(ctx context.Context, job model.JobID) error {
	ids, err := s.jobUpdateIDs(ctx, job)
	if err != nil {
		return err
	}
	err = parallel(ctx, len(ids), deleteParallelism, func(ctx context.Context, i int) error {
		return s.query(ctx, s.q.deleteUpdate, string(ids[i])).Exec()
	})
	if err == nil {
		err = s.query(ctx, s.q.deleteJobUpdates, string(job)).Exec()
	}
	return s.classify(ctx, err)
}
