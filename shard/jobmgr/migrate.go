package jobmgr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
	"github.com/peloton-federated/peloton/shard/store"
)

// A migration moves the instances of jobs from the clusters they run on to
// one target cluster, a batch at a time, under each job's SLA: the rolling
// update's loop with the cluster as the thing that changes. Each pass,
// migration.Step decides for every job of every running migration from
// how its gangs stand, and migration.Job keeps the job's part beside it;
// this shell applies the plan: it pins instances
// to the target (a must placement preference), starts surge instances
// (with surge), restarts stale instances, stops surge instances that are
// no longer needed, and keeps the report. See docs/migration.md.

// Defaults of the migration shell.
const (
	// MigrationMaxFailures is how many failed runs one instance may have on
	// the target before its migration stops.
	MigrationMaxFailures = 3
	// DefaultMigrationStall is how long a moved instance may wait for a
	// host on the target before its migration stops.
	DefaultMigrationStall = 2 * time.Minute
)

// Errors of migrations; the API edge maps them to codes.
var (
	// ErrMigrationConflict: the job is being updated or migrated already.
	ErrMigrationConflict = errors.New("job is being updated or migrated")
	// ErrMigrationEnded: the migration has ended already.
	ErrMigrationEnded = errors.New("migration has ended")
	// ErrNoCapacity: the target cluster cannot hold the job.
	ErrNoCapacity = errors.New("no capacity on the target cluster")
	// ErrClusterDrained: the cluster takes no new placements.
	ErrClusterDrained = errors.New("cluster is drained")
)

// migrationBook holds the running migrations by id; dirty ones are
// written at the end of the pass.
type migrationBook struct {
	running map[model.MigrationID]*model.Migration
	dirty   map[model.MigrationID]bool
	// stallAfter overrides DefaultMigrationStall (tests).
	stallAfter time.Duration
}

// migrateStep runs one step of every running migration.
func (e *Engine) migrateStep(now time.Time) {
	if len(e.migrations.running) == 0 {
		return
	}
	ids := make([]model.MigrationID, 0, len(e.migrations.running))
	for id := range e.migrations.running {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		m := e.migrations.running[id]
		if m.State.IsTerminal() {
			continue
		}
		before := m.Message
		for i := range m.Jobs {
			if rec := &m.Jobs[i]; !rec.Done && e.migrateJob(m, rec, now) {
				e.migrations.dirty[id] = true
			}
		}
		if migration.Summarize(m, now) {
			e.log.Info("migration ended", "migration", id, "state", m.State, "message", m.Message)
		}
		if m.Message != before {
			e.migrations.dirty[id] = true
		}
	}
}

// migrateJob runs one step of a job's migration and reports whether its
// record changed.
func (e *Engine) migrateJob(m *model.Migration, rec *model.MigrationJob, now time.Time) bool {
	before := migration.MarkOf(rec)
	je := e.jobs[rec.Job]
	if je == nil || je.evicted || je.job.Status.State.IsTerminal() || je.job.Status.Killed {
		rec.Done, rec.InFlight, rec.Message = true, 0, "the job ended"
		if je != nil {
			e.endJobMigration(je, now)
		}
		return migration.MarkOf(rec) != before
	}
	jm := je.migration
	if jm == nil || jm.Rec != rec {
		jm = migration.NewJob(m, rec)
		je.migration = jm
	}
	plan := migration.Step(e.migrateInput(je, jm, now))
	e.applyMigratePlan(je, jm, plan, now)
	if jm.Report(plan) {
		e.log.Warn("migration stopped", "migration", m.ID, "job", rec.Job, "reason", plan.Stuck)
	}
	if plan.Complete {
		e.endJobMigration(je, now)
		e.forgetRemoved(je) // the ended surge instances
	}
	return migration.MarkOf(rec) != before
}

