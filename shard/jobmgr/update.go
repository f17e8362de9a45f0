package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/store"
)

// ErrJobFinished: the operation needs a job that has not finished.
var ErrJobFinished = errors.New("job has finished")

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
		return fmt.Errorf("%s: %s: %w", field, what, ErrInvalid)
	}
	switch {
	case a.Type != b.Type:
		return bad("type", "the type of a job cannot change in an update")
	case gangSize(a) != gangSize(b):
		return bad("gang_size", fmt.Sprintf("the gang size cannot change in an update (%d to %d)", gangSize(a), gangSize(b)))
	case a.Revocable != b.Revocable:
		return bad("revocable", "revocable cannot change in an update")
	case b.Region != "" && a.Region != b.Region:
		return bad("region", fmt.Sprintf("a job cannot move to another region by an update (%q to %q)", a.Region, b.Region))
	case b.Type != model.JobDaemon && gangSize(b) > 1 && b.Instances%gangSize(b) != 0 && b.Instances < a.Instances:
		return bad("instances", fmt.Sprintf("%d instances is not a whole number of gangs of %d", b.Instances, gangSize(b)))
	}
	return nil
}

// updateJob stores spec as the job's next config version and starts
// rolling its instances onto it, BatchSize at a time. A running update of
// the job is aborted (instances it moved keep their config).
func (e *Engine) updateJob(ctx context.Context, id model.JobID, spec model.JobSpec, opts UpdateOptions) (*model.Update, error) {
	// Updates of one engine go one at a time: each takes the next version.
	e.updateMu.Lock()
	defer e.updateMu.Unlock()

	e.lock()
	je, err := e.checkUpdatable(id, &spec, opts)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	from := max(je.job.ConfigVersion, 1)
	e.mu.Unlock()

	// The config is stored before anything names it.
	to, err := e.putNextConfig(ctx, id, from, &spec)
	if err != nil {
		return nil, err
	}
	now := e.cfg.Clock.Now()
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
	if err := e.cfg.Store.CreateUpdate(ctx, u); err != nil {
		return nil, fmt.Errorf("store update %s: %w", u.ID, err)
	}

	e.lock()
	if je.job.Status.State.IsTerminal() || je.job.Status.Killed || e.jobs[id] != je {
		e.closeUpdateRecord(u, model.UpdateAborted, "the job finished before the update started", now)
		e.mu.Unlock()
		return nil, fmt.Errorf("job %s finished before the update started: %w", id, ErrJobFinished)
	}
	prev := e.rollouts[id]
	oldSpec := je.job.Spec
	je.job.Spec, je.job.ConfigVersion, je.job.Status.Update = spec, to, u.ID
	if je.configs == nil {
		je.configs = map[uint64]*configView{}
	}
	je.configs[from] = newConfigView(&oldSpec)
	je.configs[to] = newConfigView(je.specCopy())
	if prev.Running() {
		e.endUpdate(je, model.UpdateAborted, "replaced by update "+string(u.ID), now)
		// The new update takes the replaced one's place beside the job:
		// its record is written with the job's.
		p := prev.Update
		e.closeUpdateRecord(p, p.State, p.Message, now)
	}
	if spec.Periodic() {
		e.log.Info("periodic job updated", "job", id, "update", u.ID, "from", from, "to", to)
		cp := *u
		if err := e.storeJobLocked(ctx, je); err != nil {
			return nil, fmt.Errorf("store job %s: %w", id, err)
		}
		return &cp, nil
	}
	// The update is written again with the job, by the same pass, and
	// shown from then on (see jobsView).
	e.rollouts[id] = rollout.Start(u)
	e.syncExtraCanaries(je, e.rollouts[id])
	e.sched.SetJobLimit(id, spec.MaxRunning)
	e.log.Info("job update started", "job", id, "update", u.ID, "from", from, "to", to, "batch", opts.BatchSize)
	cp := *u
	if err := e.storeJobLocked(ctx, je); err != nil {
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	return &cp, nil
}

// checkUpdatable says why a job cannot be updated to spec now, filling in
// what the spec inherits from the job; callers hold e.mu.
func (e *Engine) checkUpdatable(id model.JobID, spec *model.JobSpec, opts UpdateOptions) (*jobEntry, error) {
	je := e.jobs[id]
	if je == nil {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if je.job.Status.State.IsTerminal() || je.job.Status.Killed {
		st := je.job.Status.State
		return nil, fmt.Errorf("job %s is %s: only a job that runs can be updated: %w", id, st, ErrJobFinished)
	}
	if jm := je.migration; jm != nil {
		return nil, fmt.Errorf("job %s is being migrated (migration %s): abort it first: %w", id, jm.M.ID, ErrMigrationConflict)
	}
	if spec.Region == "" {
		spec.Region = je.job.Spec.Region
	}
	if spec.Clusters == nil {
		spec.Clusters = je.job.Spec.Clusters // kept unless the spec says
	}
	if spec.Type == model.JobDaemon {
		spec.Instances = je.job.Spec.Instances // the hosts give a daemon's count
	}
	if err := checkUpdate(&je.job.Spec, spec); err != nil {
		return nil, err
	}
	if je.job.Spec.Periodic() != spec.Periodic() {
		return nil, fmt.Errorf("schedule: an update cannot add or remove a job's schedule; create a new job: %w", ErrInvalid)
	}
	if err := e.checkCanaries(spec, opts); err != nil {
		return nil, err
	}
	if spec.Type != model.JobDaemon && spec.Instances > e.cfg.Limits.InstancesPerJob && spec.Instances > je.job.Spec.Instances {
		return nil, fmt.Errorf("instances: %d is more than this region's limit of %d per job: %w", spec.Instances, e.cfg.Limits.InstancesPerJob, ErrInvalid)
	}
	if spec.Instances > je.job.Spec.Instances && !spec.Periodic() {
		e.pending.set(e.countPending(), e.cfg.Clock.Now())
		if err := e.pending.check(spec.Pool, int64(spec.Instances-je.job.Spec.Instances), e.cfg.Limits.PendingTasksPerPool); err != nil {
			return nil, err
		}
	}
	return je, nil
}

// putNextConfig stores spec as the job's config version after from and
// returns the version it got; a version left by a change that failed half
// way (stored, never named by the job) is skipped.
func (e *Engine) putNextConfig(ctx context.Context, id model.JobID, from uint64, spec *model.JobSpec) (uint64, error) {
	to := from + 1
	err := e.cfg.Store.PutJobConfig(ctx, id, to, spec)
	if errors.Is(err, store.ErrExists) {
		var versions []uint64
		if versions, err = e.cfg.Store.ListJobConfigVersions(ctx, id); err == nil && len(versions) > 0 {
			to = versions[len(versions)-1] + 1
			err = e.cfg.Store.PutJobConfig(ctx, id, to, spec)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("store config %d of job %s: %w", to, id, err)
	}
	return to, nil
}

// closeUpdateRecord ends an update that is not (or no longer) its job's
// running one; the next pass writes its record. Callers hold e.mu.
func (e *Engine) closeUpdateRecord(u *model.Update, st model.UpdateState, msg string, now time.Time) {
	u.State, u.Message, u.CompletionTime = st, msg, now
	e.endedUpdates = append(e.endedUpdates, u)
	e.wake()
}

// endUpdate ends the job's running update; the loop writes it.
func (e *Engine) endUpdate(je *jobEntry, st model.UpdateState, msg string, now time.Time) {
	ro := e.rollouts[je.job.ID]
	if ro == nil || !ro.End(st, msg, now) {
		return
	}
	if ro.Update.CanaryExtra {
		// Extra canaries left are beyond the count: they go under the SLA.
		if c := je.configs[je.job.ConfigVersion]; c != nil && je.job.Spec.Instances != c.spec.Instances {
			je.job.Spec.Instances = c.spec.Instances
			je.dirty, je.record = true, true
		}
	}
	e.log.Info("job update ended", "job", je.job.ID, "update", ro.Update.ID, "state", st, "message", msg)
}

// loadRunConfigs loads the older configs a recovered job's runs still use.
func (e *Engine) loadRunConfigs(ctx context.Context, je *jobEntry) error {
	j := je.job
	for _, t := range je.tasks {
		if t == nil {
			continue
		}
		v := max(t.ConfigVersion, 1)
		if t.State.IsTerminal() || v == j.ConfigVersion {
			continue
		}
		if je.configs[v] != nil {
			continue
		}
		spec, err := e.cfg.Store.GetJobConfig(ctx, j.ID, v)
		if err != nil {
			return fmt.Errorf("config %d of job %s: %w", v, j.ID, err)
		}
		if je.configs == nil {
			je.configs = map[uint64]*configView{}
		}
		je.configs[v] = newConfigView(spec)
	}
	return nil
}

// readUpdate reads a recovered job's running update, nil if none.
func (e *Engine) readUpdate(ctx context.Context, j *model.Job) (*model.Update, error) {
	if j.Status.Update == "" {
		return nil, nil
	}
	u, err := e.cfg.Store.GetUpdate(ctx, j.Status.Update)
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

// updateEntry is the job entry of the job an update id names (nil if the
// engine does not have it); the caller holds the lock.
func (e *Engine) updateEntry(id model.UpdateID) (*jobEntry, error) {
	job, _, ok := id.Parse()
	if !ok {
		return nil, fmt.Errorf("update id %q: want <job>.<version>: %w", id, ErrInvalid)
	}
	return e.jobs[job], nil
}

// GetUpdate returns an update as the store has it: a running one from the
// view the loop publishes after its writes (with the job it updates, see
// jobsView), an ended one from the store.
func (r Reads) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	e := r.e
	if _, _, ok := id.Parse(); !ok {
		return nil, fmt.Errorf("update id %q: want <job>.<version>: %w", id, ErrInvalid)
	}
	if u := e.view.update(id); u != nil {
		return u, nil
	}
	u, err := e.cfg.Store.GetUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("update %s: %w", id, ErrNotFound)
	}
	return u, err
}

// ListUpdates returns a job's updates, oldest first.
func (r Reads) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	e := r.e
	if e.view.get(job) == nil {
		return nil, fmt.Errorf("job %s: %w", job, ErrNotFound)
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

// abortUpdate stops a rolling update. Instances already moved keep the new
// config; the others keep running theirs until they next restart, when
// they take the job's current config. To go back, update the job to the
// older config.
func (e *Engine) abortUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	e.lock()
	je, err := e.updateEntry(id)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	var ro *rollout.Job
	if je != nil {
		ro = e.rollouts[je.job.ID]
	}
	if ro == nil || ro.Update.ID != id {
		e.mu.Unlock()
		u, err := e.Reads().GetUpdate(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("update %s is %s already: %w", id, u.State, ErrUpdateEnded)
	}
	u := ro.Update
	now := e.cfg.Clock.Now()
	delete(e.rollouts, je.job.ID)
	e.closeUpdateRecord(u, model.UpdateAborted, "aborted by an operator", now)
	e.log.Info("job update aborted", "job", je.job.ID, "update", id)
	cp := *u
	wait := e.awaitWrite()
	e.mu.Unlock()
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
	je := e.jobs[id]
	var current uint64
	if je != nil {
		current = max(je.job.ConfigVersion, 1)
	}
	e.mu.Unlock()
	if je == nil {
		return nil, 0, nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
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
		return nil, 0, nil, fmt.Errorf("config version %d of job %s (versions %v): %w", version, id, versions, ErrNotFound)
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
	je := e.jobs[q.Job]
	e.mu.Unlock()
	if je == nil {
		return nil, fmt.Errorf("job %s: %w", q.Job, ErrNotFound)
	}
	return e.cfg.Store.ListEvents(ctx, q)
}

// checkCanaries says why an update's canaries cannot start.
func (e *Engine) checkCanaries(spec *model.JobSpec, opts UpdateOptions) error {
	switch {
	case spec.Periodic() && opts.Canary > 0:
		return fmt.Errorf("canary: a periodic job runs no instances of its own to try a config on: %w", ErrInvalid)
	case opts.CanaryExtra:
		return e.checkExtraCanaries(spec, opts)
	case opts.Canary > 0 && opts.Canary >= spec.Instances:
		return fmt.Errorf("canary: %d canaries of %d instances leave none to wait for the promotion: %w", opts.Canary, spec.Instances, ErrInvalid)
	}
	return nil
}

// checkExtraCanaries says why extra canaries cannot start: a service only
// (a stateful instance's volumes and a daemon's hosts are its own), whole
// gangs, within the region's instance limit and the pool's pending room.
func (e *Engine) checkExtraCanaries(spec *model.JobSpec, opts UpdateOptions) error {
	n := gangSize(spec)
	switch {
	case opts.Canary == 0:
		return fmt.Errorf("canary_extra: give the number of canaries (canary): %w", ErrInvalid)
	case spec.Type != model.JobService:
		return fmt.Errorf("canary_extra: only a service's canaries can be extra instances, not a %s job's; use in-place canaries: %w", spec.Type, ErrInvalid)
	case opts.Canary%n != 0:
		return fmt.Errorf("canary: %d extra canaries are not whole gangs of %d: %w", opts.Canary, n, ErrInvalid)
	case spec.Instances+opts.Canary > e.cfg.Limits.InstancesPerJob:
		return fmt.Errorf("canary: %d instances and %d extra canaries are more than this region's limit of %d per job: %w", spec.Instances, opts.Canary, e.cfg.Limits.InstancesPerJob, ErrInvalid)
	}
	e.pending.set(e.countPending(), e.cfg.Clock.Now())
	return e.pending.check(spec.Pool, int64(opts.Canary), e.cfg.Limits.PendingTasksPerPool)
}

// syncExtraCanaries keeps the job's instance count at what its update
// runs (rollout.Job.Instances): its target's, plus the extra canaries
// until the promotion.
func (e *Engine) syncExtraCanaries(je *jobEntry, ro *rollout.Job) {
	if !ro.Update.CanaryExtra {
		return
	}
	c := je.configs[ro.Target()]
	if c == nil {
		return
	}
	want := ro.Instances(c.spec.Instances)
	if want > c.spec.Instances {
		ro.Track(c.spec.Instances, want-c.spec.Instances) // a failing extra canary counts
	}
	if je.job.Spec.Instances != want {
		je.job.Spec.Instances = want
		je.dirty, je.record = true, true
	}
}
