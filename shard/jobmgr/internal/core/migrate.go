package core

import (
	"cmp"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/migration"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/peloton-federated/peloton/shard/rollout"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Defaults of the migration shell.
const (
	// migrationMaxFailures is how many failed runs one instance may have on
	// the target before its migration stops.
	migrationMaxFailures = 3
	// defaultMigrationStall is how long a moved instance may wait for a
	// host on the target before its migration stops.
	defaultMigrationStall = 2 * time.Minute
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
	Running map[model.MigrationID]*model.Migration
	Dirty   map[model.MigrationID]bool
	// Jobs holds each job's part in a running migration, by job.
	Jobs map[model.JobID]*migration.Job
	// StallAfter overrides DefaultMigrationStall (tests).
	StallAfter time.Duration
}

// migrateStep runs one step of every running migration.
func (b *migrationBook) migrateStep(e *State, now time.Time) {
	if len(b.Running) == 0 {
		return
	}
	ids := make([]model.MigrationID, 0, len(b.Running))
	for id := range b.Running {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		m := b.Running[id]
		if m.State.IsTerminal() {
			continue
		}
		before := m.Message
		for i := range m.Jobs {
			if rec := &m.Jobs[i]; !rec.Done && b.migrateJob(e, m, rec, now) {
				b.Dirty[id] = true
			}
		}
		if migration.Summarize(m, now) {
			e.Log.Info("migration ended", "migration", id, "state", m.State, "message", m.Message)
		}
		if m.Message != before {
			b.Dirty[id] = true
		}
	}
}

// migrateJob runs one step of a job's migration and reports whether its
// record changed.
func (b *migrationBook) migrateJob(e *State, m *model.Migration, rec *model.MigrationJob, now time.Time) bool {
	before := migration.MarkOf(rec)
	je := e.Jobs[rec.Job]
	if je == nil || je.Evicted || je.Job.Status.State.IsTerminal() || je.Job.Status.Killed {
		rec.Done, rec.InFlight, rec.Message = true, 0, "the job ended"
		if je != nil {
			b.settleEnded(e, je, rec, now)
			b.EndJobMigration(e, je, now)
		}
		delete(b.Jobs, rec.Job)
		return migration.MarkOf(rec) != before
	}
	jm := b.Jobs[rec.Job]
	if jm == nil || jm.Rec != rec {
		jm = migration.NewJob(m, rec)
		b.Jobs[rec.Job] = jm
	}
	plan := migration.Step(b.migrateInput(e, je, jm, now))
	b.applyMigratePlan(e, je, jm, plan, now)
	if jm.Report(plan) {
		e.Log.Warn("migration stopped", "migration", m.ID, "job", rec.Job, "reason", plan.Stuck)
	}
	if plan.Complete {
		b.EndJobMigration(e, je, now)
		e.forgetRemoved(je) // the ended surge instances
	}
	return migration.MarkOf(rec) != before
}

// EndJobMigration takes the job out of its migration: surge instances
// still there go (the removal of instances beyond the job's count takes
// them), and the ended ones are forgotten.
func (b *migrationBook) EndJobMigration(e *State, je *Job, now time.Time) {
	jm := b.Jobs[je.Job.ID]
	if jm == nil {
		return
	}
	for slot := range jm.Rec.Surge {
		if int(slot) < len(je.Tasks) {
			b.dropSurge(e, je, je.Tasks[slot], now)
		}
	}
	clear(jm.Rec.Surge)
	jm.Rec.Moving = nil
	for i, p := range je.prefer {
		if p.must {
			delete(je.prefer, i)
		}
	}
	delete(b.Jobs, je.Job.ID)
	e.Visit(je)
}

// surgeState is how the surge instance in slot stands.
func (b *migrationBook) surgeState(je *Job, jm *migration.Job, slot uint32) migration.SurgeState {
	if int(slot) >= len(je.Tasks) {
		return migration.SurgeNone
	}
	t := je.Tasks[slot]
	switch {
	case t == nil || IsCold(t) || t.State.IsTerminal():
		return migration.SurgeNone
	case t.Goal == model.TaskKilled:
		return migration.SurgeStopping
	case sla.Available(t) && t.Cluster == jm.To:
		return migration.SurgeAvailable
	}
	return migration.SurgeStarting
}

// migrateInput describes the job's gangs to migration.Step.
func (b *migrationBook) migrateInput(e *State, je *Job, jm *migration.Job, now time.Time) migration.Input {
	j := je.Job
	n := GangSize(&j.Spec)
	surgeOf := b.liveSurges(je, jm)
	in := migration.Input{
		Batch:   b.migrationBatch(jm.M, &j.Spec),
		Surge:   jm.M.Surge && j.Spec.LongRunning() && n == 1,
		Restart: j.Spec.LongRunning() || jm.M.MoveRunning,
		// A batch task counts moved once placed on the target: it may
		// end before a pass sees it run.
		SettleOnPlace: !j.Spec.LongRunning(),
		Paused:        jm.M.Paused,
		MaxFailures:   migrationMaxFailures,
		StallAfter:    cmp.Or(b.StallAfter, defaultMigrationStall),
	}
	for first := uint32(0); first < j.Spec.Instances && int(first) < len(je.Tasks); first += n {
		g := GangOf(je, first)
		ms := je.members(g)
		if ms == nil {
			continue
		}
		mg, subject := b.migrateGang(e, je, jm, g, ms)
		if !subject {
			continue
		}
		if slot, ok := surgeOf[first]; ok {
			mg.Surge = b.surgeState(je, jm, slot)
		}
		if mg.Move != migration.NotMoved {
			b.watchMoving(je, jm, ms, &mg, now)
		}
		in.Gangs = append(in.Gangs, mg)
	}
	if j.Spec.LongRunning() {
		b.migrationSLA(e, je, jm, &in)
	}
	return in
}

// liveSurges maps each instance with a surge instance to the surge's
// slot; surge instances that ended leave their pair.
func (b *migrationBook) liveSurges(je *Job, jm *migration.Job) map[uint32]uint32 {
	surgeOf := map[uint32]uint32{}
	for slot, inst := range jm.Rec.Surge {
		if b.surgeState(je, jm, slot) == migration.SurgeNone {
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
func (b *migrationBook) migrateGang(e *State, je *Job, jm *migration.Job, g resmgr.GangID, ms []*model.TaskRuntime) (migration.Gang, bool) {
	first := g.Gang * GangSize(&je.Job.Spec)
	mg := migration.Gang{Gang: g.Gang, Size: uint32(len(ms)), Restarting: e.Queue.Restarting[g] != nil, Available: true}
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
	return t != nil && !IsCold(t) && !t.State.IsTerminal()
}

// migrationSLA gives a long-running job's migration step its SLA, and
// records the most instances ever unavailable at once for the report.
func (b *migrationBook) migrationSLA(e *State, je *Job, jm *migration.Job, in *migration.Input) {
	spec := &je.Job.Spec
	limit := SLALimit(spec)
	view, extra := b.migrationView(e, je, jm)
	in.SLA, in.GangSize = &sla.Job{Limit: limit + extra, Instances: view}, GangSize(spec)
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
func (b *migrationBook) migrationView(e *State, je *Job, jm *migration.Job) ([]sla.Instance, uint32) {
	view := disruptions{e}.slaView(je)
	n := je.Job.Spec.Instances
	kept := view[:0]
	for _, v := range view {
		if v.ID < n {
			kept = append(kept, v)
		}
	}
	var extra uint32
	for slot := range jm.Rec.Surge {
		if b.surgeState(je, jm, slot) == migration.SurgeAvailable {
			extra++
		}
	}
	return kept, extra
}

// watchMoving keeps a moving gang pinned to the target and has the
// migration count its failures there and how long it waited for a host.
func (b *migrationBook) watchMoving(je *Job, jm *migration.Job, ms []*model.TaskRuntime, mg *migration.Gang, now time.Time) {
	warm := make([]*model.TaskRuntime, 0, len(ms))
	for _, t := range ms {
		if t == nil || IsCold(t) {
			continue
		}
		warm = append(warm, t)
		if !t.State.HoldsResources() && !t.State.IsTerminal() {
			b.pin(je, t, jm.To)
		}
	}
	jm.Watch(mg, warm, now)
}

// pin makes a task's next placement go to cluster only.
func (b *migrationBook) pin(je *Job, t *model.TaskRuntime, cluster string) {
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
func (b *migrationBook) migrationBatch(m *model.Migration, spec *model.JobSpec) uint32 {
	if m.BatchSize > 0 {
		return m.BatchSize
	}
	if spec.LongRunning() {
		return max(SLALimit(spec), 1)
	}
	return 0
}

// applyMigratePlan carries out one step's plan for a job.
func (b *migrationBook) applyMigratePlan(e *State, je *Job, jm *migration.Job, plan migration.Plan, now time.Time) {
	j := je.Job
	for _, gang := range plan.Pin {
		b.pinGang(je, jm, gang, false)
	}
	for _, gang := range plan.StartSurge {
		slot := b.surgeSlot(e, je, jm, now)
		if jm.Rec.Surge == nil {
			jm.Rec.Surge = map[uint32]uint32{}
		}
		jm.Rec.Surge[slot.ID.Instance] = gang * GangSize(&j.Spec)
	}
	for _, gang := range plan.Restart {
		b.pinGang(je, jm, gang, true)
		e.Queue.restartGang(e, je, resmgr.GangID{Job: j.ID, Gang: gang}, migration.ReasonMigrated, fmt.Sprintf("moving to cluster %s (migration %s)", jm.To, jm.M.ID), now)
		jm.TookDown(gang)
	}
	b.dropSurges(e, je, jm, plan.DropSurge, now)
	b.arrived(je, jm, plan.Moved)
}

// arrived counts the gangs given moved to the target.
func (b *migrationBook) arrived(je *Job, jm *migration.Job, gangs []uint32) {
	n := GangSize(&je.Job.Spec)
	for _, gang := range gangs {
		jm.Arrived(gang, sla.Gang(n, gang, uint32(len(je.members(resmgr.GangID{Job: je.Job.ID, Gang: gang})))))
	}
}

// settleEnded counts moved the gangs of a job that ended while they were
// moving and ran to their end on the target: a batch job's last tasks may
// be placed and end between two steps. Nothing else of the step is done:
// the job is over.
func (b *migrationBook) settleEnded(e *State, je *Job, rec *model.MigrationJob, now time.Time) {
	jm := b.Jobs[rec.Job]
	if jm == nil || jm.Rec != rec || je.Evicted || !je.Job.Status.State.IsTerminal() {
		return
	}
	b.arrived(je, jm, migration.Step(b.migrateInput(e, je, jm, now)).Moved)
}

// pinGang pins a gang's members to the migration's target and marks them
// moving: those that run, or every one when the gang is restarted (a
// stateful job's instance then leaves its pinned host, since its volumes
// do not follow).
func (b *migrationBook) pinGang(je *Job, jm *migration.Job, gang uint32, restart bool) {
	for _, t := range je.members(resmgr.GangID{Job: je.Job.ID, Gang: gang}) {
		if t == nil || IsCold(t) || (!restart && t.State.IsTerminal()) {
			continue
		}
		if restart && je.Job.Spec.Type == model.JobStateful {
			t.SetPinnedHost("") // allow-stateful
		}
		b.pin(je, t, jm.To)
		jm.StartMoving(t)
	}
}

// dropSurges ends the surge instances of the gangs given.
func (b *migrationBook) dropSurges(e *State, je *Job, jm *migration.Job, gangs []uint32, now time.Time) {
	surgeOf := map[uint32]uint32{}
	for slot, inst := range jm.Rec.Surge {
		surgeOf[inst] = slot
	}
	for _, gang := range gangs {
		if slot, ok := surgeOf[gang*GangSize(&je.Job.Spec)]; ok && int(slot) < len(je.Tasks) {
			b.dropSurge(e, je, je.Tasks[slot], now)
		}
	}
}

// surgeSlot returns a task for a new surge instance, pinned to the target:
// an ended surge slot run again, else a new instance past the job's count.
func (b *migrationBook) surgeSlot(e *State, je *Job, jm *migration.Job, now time.Time) *model.TaskRuntime {
	j := je.Job
	for i := j.Spec.Instances; int(i) < len(je.Tasks); i++ {
		if _, used := jm.Rec.Surge[i]; used {
			continue
		}
		t := je.Tasks[i]
		if t == nil || IsCold(t) || !t.State.IsTerminal() {
			continue
		}
		t.Goal, t.Failures, t.RetryAfter = model.TaskSucceeded, 0, time.Time{}
		t.Reason, t.Message = migration.ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.To, jm.M.ID)
		runs{e}.newRun(je, t, now)
		b.pin(je, t, jm.To)
		return t
	}
	i := uint32(len(je.Tasks))
	t := e.newTask(j, i)
	je.reuseRemoved(t)
	t.Reason, t.Message = migration.ReasonMigrated, fmt.Sprintf("surge instance on %s (migration %s)", jm.To, jm.M.ID)
	je.Tasks = append(je.Tasks, t)
	je.Counts[model.TaskInitialized]++
	je.waiting = append(je.waiting, i)
	j.Status.TasksCreated = uint32(len(je.Tasks))
	je.Dirty, je.Record = true, true
	e.markDirty(je, t)
	b.pin(je, t, jm.To)
	return t
}

// dropSurge stops a surge instance; its slot is reused or forgotten once
// it ended.
func (b *migrationBook) dropSurge(e *State, je *Job, t *model.TaskRuntime, now time.Time) {
	if t == nil || IsCold(t) || t.State.IsTerminal() || t.Goal == model.TaskKilled {
		return
	}
	t.Goal = model.TaskKilled
	t.Reason, t.Message = rollout.ReasonRemoved, "surge instance no longer needed"
	e.markDirty(je, t)
	runs{e}.killTask(je, t, je.killGrace(t), now)
}
