package core

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
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

// InvalidField is bad input naming the request field.
func InvalidField(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), ErrInvalid)
}

// Check says what a request lacks, naming the field.
func (req MigrationRequest) Check() error {
	switch {
	case req.Job == "" && req.Pool == "":
		return InvalidField("job_id", "name a job or a pool to migrate")
	case req.Job != "" && req.Pool != "":
		return InvalidField("pool", "name a job or a pool, not both")
	case req.To == "":
		return InvalidField("to_cluster", "is required")
	}
	return nil
}

// MigratableJob is the job a request names, when it may be migrated;
// callers hold e.mu.
func (b *migrationBook) MigratableJob(e *State, req MigrationRequest) (*Job, error) {
	je := e.Jobs[req.Job]
	switch {
	case je == nil:
		return nil, fmt.Errorf("job %s: %w", req.Job, ErrNotFound)
	case je.Job.Status.State.IsTerminal() || je.Job.Status.Killed:
		return nil, fmt.Errorf("job %s is %s: only a job that runs can be migrated: %w", req.Job, je.Job.Status.State, ErrJobFinished)
	case je.Job.Spec.Type == model.JobDaemon:
		return nil, InvalidField("job_id", "job %s is a daemon job: it runs on every host and moves as hosts are retired (drain them)", req.Job)
	case je.Job.Spec.Type == model.JobStateful && !req.AllowStateful:
		return nil, InvalidField("allow_stateful", "job %s is stateful and its volumes do not follow its instances: set allow_stateful (--allow-stateful) to move it anyway", req.Job)
	}
	return je, nil
}

// PoolJobs are the running jobs of a request's pool subtree that a pool
// migration moves: daemon jobs move per host, stateful ones only when
// allowed. Callers hold e.mu.
func (b *migrationBook) PoolJobs(e *State, req MigrationRequest) ([]*Job, error) {
	path := req.Pool
	if e.Pools.ByPath[path] == nil {
		return nil, fmt.Errorf("pool %s: %w", path, ErrNotFound)
	}
	var jobs []*Job
	for _, je := range e.sortedJobs() {
		p := cmp.Or(je.Job.Spec.Pool, RootPool)
		inPool := p == path || path == RootPool || strings.HasPrefix(p, path+"/")
		spec := &je.Job.Spec
		switch {
		case !inPool || je.Evicted || je.Job.Status.State.IsTerminal() || je.Job.Status.Killed:
		case spec.Type == model.JobDaemon || (spec.Type == model.JobStateful && !req.AllowStateful):
		default:
			jobs = append(jobs, je)
		}
	}
	return jobs, nil
}

// CheckMigratable says why a job cannot be migrated to cluster to now.
func (b *migrationBook) CheckMigratable(e *State, je *Job, to string, req MigrationRequest) error {
	j := je.Job
	if u := e.Rollouts.runningUpdate(je); u != nil {
		return fmt.Errorf("job %s is being updated (update %s): let it finish or abort it first: %w", j.ID, u.ID, ErrMigrationConflict)
	}
	if jm := b.Jobs[je.Job.ID]; jm != nil {
		return fmt.Errorf("job %s is being migrated already (migration %s): %w", j.ID, jm.M.ID, ErrMigrationConflict)
	}
	if req.Surge && GangSize(&j.Spec) > 1 {
		return InvalidField("surge", "job %s runs in gangs of %d; surge moves single instances only", j.ID, GangSize(&j.Spec))
	}
	return checkTargetRoom(e, je, to)
}

// targetRoom is what cluster to offers a job's tasks: its hosts up, whether
// one of them can hold a task of need, the largest (by cpu) and what all
// have free.
type targetRoom struct {
	hosts   int
	fits    bool
	largest model.Resources
	free    model.Resources
}

func roomOn(views []hostmgr.HostView, to string, need model.Resources) targetRoom {
	var r targetRoom
	for _, v := range views {
		if v.Cluster != to || v.Hostname == "" || v.State != model.HostUp {
			continue
		}
		r.hosts++
		r.fits = r.fits || need.Fits(v.Capacity)
		if v.Capacity.MilliCPU > r.largest.MilliCPU {
			r.largest = v.Capacity
		}
		r.free = r.free.Add(v.Free().Max(model.Resources{}))
	}
	return r
}

// checkTargetRoom says why cluster to cannot take the job: it must hold
// one task, and, for a long-running job, every instance still to move, in
// what it has free.
func checkTargetRoom(e *State, je *Job, to string) error {
	j := je.Job
	need := je.Current().Spec.Task.Resources
	r := roomOn(e.Settings.Hosts.Snapshot(), to, need)
	switch {
	case r.hosts == 0:
		return fmt.Errorf("to_cluster: cluster %s has no host up: %w", to, ErrNoCapacity)
	case !r.fits:
		return fmt.Errorf("to_cluster: no host of cluster %s can hold a task of job %s (it needs %s; the largest host has %s): %w",
			to, j.ID, need, r.largest, ErrNoCapacity)
	case !j.Spec.LongRunning():
		return nil
	}
	var moving int64
	for _, t := range je.Tasks {
		if t != nil && !IsCold(t) && !t.State.IsTerminal() && t.Cluster != to {
			moving++
		}
	}
	if want := need.Scale(moving); !want.Fits(r.free) {
		return fmt.Errorf("to_cluster: cluster %s has %s free, job %s needs %s for its %d instances to move: %w",
			to, r.free, j.ID, want, moving, ErrNoCapacity)
	}
	return nil
}

// SourceCluster is the cluster most of the job's runs hold a host on,
// other than to ("" when none does).
func (b *migrationBook) SourceCluster(je *Job, to string) string {
	count := map[string]int{}
	for _, t := range je.Tasks {
		if t != nil && !IsCold(t) && t.State.HoldsResources() && t.Cluster != to {
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

// InstallMigration makes a stored migration one the loop runs; the caller
// holds the lock.
func (b *migrationBook) InstallMigration(e *State, m *model.Migration) {
	b.Running[m.ID] = m
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		if je := e.Jobs[rec.Job]; je != nil && !rec.Done {
			b.Jobs[rec.Job] = migration.NewJob(m, rec)
			e.Visit(je)
		}
	}
}

// CheckRollback says why a migration cannot be rolled back now.
func (b *migrationBook) CheckRollback(e *State, m *model.Migration) error {
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
		if _, err := e.Clusters.Resolve(e, rec.From); err != nil {
			return fmt.Errorf("job %s came from cluster %s, which the region no longer has: %w", rec.Job, rec.From, ErrClusterDrained)
		}
		if e.Clusters.IsDrained(rec.From) {
			return fmt.Errorf("job %s came from cluster %s, which is drained (peloton cluster undrain %s to roll back): %w",
				rec.Job, rec.From, rec.From, ErrClusterDrained)
		}
		je := e.Jobs[rec.Job]
		if je == nil {
			continue
		}
		if u := e.Rollouts.runningUpdate(je); u != nil {
			return fmt.Errorf("job %s is being updated (update %s): %w", rec.Job, u.ID, ErrMigrationConflict)
		}
		if jm := b.Jobs[rec.Job]; jm != nil && jm.M.ID != m.ID {
			return fmt.Errorf("job %s is being migrated by migration %s: %w", rec.Job, jm.M.ID, ErrMigrationConflict)
		}
	}
	return nil
}
