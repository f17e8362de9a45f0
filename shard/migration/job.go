package migration

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// ReasonMigrated marks runs stopped to restart on another cluster.
const ReasonMigrated = "MIGRATED"

// Job is one job's part in a running migration, kept beside the job: the
// migration and the job's record in it, and the books a step is described
// from.
type Job struct {
	M   *model.Migration
	Rec *model.MigrationJob
	// To is where this phase moves instances: the target, or the cluster
	// they came from when rolling back.
	To string
	// restarted: gangs this phase took down and has not counted moved.
	restarted map[uint32]bool
	// failBase is each moving instance's failure count when it started
	// moving, failSeen the count last seen; pendingSince when a moving
	// gang was first seen without a host.
	failBase     map[uint32]uint32
	failSeen     map[uint32]uint32
	pendingSince map[uint32]time.Time
}

// NewJob is a job's part in migration m, whose record of the job is rec.
func NewJob(m *model.Migration, rec *model.MigrationJob) *Job {
	j := &Job{M: m, Rec: rec, To: m.To, restarted: map[uint32]bool{},
		failBase: map[uint32]uint32{}, failSeen: map[uint32]uint32{}, pendingSince: map[uint32]time.Time{}}
	if m.State == model.MigrationRollingBack {
		j.To = rec.From
	}
	return j
}

// RollingBack reports whether this phase moves instances back.
func (j *Job) RollingBack() bool { return j.M.State == model.MigrationRollingBack }

// Concerns reports whether the step concerns instance i: going forward
// every instance, rolling back those the migration moved or is moving.
func (j *Job) Concerns(i uint32) bool {
	return !j.RollingBack() || j.IsMoving(i) || j.Rec.IsMoved(i)
}

// IsMoving reports whether instance i is being moved.
func (j *Job) IsMoving(i uint32) bool {
	_, ok := slices.BinarySearch(j.Rec.Moving, i)
	return ok
}

// Move says what the migration did to a gang with a moving member.
func (j *Job) Move(gang uint32) GangMove {
	if j.restarted[gang] {
		return Restarted
	}
	return Pinned
}

// StartMoving books instance t as moving to the target from now on: its
// failures there count from its count now.
func (j *Job) StartMoving(t *model.TaskRuntime) {
	i := t.ID.Instance
	j.Rec.Moving = addSorted(j.Rec.Moving, i)
	j.failBase[i], j.failSeen[i] = t.Failures, t.Failures
}

// TookDown books a gang this phase restarts on the target.
func (j *Job) TookDown(gang uint32) { j.restarted[gang] = true }

// Arrived books a gang, of instances, that is on the target now (or back,
// rolling back): its instances are moved (or no longer).
func (j *Job) Arrived(gang uint32, instances []uint32) {
	for _, i := range instances {
		j.Rec.Moving = removeSorted(j.Rec.Moving, i)
		delete(j.failBase, i)
		delete(j.failSeen, i)
		if j.RollingBack() {
			j.Rec.RemoveMoved(i)
		} else {
			j.Rec.AddMoved(i)
		}
	}
	delete(j.restarted, gang)
	delete(j.pendingSince, gang)
}

// Watch counts the failures of a moving gang's members since they started
// moving (into the record, and into g for the step) and how long the gang
// has waited for a host on the target.
func (j *Job) Watch(g *Gang, members []*model.TaskRuntime, now time.Time) {
	for _, t := range members {
		if t == nil {
			continue
		}
		i := t.ID.Instance
		base, ok := j.failBase[i]
		if !ok {
			base = t.Failures
			j.failBase[i], j.failSeen[i] = base, base
		}
		if seen := j.failSeen[i]; t.Failures > seen {
			d := t.Failures - seen
			j.Rec.Failures += d
			if !t.State.IsTerminal() {
				j.Rec.Retries += d
			}
			j.failSeen[i] = t.Failures
		}
		if t.Failures > base {
			g.Failures += t.Failures - base
			g.Why = t.Message
		}
		if g.Why == "" && !t.State.HoldsResources() && !t.State.IsTerminal() {
			g.Why = t.Message
		}
	}
	if g.Place != Unplaced {
		delete(j.pendingSince, g.Gang)
		return
	}
	if since, ok := j.pendingSince[g.Gang]; ok {
		g.PendingFor = now.Sub(since)
	} else {
		j.pendingSince[g.Gang] = now
	}
}

// Resumed starts the books afresh when an operator resumes a stopped
// migration: failures count from now, and waiting for a host too.
func (j *Job) Resumed() {
	clear(j.pendingSince)
	for k, v := range j.failSeen {
		j.failBase[k] = v
	}
}

// Report keeps the job's record in line with a step's plan. It reports
// whether the plan stopped the migration (it pauses it): the caller says
// so. A complete job is done.
func (j *Job) Report(p Plan) (stopped bool) {
	m, rec := j.M, j.Rec
	rec.InFlight = p.InFlight
	if m.State == model.MigrationMigrating {
		rec.Instances = p.Total
	}
	// A stopped migration keeps saying why until it is resumed.
	if !(m.Paused && strings.HasPrefix(rec.Message, "stopped: ") && (p.Waiting == "" || p.Waiting == "paused")) {
		rec.Message = p.Waiting
	}
	if m.Paused && rec.Message == "" && !p.Complete {
		rec.Message = "paused"
	}
	if p.Stuck != "" && !m.Paused {
		m.Paused, stopped = true, true
	}
	if p.Complete {
		rec.Done, rec.Message = true, fmt.Sprintf("%d instances on %s", p.Done, j.To)
	}
	return stopped
}

// Mark is what of a job's record a pass may change: two marks differ when
// the record must be written.
type Mark struct {
	moved, moving, surge                        int
	inFlight, maxUnavail, failures, retries, in uint32
	done                                        bool
	message                                     string
}

// MarkOf is the record's mark now.
func MarkOf(r *model.MigrationJob) Mark {
	return Mark{len(r.Moved), len(r.Moving), len(r.Surge), r.InFlight, r.MaxUnavailable, r.Failures, r.Retries, r.Instances, r.Done, r.Message}
}

// Summarize sets a migration's message after a pass stepped its jobs, and
// ends it when every job is done: succeeded, or rolled back. It reports
// whether the migration ended.
func Summarize(m *model.Migration, now time.Time) bool {
	done, msg := true, ""
	for i := range m.Jobs {
		rec := &m.Jobs[i]
		if rec.Done {
			continue
		}
		done = false
		if msg == "" && rec.Message != "" {
			msg = fmt.Sprintf("job %s: %s", rec.Job, rec.Message)
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
	}
	m.Message = msg
	return done
}

func addSorted(xs []uint32, x uint32) []uint32 {
	at, ok := slices.BinarySearch(xs, x)
	if ok {
		return xs
	}
	return slices.Insert(xs, at, x)
}

func removeSorted(xs []uint32, x uint32) []uint32 {
	at, ok := slices.BinarySearch(xs, x)
	if !ok {
		return xs
	}
	return slices.Delete(xs, at, at+1)
}
