package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/store/kinds"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// migrationShell is migrations' shell (shard/migration decides, the
// core's migrationBook steps them): the commands that start, pause,
// resume, abort and roll back a migration, each stored before it is
// answered, the cluster policies they change, and their recovery.
type migrationShell struct{ e *Engine }

// start checks the request, stores the migration, sets the
// cluster policies of the selected jobs (or pool) to prefer the target and
// avoid the clusters they run on, and lets the loop move their instances.
// Nothing changes when the request is refused.
func (s *migrationShell) start(ctx context.Context, req core.MigrationRequest) (*model.Migration, error) {
	s.e.updateMu.Lock()
	defer s.e.updateMu.Unlock()

	now := s.e.cfg.Clock.Now()
	m, err := s.plan(req, now)
	if err != nil {
		return nil, err
	}
	base := m.ID
	for i := 2; ; i++ {
		err = kinds.Migrations.Create(ctx, s.e.cfg.Store, m)
		if !errors.Is(err, store.ErrExists) || i > 9 {
			break
		}
		m.ID = model.MigrationID(fmt.Sprintf("%s-%d", base, i))
	}
	if err != nil {
		return nil, fmt.Errorf("store migration: %w", err)
	}
	if err := s.applyPolicies(ctx, m, false); err != nil {
		m.State, m.Message, m.CompletionTime = model.MigrationAborted, "could not set cluster policies: "+err.Error(), now
		if werr := s.write(ctx, m); werr != nil {
			s.e.c.Log.Warn("recording a migration that could not start failed", "migration", m.ID, "err", werr)
		}
		return nil, err
	}
	s.e.lock()
	defer s.e.mu.Unlock()
	s.e.c.Migrations.InstallMigration(&s.e.c, m)
	s.e.c.Log.Info("migration started", "migration", m.ID, "to", m.To, "jobs", len(m.Jobs), "surge", m.Surge, "batch", m.BatchSize)
	s.e.wake()
	return m.Clone(), nil
}

// plan checks a request against the engine's state and returns
// the migration it asks for, not yet stored.
func (s *migrationShell) plan(req core.MigrationRequest, now time.Time) (*model.Migration, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	s.e.lock()
	defer s.e.mu.Unlock()
	to, err := s.e.c.Clusters.Resolve(&s.e.c, req.To)
	if err != nil {
		return nil, core.InvalidField("to_cluster", "%v", err)
	}
	if s.e.c.Clusters.IsDrained(to) {
		return nil, fmt.Errorf("to_cluster: cluster %s is drained (peloton cluster undrain %s): %w", to, to, core.ErrClusterDrained)
	}
	m := &model.Migration{
		ID: model.MigrationID("mig-" + strconv.FormatInt(now.UnixMilli(), 36)), Job: req.Job, Pool: req.Pool, To: to,
		BatchSize: req.BatchSize, Surge: req.Surge, MoveRunning: req.MoveRunning, AllowStateful: req.AllowStateful,
		Paused: req.StartPaused, State: model.MigrationMigrating, CreateTime: now,
	}
	var jobs []*core.Job
	if req.Job != "" {
		je, err := s.e.c.Migrations.MigratableJob(&s.e.c, req)
		if err != nil {
			return nil, err
		}
		jobs = []*core.Job{je}
	} else {
		if jobs, err = s.e.c.Migrations.PoolJobs(&s.e.c, req); err != nil {
			return nil, err
		}
		if pp := s.e.c.Pools.ByPath[req.Pool].Clusters; pp != nil {
			m.PoolClusters = pp.Clone()
		}
	}
	for _, je := range jobs {
		if err := s.e.c.Migrations.CheckMigratable(&s.e.c, je, to, req); err != nil {
			return nil, err
		}
		rec := model.MigrationJob{Job: je.Job.ID, Type: je.Job.Spec.Type, From: s.e.c.Migrations.SourceCluster(je, to),
			Clusters: je.Job.Spec.Clusters.Clone()}
		if je.Job.Spec.LongRunning() {
			rec.SLAMaxUnavailable = core.SLALimit(&je.Job.Spec)
		}
		m.Jobs = append(m.Jobs, rec)
	}
	return m, nil
}

