package jobmgr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// MigrationRequest selects what a migration moves and how.
type MigrationRequest struct {
	// Job or Pool (with its child pools): one of them.
	Job  model.JobID
	Pool string
	// To is the target cluster ("k8s-east" or "kubernetes:k8s-east").
	To string
	// BatchSize is how many instances of a job move at once (0: the SLA's
	// limit).
	BatchSize     uint32
	Surge         bool
	StartPaused   bool
	MoveRunning   bool
	AllowStateful bool
}

// invalidField is bad input naming the request field.
func invalidField(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), ErrInvalid)
}

// startMigration checks the request, stores the migration, sets the
// cluster policies of the selected jobs (or pool) to prefer the target and
// avoid the clusters they run on, and lets the loop move their instances.
// Nothing changes when the request is refused.
func (e *Engine) startMigration(ctx context.Context, req MigrationRequest) (*model.Migration, error) {
	e.updateMu.Lock()
	defer e.updateMu.Unlock()

	now := e.cfg.Clock.Now()
	m, err := e.planMigration(req, now)
	if err != nil {
		return nil, err
	}
	base := m.ID
	for i := 2; ; i++ {
		err = e.cfg.Store.CreateMigration(ctx, m)
		if !errors.Is(err, store.ErrExists) || i > 9 {
			break
		}
		m.ID = model.MigrationID(fmt.Sprintf("%s-%d", base, i))
	}
	if err != nil {
		return nil, fmt.Errorf("store migration: %w", err)
	}
	if err := e.applyMigrationPolicies(ctx, m, false); err != nil {
		m.State, m.Message, m.CompletionTime = model.MigrationAborted, "could not set cluster policies: "+err.Error(), now
		if werr := e.writeMigration(ctx, m); werr != nil {
			e.log.Warn("recording a migration that could not start failed", "migration", m.ID, "err", werr)
		}
		return nil, err
	}
	e.lock()
	defer e.mu.Unlock()
	e.installMigration(m)
	e.log.Info("migration started", "migration", m.ID, "to", m.To, "jobs", len(m.Jobs), "surge", m.Surge, "batch", m.BatchSize)
	e.wake()
	return m.Clone(), nil
}

// planMigration checks a request against the engine's state and returns
// the migration it asks for, not yet stored.
func (e *Engine) planMigration(req MigrationRequest, now time.Time) (*model.Migration, error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	e.lock()
	defer e.mu.Unlock()
	to, err := e.resolveCluster(req.To)
	if err != nil {
		return nil, invalidField("to_cluster", "%v", err)
	}
	if e.clusterDrained(to) {
		return nil, fmt.Errorf("to_cluster: cluster %s is drained (peloton cluster undrain %s): %w", to, to, ErrClusterDrained)
	}
	m := &model.Migration{
		ID: model.MigrationID("mig-" + strconv.FormatInt(now.UnixMilli(), 36)), Job: req.Job, Pool: req.Pool, To: to,
		BatchSize: req.BatchSize, Surge: req.Surge, MoveRunning: req.MoveRunning, AllowStateful: req.AllowStateful,
		Paused: req.StartPaused, State: model.MigrationMigrating, CreateTime: now,
	}
	var jobs []*jobEntry
	if req.Job != "" {
		je, err := e.migratableJob(req)
		if err != nil {
			return nil, err
		}
		jobs = []*jobEntry{je}
	} else {
		if jobs, err = e.poolJobs(req); err != nil {
			return nil, err
		}
		if pp := e.pools[req.Pool].Clusters; pp != nil {
			m.PoolClusters = pp.Clone()
		}
	}
	for _, je := range jobs {
		if err := e.checkMigratable(je, to, req); err != nil {
			return nil, err
		}
		rec := model.MigrationJob{Job: je.job.ID, Type: je.job.Spec.Type, From: e.sourceCluster(je, to),
			Clusters: je.job.Spec.Clusters.Clone()}
		if je.job.Spec.LongRunning() {
			rec.SLAMaxUnavailable = slaLimit(&je.job.Spec)
		}
		m.Jobs = append(m.Jobs, rec)
	}
	return m, nil
}

// check says what a request lacks, naming the field.
func (req MigrationRequest) check() error {
	switch {
	case req.Job == "" && req.Pool == "":
		return invalidField("job_id", "name a job or a pool to migrate")
	case req.Job != "" && req.Pool != "":
		return invalidField("pool", "name a job or a pool, not both")
	case req.To == "":
		return invalidField("to_cluster", "is required")
	}
	return nil
}

