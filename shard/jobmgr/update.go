package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/store"
)

// ErrUpdateEnded: the update has ended already.
var ErrUpdateEnded = errors.New("update has ended")

// UpdateOptions shape a job update.
type UpdateOptions struct {
	// BatchSize is how many instances restart on the new config at once
	// (0: all at once).
	BatchSize uint32
	// MaxFailures is how many instances may fail on the new config before
	// the update fails; RollbackOnFailure then rolls it back.
	MaxFailures       uint32
	RollbackOnFailure bool
	// StartPaused creates the update paused: nothing moves until resumed.
	StartPaused bool
	// MinHealthy is how long a restarted instance must stay available
	// before it counts as done.
	MinHealthy time.Duration
	// InPlace restarts instances on their own host where they still fit.
	InPlace bool
	// Canary is how many instances, the lowest first, take the new config
	// before the others, which wait until the update is promoted: by
	// PromoteUpdate, or by itself once every canary has been available for
	// AutoPromoteAfter (0: only by PromoteUpdate). A canary failing past
	// MaxFailures reverts the update when RollbackOnFailure.
	Canary           uint32
	AutoPromoteAfter time.Duration
	// CanaryExtra starts the canaries as extra instances beside the job's
	// (where its pool has room for them) instead of moving its lowest
	// instances in place; promoted, they are removed as the rest moves.
	CanaryExtra bool
}

// MaxMinHealthy bounds UpdateOptions.MinHealthy, and MaxAutoPromoteAfter
// UpdateOptions.AutoPromoteAfter.
const (
	MaxMinHealthy       = time.Hour
	MaxAutoPromoteAfter = 24 * time.Hour
)

// checkUpdate says why a job cannot move from spec a to spec b, naming
// the field; nil if it can.
func checkUpdate(a, b *model.JobSpec) error {
	bad := func(field, what string) error {
		return fmt.Errorf("%s: %s: %w", field, what, core.ErrInvalid)
	}
	switch {
	case a.Type != b.Type:
		return bad("type", "the type of a job cannot change in an update")
	case core.GangSize(a) != core.GangSize(b):
		return bad("gang_size", fmt.Sprintf("the gang size cannot change in an update (%d to %d)", core.GangSize(a), core.GangSize(b)))
	case a.Revocable != b.Revocable:
		return bad("revocable", "revocable cannot change in an update")
	case b.Region != "" && a.Region != b.Region:
		return bad("region", fmt.Sprintf("a job cannot move to another region by an update (%q to %q)", a.Region, b.Region))
	case b.Type != model.JobDaemon && core.GangSize(b) > 1 && b.Instances%core.GangSize(b) != 0 && b.Instances < a.Instances:
		return bad("instances", fmt.Sprintf("%d instances is not a whole number of gangs of %d", b.Instances, core.GangSize(b)))
	}
	return nil
}

// updateShell is rolling updates' shell (shard/rollout decides, the
// core's rolloutBook steps them): the commands that start, pause, resume,
// promote, roll back and abort an update, the config versions they store,
// and the updates read back at recovery.
type updateShell struct{ e *Engine }

