package boltstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Updates live in bucket "updates" (update id → update record), listed per
// job by bucket "job_updates" (a nested bucket per job holding its update
// ids). Hosts live in bucket "hosts" (host id → host record), so a cursor
// lists them in id order.

// CreateUpdate stores a new update of an existing job with Revision 1 and
// sets u.Revision to 1.
func (s *Store) CreateUpdate(ctx context.Context, u *model.Update) error {
	if err := codec.CheckUpdate(u); err != nil {
		return fmt.Errorf("create update: %w", err)
	}
	value := codec.EncodeUpdate(u, 1)
	err := s.update(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(jobsBucket).Get([]byte(u.Job)) == nil {
			return fmt.Errorf("job %s: %w", u.Job, store.ErrNotFound)
		}
		updates := tx.Bucket(updatesBucket)
		if updates.Get([]byte(u.ID)) != nil {
			return store.ErrExists
		}
		if err := updates.Put([]byte(u.ID), value); err != nil {
			return err
		}
		byJob, err := tx.Bucket(jobUpdatesBucket).CreateBucketIfNotExists([]byte(u.Job))
		if err != nil {
			return err
		}
		return byJob.Put([]byte(u.ID), nil)
	})
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
	value := codec.EncodeUpdate(u, u.Revision+1)
	err := s.update(ctx, func(tx *bolt.Tx) error { return putUpdate(tx, u, value) })
	if err != nil {
		return fmt.Errorf("write update %s: %w", u.ID, err)
	}
	u.Revision++
	return nil
}

// putUpdate replaces u's record with value in tx, compared and set on u's
// revision as WriteUpdate says.
func putUpdate(tx *bolt.Tx, u *model.Update, value []byte) error {
	updates := tx.Bucket(updatesBucket)
	old := updates.Get([]byte(u.ID))
	if old == nil {
		return store.ErrNotFound
	}
	stored, err := codec.DecodeUpdate(u.ID, old)
	switch {
	case err != nil:
		return err
	case stored.Revision != u.Revision:
		return fmt.Errorf("stored revision %d, given %d: %w", stored.Revision, u.Revision, store.ErrConflict)
	case stored.Job != u.Job:
		return fmt.Errorf("%w: it is of job %s, not %s", store.ErrInvalid, stored.Job, u.Job)
	}
	return updates.Put([]byte(u.ID), value)
}

// GetUpdate returns a stored update.
func (s *Store) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	var u *model.Update
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(updatesBucket).Get([]byte(id))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		u, err = codec.DecodeUpdate(id, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	return u, nil
}

// ListUpdates returns a job's updates, oldest first; ErrNotFound if the
// job does not exist.
func (s *Store) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	var out []*model.Update
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(jobsBucket).Get([]byte(job)) == nil {
			return store.ErrNotFound
		}
		byJob := tx.Bucket(jobUpdatesBucket).Bucket([]byte(job))
		if byJob == nil {
			return nil
		}
		updates := tx.Bucket(updatesBucket)
		return byJob.ForEach(func(k, _ []byte) error {
			v := updates.Get(k)
			if v == nil {
				return fmt.Errorf("%w: update %s is listed, not stored", ErrCorrupt, k)
			}
			u, err := codec.DecodeUpdate(model.UpdateID(k), v)
			if err != nil {
				return err
			}
			out = append(out, u)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("updates of job %s: %w", job, err)
	}
	slices.SortFunc(out, codec.CompareUpdates)
	return out, nil
}

// deleteJobUpdates removes the updates of a job.
func deleteJobUpdates(tx *bolt.Tx, job []byte) error {
	byJob := tx.Bucket(jobUpdatesBucket).Bucket(job)
	if byJob == nil {
		return nil
	}
	updates := tx.Bucket(updatesBucket)
	err := byJob.ForEach(func(k, _ []byte) error { return updates.Delete(k) })
	if err != nil {
		return err
	}
	err = tx.Bucket(jobUpdatesBucket).DeleteBucket(job)
	if errors.Is(err, berrors.ErrBucketNotFound) {
		return nil
	}
	return err
}