// migratableJob is the job a request names, when it may be migrated;
// callers hold e.mu.
func (e *Engine) migratableJob(req MigrationRequest) (*jobEntry, error) {
	je := e.jobs[req.Job]
	switch {
	case je == nil:
		return nil, fmt.Errorf("job %s: %w", req.Job, ErrNotFound)
	case je.job.Status.State.IsTerminal() || je.job.Status.Killed:
		return nil, fmt.Errorf("job %s is %s: only a job that runs can be migrated: %w", req.Job, je.job.Status.State, ErrJobFinished)
	case je.job.Spec.Type == model.JobDaemon:
		return nil, invalidField("job_id", "job %s is a daemon job: it runs on every host and moves as hosts are retired (drain them)", req.Job)
	case je.job.Spec.Type == model.JobStateful && !req.AllowStateful:
		return nil, invalidField("allow_stateful", "job %s is stateful and its volumes do not follow its instances: set allow_stateful (--allow-stateful) to move it anyway", req.Job)
	}
	return je, nil
}

// poolJobs are the running jobs of a request's pool subtree that a pool
// migration moves: daemon jobs move per host, stateful ones only when
// allowed. Callers hold e.mu.
func (e *Engine) poolJobs(req MigrationRequest) ([]*jobEntry, error) {
	path := req.Pool
	if e.pools[path] == nil {
		return nil, fmt.Errorf("pool %s: %w", path, ErrNotFound)
	}
	var jobs []*jobEntry
	for _, je := range e.sortedJobs() {
		p := cmp.Or(je.job.Spec.Pool, RootPool)
		inPool := p == path || path == RootPool || strings.HasPrefix(p, path+"/")
		spec := &je.job.Spec
		switch {
		case !inPool || je.evicted || je.job.Status.State.IsTerminal() || je.job.Status.Killed:
		case spec.Type == model.JobDaemon || (spec.Type == model.JobStateful && !req.AllowStateful):
		default:
			jobs = append(jobs, je)
		}
	}
	return jobs, nil
}

// checkMigratable says why a job cannot be migrated to cluster to now.
func (e *Engine) checkMigratable(je *jobEntry, to string, req MigrationRequest) error {
	j := je.job
	if u := e.runningUpdate(je); u != nil {
		return fmt.Errorf("job %s is being updated (update %s): let it finish or abort it first: %w", j.ID, u.ID, ErrMigrationConflict)
	}
	if jm := je.migration; jm != nil {
		return fmt.Errorf("job %s is being migrated already (migration %s): %w", j.ID, jm.M.ID, ErrMigrationConflict)
	}
	if req.Surge && gangSize(&j.Spec) > 1 {
		return invalidField("surge", "job %s runs in gangs of %d; surge moves single instances only", j.ID, gangSize(&j.Spec))
	}
	// The target must hold one task, and, for long-running jobs, every
	// instance still to move, in what it has free.
	need := je.current().spec.Task.Resources
	var largest, free model.Resources
	hosts, fits := 0, false
	for _, v := range e.cfg.Hosts.Snapshot() {
		if v.Cluster != to || v.Hostname == "" || v.State != model.HostUp {
			continue
		}
		hosts++
		if need.Fits(v.Capacity) {
			fits = true
		}
		if v.Capacity.MilliCPU > largest.MilliCPU {
			largest = v.Capacity
		}
		free = free.Add(v.Free().Max(model.Resources{}))
	}
	switch {
	case hosts == 0:
		return fmt.Errorf("to_cluster: cluster %s has no host up: %w", to, ErrNoCapacity)
	case !fits:
		return fmt.Errorf("to_cluster: no host of cluster %s can hold a task of job %s (it needs %s; the largest host has %s): %w",
			to, j.ID, need, largest, ErrNoCapacity)
	}
	if j.Spec.LongRunning() {
		var moving int64
		for _, t := range je.tasks {
			if t != nil && !isCold(t) && !t.State.IsTerminal() && t.Cluster != to {
				moving++
			}
		}
		if want := need.Scale(moving); !want.Fits(free) {
			return fmt.Errorf("to_cluster: cluster %s has %s free, job %s needs %s for its %d instances to move: %w",
				to, free, j.ID, want, moving, ErrNoCapacity)
		}
	}
	return nil
}