// update stores spec as the job's next config version and starts
// rolling its instances onto it, BatchSize at a time. A running update of
// the job is aborted (instances it moved keep their config).
func (s *updateShell) update(ctx context.Context, id model.JobID, spec model.JobSpec, opts UpdateOptions) (*model.Update, error) {
	// Updates of one engine go one at a time: each takes the next version.
	s.e.updateMu.Lock()
	defer s.e.updateMu.Unlock()

	s.e.lock()
	je, err := s.checkUpdatable(id, &spec, opts)
	if err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	from := max(je.Job.ConfigVersion, 1)
	s.e.mu.Unlock()

	// The config is stored before anything names it.
	to, err := s.putNextConfig(ctx, id, from, &spec)
	if err != nil {
		return nil, err
	}
	now := s.e.cfg.Clock.Now()
	u := &model.Update{
		ID: model.MakeUpdateID(id, to), Job: id, FromVersion: from, ToVersion: to,
		BatchSize: opts.BatchSize, State: model.UpdateRollingForward,
		InstancesTotal: spec.Instances, CreateTime: now,
		MaxFailures: opts.MaxFailures, RollbackOnFailure: opts.RollbackOnFailure, Paused: opts.StartPaused,
		MinHealthy: opts.MinHealthy, InPlace: opts.InPlace,
		Canary: opts.Canary, AutoPromoteAfter: opts.AutoPromoteAfter, CanaryExtra: opts.CanaryExtra,
	}
	if opts.CanaryExtra {
		u.InstancesTotal += opts.Canary // the job runs them until the promotion
	}
	if spec.Periodic() {
		// Nothing runs to roll: the next runs take the new config.
		u.State, u.InstancesTotal, u.CompletionTime = model.UpdateSucceeded, 0, now
		u.Message = fmt.Sprintf("the next runs take config %d", to)
	}
	if err := s.e.cfg.Store.CreateUpdate(ctx, u); err != nil {
		return nil, fmt.Errorf("store update %s: %w", u.ID, err)
	}

	s.e.lock()
	if je.Job.Status.State.IsTerminal() || je.Job.Status.Killed || s.e.c.Jobs[id] != je {
		s.e.c.Rollouts.CloseUpdateRecord(&s.e.c, u, model.UpdateAborted, "the job finished before the update started", now)
		s.e.mu.Unlock()
		return nil, fmt.Errorf("job %s finished before the update started: %w", id, core.ErrJobFinished)
	}
	prev := s.e.c.Rollouts[id]
	oldSpec := je.Job.Spec
	je.Job.Spec, je.Job.ConfigVersion, je.Job.Status.Update = spec, to, u.ID
	if je.Configs == nil {
		je.Configs = map[uint64]*core.ConfigView{}
	}
	je.Configs[from] = core.NewConfigView(&oldSpec)
	je.Configs[to] = core.NewConfigView(je.SpecCopy())
	if prev.Running() {
		s.e.c.Rollouts.EndUpdate(&s.e.c, je, model.UpdateAborted, "replaced by update "+string(u.ID), now)
		// The new update takes the replaced one's place beside the job:
		// its record is written with the job's.
		p := prev.Update
		s.e.c.Rollouts.CloseUpdateRecord(&s.e.c, p, p.State, p.Message, now)
	}
	if spec.Periodic() {
		s.e.c.Log.Info("periodic job updated", "job", id, "update", u.ID, "from", from, "to", to)
		cp := *u
		if err := s.e.storeJobLocked(ctx, je); err != nil {
			return nil, fmt.Errorf("store job %s: %w", id, err)
		}
		return &cp, nil
	}
	// The update is written again with the job, by the same pass, and
	// shown from then on (see jobsView).
	s.e.c.Rollouts[id] = rollout.Start(u)
	s.e.c.Rollouts.SyncExtraCanaries(je, s.e.c.Rollouts[id])
	s.e.c.Queue.Sched.SetJobLimit(id, spec.MaxRunning)
	s.e.c.Log.Info("job update started", "job", id, "update", u.ID, "from", from, "to", to, "batch", opts.BatchSize)
	cp := *u
	if err := s.e.storeJobLocked(ctx, je); err != nil {
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	return &cp, nil
}

// checkUpdatable says why a job cannot be updated to spec now, filling in
// what the spec inherits from the job; callers hold the engine's lock.
func (s *updateShell) checkUpdatable(id model.JobID, spec *model.JobSpec, opts UpdateOptions) (*core.Job, error) {
	je := s.e.c.Jobs[id]
	if je == nil {
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	if je.Job.Status.State.IsTerminal() || je.Job.Status.Killed {
		st := je.Job.Status.State
		return nil, fmt.Errorf("job %s is %s: only a job that runs can be updated: %w", id, st, core.ErrJobFinished)
	}
	if jm := s.e.c.Migrations.Jobs[id]; jm != nil {
		return nil, fmt.Errorf("job %s is being migrated (migration %s): abort it first: %w", id, jm.M.ID, core.ErrMigrationConflict)
	}
	if spec.Region == "" {
		spec.Region = je.Job.Spec.Region
	}
	if spec.Clusters == nil {
		spec.Clusters = je.Job.Spec.Clusters // kept unless the spec says
	}
	if spec.Type == model.JobDaemon {
		spec.Instances = je.Job.Spec.Instances // the hosts give a daemon's count
	}
	if err := checkUpdate(&je.Job.Spec, spec); err != nil {
		return nil, err
	}
	if je.Job.Spec.Periodic() != spec.Periodic() {
		return nil, fmt.Errorf("schedule: an update cannot add or remove a job's schedule; create a new job: %w", core.ErrInvalid)
	}
	if err := s.checkCanaries(spec, opts); err != nil {
		return nil, err
	}
	if spec.Type != model.JobDaemon && spec.Instances > s.e.cfg.Limits.InstancesPerJob && spec.Instances > je.Job.Spec.Instances {
		return nil, fmt.Errorf("instances: %d is more than this region's limit of %d per job: %w", spec.Instances, s.e.cfg.Limits.InstancesPerJob, core.ErrInvalid)
	}
	if spec.Instances > je.Job.Spec.Instances && !spec.Periodic() {
		s.e.pending.set(s.e.c.CountPending(), s.e.c.Now)
		if err := s.e.pending.check(spec.Pool, int64(spec.Instances-je.Job.Spec.Instances), s.e.cfg.Limits.PendingTasksPerPool); err != nil {
			return nil, err
		}
	}
	return je, nil
}

// putNextConfig stores spec as the job's config version after from and
// returns the version it got; a version left by a change that failed half
// way (stored, never named by the job) is skipped.
func (s *updateShell) putNextConfig(ctx context.Context, id model.JobID, from uint64, spec *model.JobSpec) (uint64, error) {
	to := from + 1
	err := s.e.cfg.Store.PutJobConfig(ctx, id, to, spec)
	if errors.Is(err, store.ErrExists) {
		var versions []uint64
		if versions, err = s.e.cfg.Store.ListJobConfigVersions(ctx, id); err == nil && len(versions) > 0 {
			to = versions[len(versions)-1] + 1
			err = s.e.cfg.Store.PutJobConfig(ctx, id, to, spec)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("store config %d of job %s: %w", to, id, err)
	}
	return to, nil
}

// loadRunConfigs loads the older configs a recovered job's runs still use.
func (s *updateShell) loadRunConfigs(ctx context.Context, je *core.Job) error {
	j := je.Job
	for _, t := range je.Tasks {
		if t == nil {
			continue
		}
		v := max(t.ConfigVersion, 1)
		if t.State.IsTerminal() || v == j.ConfigVersion {
			continue
		}
		if je.Configs[v] != nil {
			continue
		}
		spec, err := s.e.cfg.Store.GetJobConfig(ctx, j.ID, v)
		if err != nil {
			return fmt.Errorf("config %d of job %s: %w", v, j.ID, err)
		}
		if je.Configs == nil {
			je.Configs = map[uint64]*core.ConfigView{}
		}
		je.Configs[v] = core.NewConfigView(spec)
	}
	return nil
}

// read reads a recovered job's running update, nil if none.
func (s *updateShell) read(ctx context.Context, j *model.Job) (*model.Update, error) {
	if j.Status.Update == "" {
		return nil, nil
	}
	u, err := s.e.cfg.Store.GetUpdate(ctx, j.Status.Update)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", j.Status.Update, err)
	}
	if u.State.IsTerminal() {
		return nil, nil
	}
	return u, nil
}

// GetUpdate returns an update as the store has it: a running one from the
// view the loop publishes after its writes (with the job it updates, see
// jobsView), an ended one from the store.
func (r Reads) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	e := r.e
	if _, _, ok := id.Parse(); !ok {
		return nil, fmt.Errorf("update id %q: want <job>.<version>: %w", id, core.ErrInvalid)
	}
	if u := e.view.update(id); u != nil {
		return u, nil
	}
	u, err := e.cfg.Store.GetUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("update %s: %w", id, core.ErrNotFound)
	}
	return u, err
}

