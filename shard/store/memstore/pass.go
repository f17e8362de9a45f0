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
	created := make([]*model.Job, len(p.NewJobs))
	specs := make([]*model.JobSpec, len(p.NewJobs))
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
		specs[i] = spec
		created[i] = cloneJob(j)
		created[i].Revision, created[i].ConfigVersion = 1, max(j.ConfigVersion, 1)
	}
	tasks := make([]*model.TaskRuntime, len(p.Tasks))
	for i, t := range p.Tasks {
		if t == nil {
			return fmt.Errorf("write pass: %w: task %d is nil", store.ErrInvalid, i)
		}
		tasks[i] = cloneTask(t)
		tasks[i].Revision = t.Revision + 1
	}
	jobs := make([]*model.Job, len(p.Jobs))
	for i, j := range p.Jobs {
		if err := codec.CheckJobRecord(j); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
		jobs[i] = cloneJob(j)
		jobs[i].Revision = j.Revision + 1
	}
	updates := make([]*model.Update, len(p.Updates))
	for i, u := range p.Updates {
		if err := codec.CheckUpdate(u); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
		updates[i] = cloneUpdate(u)
		updates[i].Revision = u.Revision + 1
	}
	for _, m := range p.Migrations {
		if err := codec.CheckMigration(m); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkPass(&p); err != nil {
		return fmt.Errorf("write pass: %w", err)
	}
	for i, j := range created {
		if j == nil {
			continue
		}
		if _, taken := s.jobs[j.ID]; taken {
			p.NewJobErrs[i] = fmt.Errorf("create job %s: %w", j.ID, store.ErrExists)
			continue
		}
		s.jobs[j.ID] = j
		s.configs[j.ID] = map[uint64]*model.JobSpec{j.ConfigVersion: specs[i]}
		s.tasks[j.ID] = make(map[uint32]*model.TaskRuntime)
		p.NewJobs[i].Revision, p.NewJobs[i].ConfigVersion = 1, j.ConfigVersion
	}
	for _, t := range tasks {
		s.tasks[t.ID.Job][t.ID.Instance] = t
	}
	for _, j := range jobs {
		s.jobs[j.ID] = j
	}
	for _, u := range updates {
		s.updates[u.ID] = u
	}
	for _, m := range p.Migrations {
		s.migrations[m.ID] = codec.EncodeMigration(m, m.Revision+1)
	}
	p.Stored()
	return nil
}

// checkPass checks every record of p; the caller holds the lock.
func (s *Store) checkPass(p *store.Pass) error {
	if err := s.checkTasks(p.Tasks); err != nil {
		return err
	}
	for _, j := range p.Jobs {
		if err := s.checkJob(j); err != nil {
			return err
		}
	}
	for _, u := range p.Updates {
		if err := s.checkUpdate(u); err != nil {
			return err
		}
	}
	for _, m := range p.Migrations {
		if err := s.checkMigration(m); err != nil {
			return err
		}
	}
	return nil
}