// endJobMigration takes the job out of its migration: surge instances
// still there go (the removal of instances beyond the job's count takes
// them), and the ended ones are forgotten.
func (e *Engine) endJobMigration(je *jobEntry, now time.Time) {
	jm := je.migration
	if jm == nil {
		return
	}
	for slot := range jm.Rec.Surge {
		if int(slot) < len(je.tasks) {
			e.dropSurge(je, je.tasks[slot], now)
		}
	}
	clear(jm.Rec.Surge)
	jm.Rec.Moving = nil
	for i, p := range je.prefer {
		if p.must {
			delete(je.prefer, i)
		}
	}
	je.migration = nil
	e.visit(je)
}

// surgeState is how the surge instance in slot stands.
func (e *Engine) surgeState(je *jobEntry, jm *migration.Job, slot uint32) migration.SurgeState {
	if int(slot) >= len(je.tasks) {
		return migration.SurgeNone
	}
	t := je.tasks[slot]
	switch {
	case t == nil || isCold(t) || t.State.IsTerminal():
		return migration.SurgeNone
	case t.Goal == model.TaskKilled:
		return migration.SurgeStopping
	case sla.Available(t) && t.Cluster == jm.To:
		return migration.SurgeAvailable
	}
	return migration.SurgeStarting
}

// migrateInput describes the job's gangs to migration.Step.
func (e *Engine) migrateInput(je *jobEntry, jm *migration.Job, now time.Time) migration.Input {
	j := je.job
	n := gangSize(&j.Spec)
	surgeOf := e.liveSurges(je, jm)
	in := migration.Input{
		Batch:   e.migrationBatch(jm.M, &j.Spec),
		Surge:   jm.M.Surge && j.Spec.LongRunning() && n == 1,
		Restart: j.Spec.LongRunning() || jm.M.MoveRunning,
		// A batch task counts moved once placed on the target: it may
		// end before a pass sees it run.
		SettleOnPlace: !j.Spec.LongRunning(),
		Paused:        jm.M.Paused,
		MaxFailures:   MigrationMaxFailures,
		StallAfter:    cmp.Or(e.migrations.stallAfter, DefaultMigrationStall),
	}
	for first := uint32(0); first < j.Spec.Instances && int(first) < len(je.tasks); first += n {
		g := gangOf(je, first)
		ms := je.members(g)
		if ms == nil {
			continue
		}
		mg, subject := e.migrateGang(je, jm, g, ms)
		if !subject {
			continue
		}
		if slot, ok := surgeOf[first]; ok {
			mg.Surge = e.surgeState(je, jm, slot)
		}
		if mg.Move != migration.NotMoved {
			e.watchMoving(je, jm, ms, &mg, now)
		}
		in.Gangs = append(in.Gangs, mg)
	}
	if j.Spec.LongRunning() {
		e.migrationSLA(je, jm, &in)
	}
	return in
}

// liveSurges maps each instance with a surge instance to the surge's
// slot; surge instances that ended leave their pair.
func (e *Engine) liveSurges(je *jobEntry, jm *migration.Job) map[uint32]uint32 {
	surgeOf := map[uint32]uint32{}
	for slot, inst := range jm.Rec.Surge {
		if e.surgeState(je, jm, slot) == migration.SurgeNone {
			delete(jm.Rec.Surge, slot)
			continue
		}
		surgeOf[inst] = slot
	}
	return surgeOf
}

// migrateGang describes gang g, of members ms, to the migration step. It
// reports whether the step concerns the gang: going forward every gang,
// rolling back only those the migration moved.
func (e *Engine) migrateGang(je *jobEntry, jm *migration.Job, g resmgr.GangID, ms []*model.TaskRuntime) (migration.Gang, bool) {
	first := g.Gang * gangSize(&je.job.Spec)
	mg := migration.Gang{Gang: g.Gang, Size: uint32(len(ms)), Restarting: e.restarting[g] != nil, Available: true}
	moving, subject := false, false
	var w migration.Where
	for k, t := range ms {
		i := first + uint32(k) // a cold task's marker has no id
		moving = moving || jm.IsMoving(i)
		subject = subject || jm.Concerns(i)
		live := liveMember(t)
		w.Add(t, live, jm.To)
		if live && !sla.Available(t) {
			mg.Available = false
		}
	}
	mg.Place = w.Place()
	if moving {
		mg.Move = jm.Move(g.Gang)
	}
	return mg, subject
}

