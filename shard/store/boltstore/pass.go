package boltstore

import (
	"cmp"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
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
	rec, err := encodePass(&p)
	if err != nil {
		return err
	}
	err = s.batch(ctx, func(tx *bolt.Tx) error { return rec.put(ctx, tx, &p) })
	if err != nil {
		err = fmt.Errorf("write pass: %w", err)
		for i, ok := range rec.encoded {
			if ok {
				p.NewJobErrs[i] = err
			}
		}
		return err
	}
	for i, j := range p.NewJobs {
		if p.NewJobErrs[i] == nil {
			j.Revision, j.ConfigVersion = 1, rec.newJobs[i].version
		}
	}
	p.Stored()
	return nil
}

// passRecords are a pass's records encoded for its transaction.
type passRecords struct {
	newJobs []newJob
	// encoded: the new job was encoded, and is written unless its id is
	// taken.
	encoded       []bool
	jobs, updates [][]byte
	records       []store.Prepared
}

// encodePass checks and encodes a pass's records before the transaction,
// as the single-kind writes do; a new job that cannot be encoded is left
// out with its error.
func encodePass(p *store.Pass) (*passRecords, error) {
	for i, t := range p.Tasks {
		if t == nil {
			return nil, fmt.Errorf("write pass: %w: task %d is nil", store.ErrInvalid, i)
		}
	}
	rec := &passRecords{newJobs: make([]newJob, len(p.NewJobs)), encoded: make([]bool, len(p.NewJobs))}
	for i, j := range p.NewJobs {
		var err error
		if rec.newJobs[i], err = encodeNewJob(j); err != nil {
			p.NewJobErrs[i] = fmt.Errorf("create job: %w", err)
		}
	}
	for i := range rec.encoded {
		rec.encoded[i] = p.NewJobErrs[i] == nil
	}
	var err error
	if rec.jobs, err = store.Prepare(p.Jobs, codec.CheckJobRecord, func(j *model.Job) []byte {
		return codec.EncodeJobRecord(j, j.Revision+1)
	}); err != nil {
		return nil, err
	}
	if rec.updates, err = store.Prepare(p.Updates, codec.CheckUpdate, func(u *model.Update) []byte {
		return codec.EncodeUpdate(u, u.Revision+1)
	}); err != nil {
		return nil, err
	}
	rec.records, err = store.PrepareRecords(p.Records)
	return rec, err
}

// put writes the pass's records in tx. The group commit may run it again
// alone: the new jobs' outcomes start afresh.
func (rec *passRecords) put(ctx context.Context, tx *bolt.Tx, p *store.Pass) error {
	if err := rec.putNewJobs(tx, p); err != nil {
		return err
	}
	if err := putTasks(ctx, tx, p.Tasks); err != nil {
		return err
	}
	for i, j := range p.Jobs {
		if err := replaceJobRecord(tx, j, rec.jobs[i]); err != nil {
			return err
		}
	}
	for i, u := range p.Updates {
		if err := putUpdate(tx, u, rec.updates[i]); err != nil {
			return fmt.Errorf("update %s: %w", u.ID, err)
		}
	}
	for _, r := range rec.records {
		if err := swapRecord(tx, r); err != nil {
			return fmt.Errorf("%s %s: %w", r.Table.Name, r.Key, err)
		}
	}
	return nil
}

// putNewJobs writes the new jobs that were encoded, each but those whose
// id is taken, which get ErrExists.
func (rec *passRecords) putNewJobs(tx *bolt.Tx, p *store.Pass) error {
	for i := range rec.newJobs {
		if !rec.encoded[i] {
			continue
		}
		p.NewJobErrs[i] = nil
		stored, err := putNewJob(tx, &rec.newJobs[i])
		if err != nil {
			return err
		}
		if !stored {
			p.NewJobErrs[i] = fmt.Errorf("create job %s: %w", p.NewJobs[i].ID, store.ErrExists)
		}
	}
	return nil
}
