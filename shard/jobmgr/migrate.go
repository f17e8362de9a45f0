package jobmgr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
	"github.com/peloton-federated/peloton/shard/store"
)

// A migration moves the instances of jobs from the clusters they run on to
// one target cluster, a batch at a time, under each job's SLA: the rolling
// update's loop with the cluster as the thing that changes. Each pass,
// goalstate.MigrateStep decides for every job of every running migration
// from how its gangs stand; this shell applies the plan: it pins instances
// to the target (a must placement preference), starts surge instances
// (with surge), restarts stale instances, stops surge instances that are
// no longer needed, and keeps the report. See docs/migration.md.

// ReasonMigrated marks runs stopped to restart on another cluster.
const ReasonMigrated = "MIGRATED"

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

// jobMigration is a job's part in a running migration.
type jobMigration struct {
	m   *model.Migration
	rec *model.MigrationJob
	// to is where this phase moves instances: the target, or the cluster
	// they came from when rolling back.
	to string
	// restarted: gangs this phase took down and has not counted moved.
	restarted map[uint32]bool
	// failBase is each moving instance's failure count when it started
	// moving, failSeen the count last seen; pendingSince when a moving
	// gang was first seen without a host.
	failBase     map[uint32]uint32
	failSeen     map[uint32]uint32
	pendingSince map[uint32]time.Time
}

func newJobMigration(m *model.Migration, rec *model.MigrationJob) *jobMigration {
	jm := &jobMigration{m: m, rec: rec, to: m.To, restarted: map[uint32]bool{},
		failBase: map[uint32]uint32{}, failSeen: map[uint32]uint32{}, pendingSince: map[uint32]time.Time{}}
	if m.State == model.MigrationRollingBack {
		jm.to = rec.From
	}
	return jm
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
		done, msg := true, ""
		for i := range m.Jobs {
			rec := &m.Jobs[i]
			if rec.Done {
				continue
			}
			if e.migrateJob(m, rec, now) {
				e.migrations.dirty[id] = true
			}
			if !rec.Done {
				done = false
				if msg == "" && rec.Message != "" {
					msg = fmt.Sprintf("job %s: %s", rec.Job, rec.Message)
				}
			}
		}
		if done {
			moved := 0
			for i := range m.Jobs {
				moved += len(m.Jobs[i].Moved)
			}
			if m.State == model.MigrationRollingBack {
				m.State, msg = model.MigrationRolledBack, "every moved instance is back"
			} else {
				m.State, msg = model.MigrationSucceeded, fmt.Sprintf("%d instances moved to %s", moved, m.To)
			}
			m.CompletionTime = now
			e.log.Info("migration ended", "migration", id, "state", m.State, "message", msg)
		}
		if msg != before {
			m.Message = msg
			e.migrations.dirty[id] = true
		}
	}
}

// recordMark is what of a job's record a pass may change, to tell whether
// it must be written.
type recordMark struct {
	moved, moving, surge                        int
	inFlight, maxUnavail, failures, retries, in uint32
	done                                        bool
	message                                     string
}

func markOf(r *model.MigrationJob) recordMark {
	return recordMark{len(r.Moved), len(r.Moving), len(r.Surge), r.InFlight, r.MaxUnavailable, r.Failures, r.Retries, r.Instances, r.Done, r.Message}
}