// liveMember reports whether t may run again.
func liveMember(t *model.TaskRuntime) bool {
	return t != nil && !isCold(t) && !t.State.IsTerminal()
}

// migrationSLA gives a long-running job's migration step its SLA, and
// records the most instances ever unavailable at once for the report.
func (e *Engine) migrationSLA(je *jobEntry, jm *migration.Job, in *migration.Input) {
	spec := &je.job.Spec
	limit := slaLimit(spec)
	view, extra := e.migrationView(je, jm)
	in.SLA, in.GangSize = &sla.Job{Limit: limit + extra, Instances: view}, gangSize(spec)
	avail := extra
	for _, v := range view {
		if v.Available {
			avail++
		}
	}
	down := spec.Instances - min(spec.Instances, avail)
	jm.Rec.MaxUnavailable = max(jm.Rec.MaxUnavailable, down)
	jm.Rec.SLAMaxUnavailable = limit
}

// migrationView is the SLA's view of the job's own instances, with how
// many surge instances stand in for instances that go down: an available
// surge instance makes room for one more disruption.
func (e *Engine) migrationView(je *jobEntry, jm *migration.Job) ([]sla.Instance, uint32) {
	view := e.slaView(je)
	n := je.job.Spec.Instances
	kept := view[:0]
	for _, v := range view {
		if v.ID < n {
			kept = append(kept, v)
		}
	}
	var extra uint32
	for slot := range jm.Rec.Surge {
		if e.surgeState(je, jm, slot) == migration.SurgeAvailable {
			extra++
		}
	}
	return kept, extra
}

// watchMoving keeps a moving gang pinned to the target and has the
// migration count its failures there and how long it waited for a host.
func (e *Engine) watchMoving(je *jobEntry, jm *migration.Job, ms []*model.TaskRuntime, mg *migration.Gang, now time.Time) {
	warm := make([]*model.TaskRuntime, 0, len(ms))
	for _, t := range ms {
		if t == nil || isCold(t) {
			continue
		}
		warm = append(warm, t)
		if !t.State.HoldsResources() && !t.State.IsTerminal() {
			e.pin(je, t, jm.To)
		}
	}
	jm.Watch(mg, warm, now)
}

// pin makes a task's next placement go to cluster only.
func (e *Engine) pin(je *jobEntry, t *model.TaskRuntime, cluster string) {
	if je.prefer == nil {
		je.prefer = map[uint32]placementPref{}
	}
	if p, ok := je.prefer[t.ID.Instance]; ok && p.must && len(p.clusters) == 1 && p.clusters[0] == cluster {
		return
	}
	je.prefer[t.ID.Instance] = placementPref{clusters: []string{cluster}, must: true}
}

// migrationBatch is how many instances of a job move at once: the
// migration's batch size, else the job's SLA limit (at least 1).
func (e *Engine) migrationBatch(m *model.Migration, spec *model.JobSpec) uint32 {
	if m.BatchSize > 0 {
		return m.BatchSize
	}
	if spec.LongRunning() {
		return max(slaLimit(spec), 1)
	}
	return 0
}