// migrationPolicy is the cluster policy a migration gives: prefer the
// target, avoid what old avoided and the clusters runs are on.
func migrationPolicy(old *model.ClusterPolicy, to string, sources []string) *model.ClusterPolicy {
	p := &model.ClusterPolicy{Prefer: []string{to}}
	add := func(c string) {
		if n := model.ClusterName(c); n != to && n != "" && !slices.Contains(model.ClusterNames(p.Avoid), n) {
			p.Avoid = append(p.Avoid, c)
		}
	}
	if old != nil {
		for _, a := range old.Avoid {
			add(a)
		}
	}
	for _, s := range sources {
		add(s)
	}
	return p
}

// applyPolicies sets the cluster policies of a migration's jobs
// and pool: the migration's (restore false) or those they had before
// (restore true). A job migration sets the job's; a pool migration sets
// the pool's, and the job's for jobs that have their own. The caller
// holds updateMu.
func (s *migrationShell) applyPolicies(ctx context.Context, m *model.Migration, restore bool) error {
	var sources []string
	for i := range m.Jobs {
		if f := m.Jobs[i].From; f != "" && !slices.Contains(sources, f) {
			sources = append(sources, f)
		}
	}
	var done []int
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		if m.Job == "" && rec.Clusters.IsZero() {
			continue // the pool's policy steers it
		}
		p := rec.Clusters
		if !restore {
			p = migrationPolicy(rec.Clusters, m.To, sources)
		}
		if err := s.e.clusters.setJobPolicy(ctx, rec.Job, p); err != nil {
			if errors.Is(err, core.ErrNotFound) {
				continue // deleted since
			}
			if !restore {
				s.undoJobClusters(ctx, m, done)
			}
			return err
		}
		done = append(done, i)
	}
	if m.Pool != "" {
		p := m.PoolClusters
		if !restore {
			p = migrationPolicy(m.PoolClusters, m.To, sources)
		}
		if err := s.e.clusters.setPoolPolicy(ctx, m.Pool, p); err != nil {
			if !restore {
				s.undoJobClusters(ctx, m, done)
			}
			return err
		}
	}
	return nil
}

// recover takes up the running migrations after a restart, and
// the drained clusters.
func (s *migrationShell) recover(ctx context.Context) error {
	if err := s.e.clusters.load(ctx); err != nil {
		return err
	}
	ms, err := kinds.Migrations.List(ctx, s.e.cfg.Store)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	s.e.hold()
	defer s.e.mu.Unlock()
	for _, m := range ms {
		if !m.State.IsTerminal() {
			s.e.c.Migrations.InstallMigration(&s.e.c, m)
			s.e.c.Log.Info("migration recovered", "migration", m.ID, "state", m.State)
		}
	}
	return nil
}

// migration returns the migration id names: the running one, else the
// stored one; the caller holds the lock for the running one.
func (s *migrationShell) stored(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	m, err := kinds.Migrations.Get(ctx, s.e.cfg.Store, string(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("migration %s: %w", id, core.ErrNotFound)
	}
	return m, err
}

// GetMigration returns a migration.
func (r Reads) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	e := r.e
	e.lock()
	if m := e.c.Migrations.Running[id]; m != nil {
		cp := m.Clone()
		e.mu.Unlock()
		return cp, nil
	}
	e.mu.Unlock()
	return e.migrations.stored(ctx, id)
}

// ListMigrations returns the region's migrations, newest first.
func (r Reads) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	e := r.e
	ms, err := kinds.Migrations.List(ctx, e.cfg.Store)
	if err != nil {
		return nil, err
	}
	e.lock()
	for i, m := range ms {
		if live := e.c.Migrations.Running[m.ID]; live != nil {
			ms[i] = live.Clone()
		}
	}
	e.mu.Unlock()
	slices.Reverse(ms)
	return ms, nil
}