// ListUpdates returns a job's updates, oldest first.
func (r Reads) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	e := r.e
	if e.view.get(job) == nil {
		return nil, fmt.Errorf("job %s: %w", job, core.ErrNotFound)
	}
	us, err := e.cfg.Store.ListUpdates(ctx, job)
	if err != nil {
		return nil, err
	}
	for i, u := range us {
		if live := e.view.update(u.ID); live != nil {
			us[i] = live
		}
	}
	return us, nil
}

// abort stops a rolling update. Instances already moved keep the new
// config; the others keep running theirs until they next restart, when
// they take the job's current config. To go back, update the job to the
// older config.
func (s *updateShell) abort(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	s.e.lock()
	je, err := s.e.c.Rollouts.UpdateEntry(&s.e.c, id)
	if err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	var ro *rollout.Job
	if je != nil {
		ro = s.e.c.Rollouts[je.Job.ID]
	}
	if ro == nil || ro.Update.ID != id {
		s.e.mu.Unlock()
		u, err := s.e.Reads().GetUpdate(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("update %s is %s already: %w", id, u.State, ErrUpdateEnded)
	}
	u := ro.Update
	now := s.e.cfg.Clock.Now()
	delete(s.e.c.Rollouts, je.Job.ID)
	s.e.c.Rollouts.CloseUpdateRecord(&s.e.c, u, model.UpdateAborted, "aborted by an operator", now)
	s.e.c.Log.Info("job update aborted", "job", je.Job.ID, "update", id)
	cp := *u
	wait := s.e.awaitWrite()
	s.e.mu.Unlock()
	if err := wait(ctx); err != nil {
		return nil, fmt.Errorf("store update %s: %w", id, err)
	}
	return &cp, nil
}

// GetJobConfig returns a config version of a job (0: the current one),
// with the version returned and every stored version.
func (r Reads) GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, uint64, []uint64, error) {
	e := r.e
	e.lock()
	je := e.c.Jobs[id]
	var current uint64
	if je != nil {
		current = max(je.Job.ConfigVersion, 1)
	}
	e.mu.Unlock()
	if je == nil {
		return nil, 0, nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	if version == 0 {
		version = current
	}
	versions, err := e.cfg.Store.ListJobConfigVersions(ctx, id)
	if err != nil {
		return nil, 0, nil, err
	}
	spec, err := e.cfg.Store.GetJobConfig(ctx, id, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil, fmt.Errorf("config version %d of job %s (versions %v): %w", version, id, versions, core.ErrNotFound)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	return spec, version, versions, nil
}

// ListEvents returns stored events of a job (the history kept for the
// retention window).
func (r Reads) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	e := r.e
	e.lock()
	je := e.c.Jobs[q.Job]
	e.mu.Unlock()
	if je == nil {
		return nil, fmt.Errorf("job %s: %w", q.Job, core.ErrNotFound)
	}
	return e.cfg.Store.ListEvents(ctx, q)
}

// checkCanaries says why an update's canaries cannot start.
func (s *updateShell) checkCanaries(spec *model.JobSpec, opts UpdateOptions) error {
	switch {
	case spec.Periodic() && opts.Canary > 0:
		return fmt.Errorf("canary: a periodic job runs no instances of its own to try a config on: %w", core.ErrInvalid)
	case opts.CanaryExtra:
		return s.checkExtraCanaries(spec, opts)
	case opts.Canary > 0 && opts.Canary >= spec.Instances:
		return fmt.Errorf("canary: %d canaries of %d instances leave none to wait for the promotion: %w", opts.Canary, spec.Instances, core.ErrInvalid)
	}
	return nil
}

// checkExtraCanaries says why extra canaries cannot start: a service only
// (a stateful instance's volumes and a daemon's hosts are its own), whole
// gangs, within the region's instance limit and the pool's pending room.
func (s *updateShell) checkExtraCanaries(spec *model.JobSpec, opts UpdateOptions) error {
	n := core.GangSize(spec)
	switch {
	case opts.Canary == 0:
		return fmt.Errorf("canary_extra: give the number of canaries (canary): %w", core.ErrInvalid)
	case spec.Type != model.JobService:
		return fmt.Errorf("canary_extra: only a service's canaries can be extra instances, not a %s job's; use in-place canaries: %w", spec.Type, core.ErrInvalid)
	case opts.Canary%n != 0:
		return fmt.Errorf("canary: %d extra canaries are not whole gangs of %d: %w", opts.Canary, n, core.ErrInvalid)
	case spec.Instances+opts.Canary > s.e.cfg.Limits.InstancesPerJob:
		return fmt.Errorf("canary: %d instances and %d extra canaries are more than this region's limit of %d per job: %w", spec.Instances, opts.Canary, s.e.cfg.Limits.InstancesPerJob, core.ErrInvalid)
	}
	s.e.pending.set(s.e.c.CountPending(), s.e.c.Now)
	return s.e.pending.check(spec.Pool, int64(opts.Canary), s.e.cfg.Limits.PendingTasksPerPool)
}