// sourceCluster is the cluster most of the job's runs hold a host on,
// other than to ("" when none does).
func (e *Engine) sourceCluster(je *jobEntry, to string) string {
	count := map[string]int{}
	for _, t := range je.tasks {
		if t != nil && !isCold(t) && t.State.HoldsResources() && t.Cluster != to {
			count[t.Cluster]++
		}
	}
	best := ""
	for c, n := range count {
		if n > count[best] || (n == count[best] && c < best) {
			best = c
		}
	}
	return best
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

// applyMigrationPolicies sets the cluster policies of a migration's jobs
// and pool: the migration's (restore false) or those they had before
// (restore true). A job migration sets the job's; a pool migration sets
// the pool's, and the job's for jobs that have their own. The caller
// holds updateMu.
func (e *Engine) applyMigrationPolicies(ctx context.Context, m *model.Migration, restore bool) error {
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
		if err := e.setJobClusters(ctx, rec.Job, p); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // deleted since
			}
			if !restore {
				e.undoJobClusters(ctx, m, done)
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
		if err := e.setPoolClusters(ctx, m.Pool, p); err != nil {
			if !restore {
				e.undoJobClusters(ctx, m, done)
			}
			return err
		}
	}
	return nil
}

// installMigration makes a stored migration one the loop runs; the caller
// holds the lock.
func (e *Engine) installMigration(m *model.Migration) {
	e.migrations.running[m.ID] = m
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		if je := e.jobs[rec.Job]; je != nil && !rec.Done {
			je.migration = migration.NewJob(m, rec)
			e.visit(je)
		}
	}
}

// recoverMigrations takes up the running migrations after a restart, and
// the drained clusters.
func (e *Engine) recoverMigrations(ctx context.Context) error {
	if err := e.loadClusters(ctx); err != nil {
		return err
	}
	ms, err := e.cfg.Store.ListMigrations(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range ms {
		if !m.State.IsTerminal() {
			e.installMigration(m)
			e.log.Info("migration recovered", "migration", m.ID, "state", m.State)
		}
	}
	return nil
}

// migration returns the migration id names: the running one, else the
// stored one; the caller holds the lock for the running one.
func (e *Engine) storedMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	m, err := e.cfg.Store.GetMigration(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("migration %s: %w", id, ErrNotFound)
	}
	return m, err
}

// GetMigration returns a migration.
func (r Reads) GetMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	e := r.e
	e.lock()
	if m := e.migrations.running[id]; m != nil {
		cp := m.Clone()
		e.mu.Unlock()
		return cp, nil
	}
	e.mu.Unlock()
	return e.storedMigration(ctx, id)
}

// ListMigrations returns the region's migrations, newest first.
func (r Reads) ListMigrations(ctx context.Context) ([]*model.Migration, error) {
	e := r.e
	ms, err := e.cfg.Store.ListMigrations(ctx)
	if err != nil {
		return nil, err
	}
	e.lock()
	for i, m := range ms {
		if live := e.migrations.running[m.ID]; live != nil {
			ms[i] = live.Clone()
		}
	}
	e.mu.Unlock()
	slices.Reverse(ms)
	return ms, nil
}

// changeMigration applies change to a running migration and stores it at
// once. change returns an error to refuse.
func (e *Engine) changeMigration(ctx context.Context, id model.MigrationID, change func(m *model.Migration) error) (*model.Migration, error) {
	e.lock()
	m := e.migrations.running[id]
	if m == nil {
		e.mu.Unlock()
		stored, err := e.storedMigration(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("migration %s is %s already: %w", id, stored.State, ErrMigrationEnded)
	}
	if err := change(m); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	cp := m.Clone()
	if err := e.storeMigrationLocked(ctx, m); err != nil {
		return nil, fmt.Errorf("store migration %s: %w", id, err)
	}
	return cp, nil
}

// storeMigrationLocked marks a running migration's record for the next
// pass's write, releases e.mu (which the caller holds) and waits for that
// write.
func (e *Engine) storeMigrationLocked(ctx context.Context, m *model.Migration) error {
	e.migrations.dirty[m.ID] = true
	wait := e.awaitWrite()
	e.mu.Unlock()
	return wait(ctx)
}

// pauseMigration stops a migration from moving more instances; those in
// flight finish. ResumeMigration lets it go on (also one that stopped
// because it could not progress).
func (e *Engine) pauseMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	return e.changeMigration(ctx, id, func(m *model.Migration) error {
		m.Paused = true
		return nil
	})
}

func (e *Engine) resumeMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	return e.changeMigration(ctx, id, func(m *model.Migration) error {
		m.Paused = false
		for i := range m.Jobs {
			if strings.HasPrefix(m.Jobs[i].Message, "stopped: ") {
				m.Jobs[i].Message = ""
			}
			if je := e.jobs[m.Jobs[i].Job]; je != nil && je.migration != nil {
				je.migration.Resumed()
			}
		}
		return nil
	})
}

