package memstore

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var _ store.PassWriter = (*Store)(nil)

// WritePass writes a pass's tasks, job records, updates and migrations
// atomically: every record is checked before any is written.
func (s *Store) WritePass(ctx context.Context, p store.Pass) (err error) {
	if err := p.Check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil || p.Empty() {
		p.Failed(err)
		return err
	}
	defer func() {
		if err != nil {
			p.Failed(err)
		}
	}()
	rec, err := preparePass(&p)
	if err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkPass(&p, rec); err != nil {
		return fmt.Errorf("write pass: %w", err)
	}
	s.putPassLocked(&p, rec)
	p.Stored()
	return nil
}

// passRecords are a pass's records as the store keeps them, at their next
// revision.
type passRecords struct {
	newJobs []*model.Job // nil for a new job refused
	specs   []*model.JobSpec
	tasks   []*model.TaskRuntime
	jobs    []*model.Job
	updates []*model.Update
	records []store.Prepared
}

// preparePass checks a pass's records and copies them, before taking the
// lock; a new job that cannot be stored is left out with its error.
func preparePass(p *store.Pass) (*passRecords, error) {
	rec := &passRecords{newJobs: make([]*model.Job, len(p.NewJobs)), specs: make([]*model.JobSpec, len(p.NewJobs))}
	for i, j := range p.NewJobs {
		if err := codec.CheckJob(j); err != nil {
			p.NewJobErrs[i] = fmt.Errorf("create job: %w", err)
			continue
		}
		spec, err := codec.CloneSpec(&j.Spec)
		if err != nil {
			p.NewJobErrs[i] = fmt.Errorf("create job %s: %w", j.ID, err)
			continue
		}
		rec.specs[i] = spec
		rec.newJobs[i] = cloneJob(j)
		rec.newJobs[i].Revision, rec.newJobs[i].ConfigVersion = 1, max(j.ConfigVersion, 1)
	}
	rec.tasks = make([]*model.TaskRuntime, len(p.Tasks))
	for i, t := range p.Tasks {
		if t == nil {
			return nil, fmt.Errorf("write pass: %w: task %d is nil", store.ErrInvalid, i)
		}
		rec.tasks[i] = cloneTask(t)
		rec.tasks[i].Revision = t.Revision + 1
	}
	var err error
	if rec.jobs, err = store.Prepare(p.Jobs, codec.CheckJobRecord, nextJob); err != nil {
		return nil, err
	}
	if rec.updates, err = store.Prepare(p.Updates, codec.CheckUpdate, nextUpdate); err != nil {
		return nil, err
	}
	rec.records, err = store.PrepareRecords(p.Records)
	return rec, err
}

// nextJob is a copy of a job record at its next revision.
func nextJob(j *model.Job) *model.Job {
	c := cloneJob(j)
	c.Revision++
	return c
}

// nextUpdate is a copy of an update at its next revision.
func nextUpdate(u *model.Update) *model.Update {
	c := cloneUpdate(u)
	c.Revision++
	return c
}

// putPassLocked stores a checked pass's records; a new job whose id is
// taken gets ErrExists. The caller holds the lock.
func (s *Store) putPassLocked(p *store.Pass, rec *passRecords) {
	for i, j := range rec.newJobs {
		if j == nil {
			continue
		}
		if _, taken := s.jobs[j.ID]; taken {
			p.NewJobErrs[i] = fmt.Errorf("create job %s: %w", j.ID, store.ErrExists)
			continue
		}
		s.jobs[j.ID] = j
		s.configs[j.ID] = map[uint64]*model.JobSpec{j.ConfigVersion: rec.specs[i]}
		s.tasks[j.ID] = make(map[uint32]*model.TaskRuntime)
		p.NewJobs[i].Revision, p.NewJobs[i].ConfigVersion = 1, j.ConfigVersion
	}
	for _, t := range rec.tasks {
		s.tasks[t.ID.Job][t.ID.Instance] = t
	}
	for _, j := range rec.jobs {
		s.jobs[j.ID] = j
	}
	for _, u := range rec.updates {
		s.updates[u.ID] = u
	}
	for _, r := range rec.records {
		s.putRecordLocked(r.Table, r.Key, r.Data)
	}
}

// checkPass checks every record of p; the caller holds the lock.
func (s *Store) checkPass(p *store.Pass, rec *passRecords) error {
	if err := s.checkTasks(p.Tasks); err != nil {
		return err
	}
	for _, j := range p.Jobs {
		if err := s.checkJob(j); err != nil {
			return err
		}
	}
	for _, u := range p.Updates {
		if err := updateKind.checkWrite(s.updates, u); err != nil {
			return err
		}
	}
	for _, r := range rec.records {
		if err := store.CheckSwap(r.Table, s.records[r.Table.Name][r.Key], r.Rev); err != nil {
			return fmt.Errorf("%s %s: %w", r.Table.Name, r.Key, err)
		}
	}
	return nil
}