// applyMigratePlan carries out one step's plan for a job.
func (e *Engine) applyMigratePlan(je *jobEntry, jm *migration.Job, plan migration.Plan, now time.Time) {
	rec := jm.Rec
	j := je.job
	for _, gang := range plan.Pin {
		for _, t := range je.members(resmgr.GangID{Job: j.ID, Gang: gang}) {
			if t == nil || isCold(t) || t.State.IsTerminal() {
				continue
			}
			e.pin(je, t, jm.To)
			jm.StartMoving(t)
		}
	}
	for _, gang := range plan.StartSurge {
		slot := e.surgeSlot(je, jm, now)
		if rec.Surge == nil {
			rec.Surge = map[uint32]uint32{}
		}
		rec.Surge[slot.ID.Instance] = gang * gangSize(&j.Spec)
	}
	for _, gang := range plan.Restart {
		g := resmgr.GangID{Job: j.ID, Gang: gang}
		for _, t := range je.members(g) {
			if t == nil || isCold(t) {
				continue
			}
			if j.Spec.Type == model.JobStateful {
				t.SetPinnedHost("") // its volumes do not follow (allow-stateful)
			}
			e.pin(je, t, jm.To)
			jm.StartMoving(t)
		}
		e.restartGang(je, g, migration.ReasonMigrated, fmt.Sprintf("moving to cluster %s (migration %s)", jm.To, jm.M.ID), now)
		jm.TookDown(gang)
	}
	surgeOf := map[uint32]uint32{}
	for slot, inst := range rec.Surge {
		surgeOf[inst] = slot
	}
	for _, gang := range plan.DropSurge {
		if slot, ok := surgeOf[gang*gangSize(&j.Spec)]; ok && int(slot) < len(je.tasks) {
			e.dropSurge(je, je.tasks[slot], now)
		}
	}
	n := gangSize(&j.Spec)
	for _, gang := range plan.Moved {
		jm.Arrived(gang, sla.Gang(n, gang, uint32(len(je.members(resmgr.GangID{Job: j.ID, Gang: gang})))))
	}
}

// surgeSlot returns a task for a new surge instance, pinned to the target:
// an ended surge slot run again, else a new instance past the job's count.
func (e *Engine) surgeSlot(je *jobEntry, jm *migration.Job, now time.Time) *model.TaskRuntime {
	j := je.job
	for i := j.Spec.Instances; int(i) < len(je.tasks); i++ {
		if _, used := jm.Rec.Surge[i]; used {
			continue
		}
		t := je.tasks[i]
		if t == nil || isCold(t) || !t.State.IsTerminal() {
			continue
		}
		t.Goal, t.Failures, t.RetryAfter = model.TaskSucceeded, 0, time.Time{}
		t.Reason, t.Message = migration.ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.To, jm.M.ID)
		e.newRun(je, t, now)
		e.pin(je, t, jm.To)
		return t
	}
	i := uint32(len(je.tasks))
	t := e.newTask(j, i)
	je.reuseRemoved(t)
	t.Reason, t.Message = migration.ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.To, jm.M.ID)
	je.tasks = append(je.tasks, t)
	je.counts[model.TaskInitialized]++
	je.waiting = append(je.waiting, i)
	j.Status.TasksCreated = uint32(len(je.tasks))
	je.dirty, je.record = true, true
	e.markDirty(je, t)
	e.pin(je, t, jm.To)
	return t
}

// dropSurge stops a surge instance; its slot is reused or forgotten once
// it ended.
func (e *Engine) dropSurge(je *jobEntry, t *model.TaskRuntime, now time.Time) {
	if t == nil || isCold(t) || t.State.IsTerminal() || t.Goal == model.TaskKilled {
		return
	}
	t.Goal = model.TaskKilled
	t.Reason, t.Message = rollout.ReasonRemoved, "surge instance no longer needed"
	e.markDirty(je, t)
	e.killTask(je, t, je.killGrace(t), now)
}

// writeMigration stores a migration, taking the stored revision once if an
// earlier write whose answer was lost did land.
func (e *Engine) writeMigration(ctx context.Context, m *model.Migration) error {
	err := e.cfg.Store.WriteMigration(ctx, m)
	if errors.Is(err, store.ErrConflict) {
		if stored, gerr := e.cfg.Store.GetMigration(ctx, m.ID); gerr == nil {
			m.Revision = stored.Revision
			err = e.cfg.Store.WriteMigration(ctx, m)
		}
	}
	return err
}