// abortMigration stops a migration where it is: moved instances stay on
// the target, the others where they run, surge instances go, and the
// cluster policies become what they were.
func (e *Engine) abortMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	e.updateMu.Lock()
	defer e.updateMu.Unlock()
	now := e.cfg.Clock.Now()
	m, err := e.changeMigration(ctx, id, func(m *model.Migration) error {
		m.State, m.Message, m.CompletionTime = model.MigrationAborted, "aborted by an operator", now
		for i := range m.Jobs {
			m.Jobs[i].InFlight = 0
			if je := e.jobs[m.Jobs[i].Job]; je != nil && je.migration != nil && je.migration.M == m {
				e.endJobMigration(je, now)
			}
		}
		delete(e.migrations.running, m.ID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.State == model.MigrationAborted {
		if err := e.applyMigrationPolicies(ctx, m, true); err != nil {
			e.log.Warn("restoring cluster policies after an abort failed", "migration", id, "err", err)
		}
	}
	e.log.Info("migration aborted", "migration", id)
	return m, nil
}

// rollbackMigration moves the instances a migration moved back to the
// clusters they came from, the same way (batch, surge, SLA); a running
// migration stops moving forward first. The cluster policies become what
// they were.
func (e *Engine) rollbackMigration(ctx context.Context, id model.MigrationID) (*model.Migration, error) {
	e.updateMu.Lock()
	defer e.updateMu.Unlock()
	e.lock()
	m := e.migrations.running[id]
	var stored *model.Migration
	if m == nil {
		e.mu.Unlock()
		var err error
		if stored, err = e.storedMigration(ctx, id); err != nil {
			return nil, err
		}
		e.lock()
		m = stored
	}
	if err := e.checkRollback(m); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	now := e.cfg.Clock.Now()
	m.State, m.Paused, m.CompletionTime = model.MigrationRollingBack, false, time.Time{}
	m.Message = "rolling back"
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		rec.Done = rec.From == "" || (len(rec.Moved) == 0 && len(rec.Moving) == 0)
		if je := e.jobs[rec.Job]; je != nil && je.migration != nil {
			e.endJobMigration(je, now) // forward surge instances go
		}
		rec.Moving = nil
	}
	e.installMigration(m)
	if err := e.storeMigrationLocked(ctx, m); err != nil {
		return nil, fmt.Errorf("store migration %s: %w", id, err)
	}
	if err := e.applyMigrationPolicies(ctx, m, true); err != nil {
		e.log.Warn("restoring cluster policies for a rollback failed", "migration", id, "err", err)
	}
	e.lock()
	cp := m.Clone()
	e.mu.Unlock()
	e.wake()
	e.log.Info("migration rolling back", "migration", id)
	return cp, nil
}

// checkRollback says why a migration cannot be rolled back now.
func (e *Engine) checkRollback(m *model.Migration) error {
	switch m.State {
	case model.MigrationRollingBack, model.MigrationRolledBack:
		return fmt.Errorf("migration %s is %s already: %w", m.ID, m.State, ErrMigrationEnded)
	case model.MigrationFailed:
		return fmt.Errorf("migration %s is %s: %w", m.ID, m.State, ErrMigrationEnded)
	}
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		if len(rec.Moved) == 0 && len(rec.Moving) == 0 {
			continue
		}
		if rec.From == "" {
			continue
		}
		if _, err := e.resolveCluster(rec.From); err != nil {
			return fmt.Errorf("job %s came from cluster %s, which the region no longer has: %w", rec.Job, rec.From, ErrClusterDrained)
		}
		if e.clusterDrained(rec.From) {
			return fmt.Errorf("job %s came from cluster %s, which is drained (peloton cluster undrain %s to roll back): %w",
				rec.Job, rec.From, rec.From, ErrClusterDrained)
		}
		je := e.jobs[rec.Job]
		if je == nil {
			continue
		}
		if u := e.runningUpdate(je); u != nil {
			return fmt.Errorf("job %s is being updated (update %s): %w", rec.Job, u.ID, ErrMigrationConflict)
		}
		if jm := je.migration; jm != nil && jm.M.ID != m.ID {
			return fmt.Errorf("job %s is being migrated by migration %s: %w", rec.Job, jm.M.ID, ErrMigrationConflict)
		}
	}
	return nil
}

// Now is the engine's clock reading (for durations the API reports).
func (e *Engine) Now() time.Time { return e.cfg.Clock.Now() }

// undoJobClusters puts back the clusters of the jobs a failed migration
// step already changed; a job it cannot put back is logged, not dropped.
func (e *Engine) undoJobClusters(ctx context.Context, m *model.Migration, done []int) {
	for _, k := range done {
		if err := e.setJobClusters(ctx, m.Jobs[k].Job, m.Jobs[k].Clusters); err != nil {
			e.log.Error("migration: cannot put a job's clusters back", "job", m.Jobs[k].Job, "err", err)
		}
	}
}