// change applies change to a running migration and stores it at
// once. change returns an error to refuse.
func (s *migrationShell) change(ctx context.Context, id model.MigrationID, change func(m *model.Migration) error) (*model.Migration, error) {
	s.e.lock()
	m := s.e.c.Migrations.Running[id]
	if m == nil {
		s.e.mu.Unlock()
		stored, err := s.stored(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("migration %s is %s already: %w", id, stored.State, core.ErrMigrationEnded)
	}
	if err := change(m); err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	cp := m.Clone()
	if err := s.storeLocked(ctx, m); err != nil {
		return nil, fmt.Errorf("store migration %s: %w", id, err)
	}
	return cp, nil
}

// storeLocked marks a running migration's record for the next
// pass's write, releases the engine's lock (which the caller holds) and waits for that
// write.
func (s *migrationShell) storeLocked(ctx context.Context, m *model.Migration) error {
	s.e.c.Migrations.Dirty[m.ID] = true
	wait := s.e.awaitWrite()
	s.e.mu.Unlock()
	return wait(ctx)
}

// pause stops a migration from moving more instances; those in
// flight finish. ResumeMigration lets it go on (also one that stopped
// because it could not progress).
func (s *migrationShell) pause(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	return s.change(ctx, id, func(m *model.Migration) error {
		m.Paused = true
		return nil
	})
}

func (s *migrationShell) resume(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	return s.change(ctx, id, func(m *model.Migration) error {
		m.Paused = false
		for i := range m.Jobs {
			if strings.HasPrefix(m.Jobs[i].Message, "stopped: ") {
				m.Jobs[i].Message = ""
			}
			if jm := s.e.c.Migrations.Jobs[m.Jobs[i].Job]; jm != nil {
				jm.Resumed()
			}
		}
		return nil
	})
}

// abort stops a migration where it is: moved instances stay on
// the target, the others where they run, surge instances go, and the
// cluster policies become what they were.
func (s *migrationShell) abort(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	s.e.updateMu.Lock()
	defer s.e.updateMu.Unlock()
	now := s.e.cfg.Clock.Now()
	m, err := s.change(ctx, id, func(m *model.Migration) error {
		m.State, m.Message, m.CompletionTime = model.MigrationAborted, "aborted by an operator", now
		for i := range m.Jobs {
			m.Jobs[i].InFlight = 0
			if jm, je := s.e.c.Migrations.Jobs[m.Jobs[i].Job], s.e.c.Jobs[m.Jobs[i].Job]; je != nil && jm != nil && jm.M == m {
				s.e.c.Migrations.EndJobMigration(&s.e.c, je, now)
			}
		}
		delete(s.e.c.Migrations.Running, m.ID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.State == model.MigrationAborted {
		if err := s.applyPolicies(ctx, m, true); err != nil {
			s.e.c.Log.Warn("restoring cluster policies after an abort failed", "migration", id, "err", err)
		}
	}
	s.e.c.Log.Info("migration aborted", "migration", id)
	return m, nil
}

// rollback moves the instances a migration moved back to the
// clusters they came from, the same way (batch, surge, SLA); a running
// migration stops moving forward first. The cluster policies become what
// they were.
func (s *migrationShell) rollback(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	s.e.updateMu.Lock()
	defer s.e.updateMu.Unlock()
	s.e.lock()
	m := s.e.c.Migrations.Running[id]
	var stored *model.Migration
	if m == nil {
		s.e.mu.Unlock()
		var err error
		if stored, err = s.stored(ctx, id); err != nil {
			return nil, err
		}
		s.e.lock()
		m = stored
	}
	if err := s.e.c.Migrations.CheckRollback(&s.e.c, m); err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	now := s.e.cfg.Clock.Now()
	m.State, m.Paused, m.CompletionTime = model.MigrationRollingBack, false, time.Time{}
	m.Message = "rolling back"
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		rec.Done = rec.From == "" || (len(rec.Moved) == 0 && len(rec.Moving) == 0)
		if je := s.e.c.Jobs[rec.Job]; je != nil && s.e.c.Migrations.Jobs[rec.Job] != nil {
			s.e.c.Migrations.EndJobMigration(&s.e.c, je, now) // forward surge instances go
		}
		rec.Moving = nil
	}
	s.e.c.Migrations.InstallMigration(&s.e.c, m)
	if err := s.storeLocked(ctx, m); err != nil {
		return nil, fmt.Errorf("store migration %s: %w", id, err)
	}
	if err := s.applyPolicies(ctx, m, true); err != nil {
		s.e.c.Log.Warn("restoring cluster policies for a rollback failed", "migration", id, "err", err)
	}
	s.e.lock()
	cp := m.Clone()
	s.e.mu.Unlock()
	s.e.wake()
	s.e.c.Log.Info("migration rolling back", "migration", id)
	return cp, nil
}

// Now is the engine's clock reading (for durations the API reports).
func (e *Engine) Now() time.Time { return e.cfg.Clock.Now() }

// undoJobClusters puts back the clusters of the jobs a failed migration
// step already changed; a job it cannot put back is logged, not dropped.
func (s *migrationShell) undoJobClusters(ctx context.Context, m *model.Migration, done []int) {
	for _, k := range done {
		if err := s.e.clusters.setJobPolicy(ctx, m.Jobs[k].Job, m.Jobs[k].Clusters); err != nil {
			s.e.c.Log.Error("migration: cannot put a job's clusters back", "job", m.Jobs[k].Job, "err", err)
		}
	}
}