// migrateJob runs one step of a job's migration and reports whether its
// record changed.
func (e *Engine) migrateJob(m *model.Migration, rec *model.MigrationJob, now time.Time) bool {
	before := markOf(rec)
	je := e.jobs[rec.Job]
	if je == nil || je.evicted || je.job.Status.State.IsTerminal() || je.job.Status.Killed {
		rec.Done, rec.InFlight, rec.Message = true, 0, "the job ended"
		if je != nil {
			e.endJobMigration(je, now)
		}
		return markOf(rec) != before
	}
	jm := je.migration
	if jm == nil || jm.rec != rec {
		jm = newJobMigration(m, rec)
		je.migration = jm
	}
	in := e.migrateInput(je, jm, now)
	plan := goalstate.MigrateStep(in)
	e.applyMigratePlan(je, jm, plan, now)
	rec.InFlight = plan.InFlight
	if m.State == model.MigrationMigrating {
		rec.Instances = plan.Total
	}
	// A stopped migration keeps saying why until it is resumed.
	if !(m.Paused && strings.HasPrefix(rec.Message, "stopped: ") && (plan.Waiting == "" || plan.Waiting == "paused")) {
		rec.Message = plan.Waiting
	}
	if m.Paused && rec.Message == "" && !plan.Complete {
		rec.Message = "paused"
	}
	if plan.Stuck != "" && !m.Paused {
		m.Paused = true
		e.log.Warn("migration stopped", "migration", m.ID, "job", rec.Job, "reason", plan.Stuck)
	}
	if plan.Complete {
		rec.Done, rec.Message = true, fmt.Sprintf("%d instances on %s", plan.Done, jm.to)
		e.endJobMigration(je, now)
		e.forgetRemoved(je) // the ended surge instances
	}
	return markOf(rec) != before
}

// endJobMigration takes the job out of its migration: surge instances
// still there go (the removal of instances beyond the job's count takes
// them), and the ended ones are forgotten.
func (e *Engine) endJobMigration(je *jobEntry, now time.Time) {
	jm := je.migration
	if jm == nil {
		return
	}
	for slot := range jm.rec.Surge {
		if int(slot) < len(je.tasks) {
			e.dropSurge(je, je.tasks[slot], now)
		}
	}
	clear(jm.rec.Surge)
	jm.rec.Moving = nil
	for i, p := range je.prefer {
		if p.must {
			delete(je.prefer, i)
		}
	}
	je.migration = nil
	e.visit(je)
}

// surgeState is how the surge instance in slot stands.
func (e *Engine) surgeState(je *jobEntry, jm *jobMigration, slot uint32) goalstate.SurgeState {
	if int(slot) >= len(je.tasks) {
		return goalstate.SurgeNone
	}
	t := je.tasks[slot]
	switch {
	case t == nil || isCold(t) || t.State.IsTerminal():
		return goalstate.SurgeNone
	case t.Goal == model.TaskKilled:
		return goalstate.SurgeStopping
	case sla.Available(t) && t.Cluster == jm.to:
		return goalstate.SurgeAvailable
	}
	return goalstate.SurgeStarting
}

// migrateInput describes the job's gangs to goalstate.MigrateStep.
func (e *Engine) migrateInput(je *jobEntry, jm *jobMigration, now time.Time) goalstate.MigrateInput {
	j := je.job
	n := gangSize(&j.Spec)
	surgeOf := e.liveSurges(je, jm)
	in := goalstate.MigrateInput{
		Batch:   e.migrationBatch(jm.m, &j.Spec),
		Surge:   jm.m.Surge && j.Spec.LongRunning() && n == 1,
		Restart: j.Spec.LongRunning() || jm.m.MoveRunning,
		// A batch task counts moved once placed on the target: it may
		// end before a pass sees it run.
		SettleOnPlace: !j.Spec.LongRunning(),
		Paused:        jm.m.Paused,
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
		if mg.Move != goalstate.NotMoved {
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
func (e *Engine) liveSurges(je *jobEntry, jm *jobMigration) map[uint32]uint32 {
	surgeOf := map[uint32]uint32{}
	for slot, inst := range jm.rec.Surge {
		if e.surgeState(je, jm, slot) == goalstate.SurgeNone {
			delete(jm.rec.Surge, slot)
			continue
		}
		surgeOf[inst] = slot
	}
	return surgeOf
}

// migrateGang describes gang g, of members ms, to the migration step. It
// reports whether the step concerns the gang: going forward every gang,
// rolling back only those the migration moved.
func (e *Engine) migrateGang(je *jobEntry, jm *jobMigration, g resmgr.GangID, ms []*model.TaskRuntime) (goalstate.MigrateGang, bool) {
	back := jm.m.State == model.MigrationRollingBack
	first := g.Gang * gangSize(&je.job.Spec)
	mg := goalstate.MigrateGang{Gang: g.Gang, Size: uint32(len(ms)), Restarting: e.restarting[g] != nil, Available: true}
	moving, subject := false, !back
	var w where
	for k, t := range ms {
		i := first + uint32(k) // a cold task's marker has no id
		if _, ok := slices.BinarySearch(jm.rec.Moving, i); ok {
			moving, subject = true, true
		}
		if back && jm.rec.IsMoved(i) {
			subject = true
		}
		w.add(t, jm.to)
		if liveMember(t) && !sla.Available(t) {
			mg.Available = false
		}
	}
	mg.Place = w.place()
	switch {
	case moving && jm.restarted[g.Gang]:
		mg.Move = goalstate.Restarted
	case moving:
		mg.Move = goalstate.Pinned
	}
	return mg, subject
}

// where gathers where a gang's members hold hosts, against a target
// cluster.
type where struct {
	live                       int
	elsewhere, waiting, onHost bool
}

// liveMember reports whether t may run again.
func liveMember(t *model.TaskRuntime) bool {
	return t != nil && !isCold(t) && !t.State.IsTerminal()
}

// add counts member t.
func (w *where) add(t *model.TaskRuntime, target string) {
	if !liveMember(t) {
		return
	}
	w.live++
	switch {
	case !t.State.HoldsResources():
		w.waiting = true
	case t.Cluster != target:
		w.elsewhere, w.onHost = true, true
	default:
		w.onHost = true
	}
}

// place is where the gang stands.
func (w *where) place() goalstate.GangPlace {
	switch {
	case w.live == 0:
		return goalstate.Finished
	case w.elsewhere:
		return goalstate.PlacedElsewhere
	case !w.onHost:
		return goalstate.Unplaced
	case w.waiting:
		return goalstate.PlacedPartly
	}
	return goalstate.PlacedOnTarget
}

// migrationSLA gives a long-running job's migration step its SLA, and
// records the most instances ever unavailable at once for the report.
func (e *Engine) migrationSLA(je *jobEntry, jm *jobMigration, in *goalstate.MigrateInput) {
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
	jm.rec.MaxUnavailable = max(jm.rec.MaxUnavailable, down)
	jm.rec.SLAMaxUnavailable = limit
}

// migrationView is the SLA's view of the job's own instances, with how
// many surge instances stand in for instances that go down: an available
// surge instance makes room for one more disruption.
func (e *Engine) migrationView(je *jobEntry, jm *jobMigration) ([]sla.Instance, uint32) {
	view := e.slaView(je)
	n := je.job.Spec.Instances
	kept := view[:0]
	for _, v := range view {
		if v.ID < n {
			kept = append(kept, v)
		}
	}
	var extra uint32
	for slot := range jm.rec.Surge {
		if e.surgeState(je, jm, slot) == goalstate.SurgeAvailable {
			extra++
		}
	}
	return kept, extra
}

// watchMoving keeps a moving gang pinned to the target and counts its
// failures there (for the report, and to stop a migration that cannot
// progress) and how long it has waited for a host.
func (e *Engine) watchMoving(je *jobEntry, jm *jobMigration, ms []*model.TaskRuntime, mg *goalstate.MigrateGang, now time.Time) {
	rec := jm.rec
	for _, t := range ms {
		if t == nil || isCold(t) {
			continue
		}
		i := t.ID.Instance
		base, ok := jm.failBase[i]
		if !ok {
			base = t.Failures
			jm.failBase[i], jm.failSeen[i] = base, base
		}
		if seen := jm.failSeen[i]; t.Failures > seen {
			d := t.Failures - seen
			rec.Failures += d
			if !t.State.IsTerminal() {
				rec.Retries += d
			}
			jm.failSeen[i] = t.Failures
		}
		if t.Failures > base {
			mg.Failures += t.Failures - base
			mg.Why = t.Message
		}
		if !t.State.HoldsResources() && !t.State.IsTerminal() {
			e.pin(je, t, jm.to)
			if mg.Why == "" {
				mg.Why = t.Message
			}
		}
	}
	if mg.Place == goalstate.Unplaced {
		since, ok := jm.pendingSince[mg.Gang]
		if !ok {
			jm.pendingSince[mg.Gang] = now
		} else {
			mg.PendingFor = now.Sub(since)
		}
	} else {
		delete(jm.pendingSince, mg.Gang)
	}
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
func (e *Engine) applyMigratePlan(je *jobEntry, jm *jobMigration, plan goalstate.MigratePlan, now time.Time) {
	rec := jm.rec
	j := je.job
	for _, gang := range plan.Pin {
		for _, t := range je.members(resmgr.GangID{Job: j.ID, Gang: gang}) {
			if t == nil || isCold(t) || t.State.IsTerminal() {
				continue
			}
			e.pin(je, t, jm.to)
			rec.Moving = addSorted(rec.Moving, t.ID.Instance)
			jm.failBase[t.ID.Instance], jm.failSeen[t.ID.Instance] = t.Failures, t.Failures
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
			e.pin(je, t, jm.to)
			rec.Moving = addSorted(rec.Moving, t.ID.Instance)
			jm.failBase[t.ID.Instance], jm.failSeen[t.ID.Instance] = t.Failures, t.Failures
		}
		e.restartGang(je, g, ReasonMigrated, fmt.Sprintf("moving to cluster %s (migration %s)", jm.to, jm.m.ID), now)
		jm.restarted[gang] = true
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
	for _, gang := range plan.Moved {
		for _, t := range je.members(resmgr.GangID{Job: j.ID, Gang: gang}) {
			if t == nil {
				continue
			}
			i := t.ID.Instance
			rec.Moving = removeSorted(rec.Moving, i)
			delete(jm.failBase, i)
			delete(jm.failSeen, i)
			if jm.m.State == model.MigrationRollingBack {
				rec.RemoveMoved(i)
			} else {
				rec.AddMoved(i)
			}
		}
		delete(jm.restarted, gang)
		delete(jm.pendingSince, gang)
	}
}

// surgeSlot returns a task for a new surge instance, pinned to the target:
// an ended surge slot run again, else a new instance past the job's count.
func (e *Engine) surgeSlot(je *jobEntry, jm *jobMigration, now time.Time) *model.TaskRuntime {
	j := je.job
	for i := j.Spec.Instances; int(i) < len(je.tasks); i++ {
		if _, used := jm.rec.Surge[i]; used {
			continue
		}
		t := je.tasks[i]
		if t == nil || isCold(t) || !t.State.IsTerminal() {
			continue
		}
		t.Goal, t.Failures, t.RetryAfter = model.TaskSucceeded, 0, time.Time{}
		t.Reason, t.Message = ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.to, jm.m.ID)
		e.newRun(je, t, now)
		e.pin(je, t, jm.to)
		return t
	}
	i := uint32(len(je.tasks))
	t := e.newTask(j, i)
	je.reuseRemoved(t)
	t.Reason, t.Message = ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.to, jm.m.ID)
	je.tasks = append(je.tasks, t)
	je.counts[model.TaskInitialized]++
	je.waiting = append(je.waiting, i)
	j.Status.TasksCreated = uint32(len(je.tasks))
	je.dirty, je.record = true, true
	e.markDirty(je, t)
	e.pin(je, t, jm.to)
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

func addSorted(xs []uint32, x uint32) []uint32 {
	at, ok := slices.BinarySearch(xs, x)
	if ok {
		return xs
	}
	return slices.Insert(xs, at, x)
}

func removeSorted(xs []uint32, x uint32) []uint32 {
	if at, ok := slices.BinarySearch(xs, x); ok {
		return slices.Delete(xs, at, at+1)
	}
	return xs
}
