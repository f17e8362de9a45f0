package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// ReasonUpdated and ReasonRemoved mark the runs an update restarted, and
// the runs of instances it removed (the job's instance count went down).
const (
	ReasonUpdated = "UPDATED"
	ReasonRemoved = "REMOVED"
)

// Job is one job's rolling update as this package keeps it, beside the
// job: the update's record and the books a step is described from.
type Job struct {
	// Update is the job's running update, or its last one, ended, until
	// its record is written.
	Update *model.Update
	// Dirty says Update's record must be written.
	Dirty bool
	// updating holds the gangs the update restarted and has not counted
	// done since.
	updating map[uint32]bool
	// failBase is each instance's failure count when the update restarted
	// it; an instance whose count grew since failed on the target, and is
	// in failed.
	failBase map[uint32]uint32
	failed   map[uint32]bool
	// reason says why the update is where it is (a rollback's cause).
	reason string
	// healthySince is when each gang the update restarted was first seen
	// available (for the update's MinHealthy).
	healthySince map[uint32]time.Time
	// canariesReady is when every canary was first seen on the new config
	// and available (for AutoPromoteAfter); zero while one is not.
	canariesReady time.Time
}

// Start keeps a new running update, its record to be written.
func Start(u *model.Update) *Job {
	j := &Job{Update: u, Dirty: true}
	j.resetBooks()
	return j
}

// Recover takes up a running update after a restart, from the job's
// tasks: the gangs it restarted that do not run again yet are in flight.
// A rollback's reason is the first part of its message.
func Recover(u *model.Update, tasks []*model.TaskRuntime, gangSize uint32) *Job {
	j := &Job{Update: u}
	j.resetBooks()
	if u.State == model.UpdateRollingBack {
		j.reason, _, _ = strings.Cut(u.Message, "; ")
	}
	target := j.Target()
	for _, t := range tasks {
		if t != nil && t.ConfigVersion == target && t.Reason == ReasonUpdated && !t.State.IsTerminal() && t.State != model.TaskRunning {
			j.updating[t.ID.Instance/max(gangSize, 1)] = true
		}
	}
	return j
}

// Track counts the failures of instances the update starts rather than
// restarts (extra canaries, numbered first up to first+n), from their
// first run; instances tracked already keep their count.
func (j *Job) Track(first, n uint32) {
	for i := first; i < first+n; i++ {
		if _, ok := j.failBase[i]; !ok {
			j.failBase[i] = 0
		}
	}
}

func (j *Job) resetBooks() {
	j.updating, j.failBase, j.failed = map[uint32]bool{}, map[uint32]uint32{}, map[uint32]bool{}
	j.healthySince = map[uint32]time.Time{}
}

// Running reports whether j holds an update that has not ended.
func (j *Job) Running() bool {
	return j != nil && j.Update != nil && !j.Update.State.IsTerminal()
}

// Target is the config version the update moves instances to: forward
// its ToVersion, rolling back its FromVersion.
func (j *Job) Target() uint64 {
	if j.Update.State == model.UpdateRollingBack {
		return j.Update.FromVersion
	}
	return j.Update.ToVersion
}

// Configure fills in what the update says of every step: its batch,
// pause, MinHealthy and, rolling forward, its canary phase (a rollback
// moves every instance back without one).
func (j *Job) Configure(in *Input) {
	u := j.Update
	in.Batch, in.Paused, in.MinHealthy = u.BatchSize, u.Paused, u.MinHealthy
	if u.State == model.UpdateRollingForward {
		in.Canary, in.Promoted, in.CanaryExtra = u.Canary, u.Promoted, u.CanaryExtra
	}
}

// Instances is how many instances the job runs at a step of the update,
// given its target config's count: that many more while extra canaries
// wait for the promotion (numbered from the target's count up), else the
// target's. Promoted, or rolling back, the extra canaries are beyond it:
// they are stopped like the instances a lowered count removes.
func (j *Job) Instances(target uint32) uint32 {
	u := j.Update
	if u.CanaryExtra && u.State == model.UpdateRollingForward && !u.Promoted {
		return target + u.Canary
	}
	return target
}

// Describe fills in what the books know of gang g: whether the update
// restarted it and has not counted it done, and since when it has been
// available.
func (j *Job) Describe(g *Gang) {
	g.Updating = j.updating[g.Gang]
	g.HealthySince = j.healthySince[g.Gang]
}

// Settle books a plan's changes of availability: gangs seen available
// for the first time since their restart, gangs no longer available, and
// gangs done.
func (j *Job) Settle(p Plan, now time.Time) {
	for _, g := range p.StartHealthy {
		j.healthySince[g] = now
	}
	for _, g := range p.ClearHealthy {
		delete(j.healthySince, g)
	}
	for _, g := range p.Settled {
		delete(j.updating, g)
		delete(j.healthySince, g)
	}
}

// Restarted books a gang the update restarts now, with its members' runs
// as they stand: a member whose failure count grows from here failed on
// the target.
func (j *Job) Restarted(gang uint32, members []*model.TaskRuntime) {
	j.updating[gang] = true
	delete(j.healthySince, gang)
	for _, m := range members {
		j.failBase[m.ID.Instance] = m.Failures
	}
}

// Verdict is what the failures on the target make of an update.
type Verdict uint8

const (
	// GoOn: the update rolls on.
	GoOn Verdict = iota
	// Fail: too many instances failed; the update fails.
	Fail
	// RollBack: too many instances failed; the update rolls back.
	RollBack
)

// CountFailures counts the instances that failed on the target since the
// update restarted them (task gives an instance's run in memory, nil if
// none) and says what that makes of the update, with the reason.
func (j *Job) CountFailures(task func(instance uint32) *model.TaskRuntime) (Verdict, string) {
	u, target := j.Update, j.Target()
	for inst, base := range j.failBase {
		if j.failed[inst] {
			continue
		}
		if t := task(inst); t != nil && t.ConfigVersion == target && t.Failures > base {
			j.failed[inst] = true
		}
	}
	if n := uint32(len(j.failed)); u.State == model.UpdateRollingForward && n != u.InstancesFailed {
		u.InstancesFailed = n
		j.Dirty = true
	}
	if u.State != model.UpdateRollingForward || u.InstancesFailed <= u.MaxFailures {
		return GoOn, ""
	}
	why := fmt.Sprintf("%d instances failed on config %d (at most %d allowed)", u.InstancesFailed, u.ToVersion, u.MaxFailures)
	if !u.RollbackOnFailure {
		return Fail, why
	}
	return RollBack, why + "; rolling back"
}

// RollBack turns the update around, for why: it moves instances back to
// its FromVersion with the same batch size and SLA.
func (j *Job) RollBack(why string) {
	u := j.Update
	u.State, u.Message, u.Paused = model.UpdateRollingBack, why, false
	j.reason = why
	j.resetBooks()
	j.Dirty = true
}

// End ends the update in state st; it reports false when it had ended.
func (j *Job) End(st model.UpdateState, msg string, now time.Time) bool {
	u := j.Update
	if u == nil || u.State.IsTerminal() {
		return false
	}
	u.State, u.Message, u.CompletionTime = st, msg, now
	j.Dirty = true
	j.updating = map[uint32]bool{}
	return true
}

// Report keeps the update's record in line with a step's plan: why it
// waits, and how many instances are done and in flight of the job's
// instances.
func (j *Job) Report(p Plan, instances uint32) {
	u := j.Update
	msg := j.reason
	switch {
	case msg == "":
		msg = p.Waiting
	case p.Waiting != "":
		msg += "; " + p.Waiting
	}
	switch {
	case p.AwaitingPromotion && u.Promoted:
		msg = "promoted by " + u.PromotedBy
	case p.AwaitingPromotion:
		msg += j.promotionDue()
	}
	if msg != u.Message && !u.State.IsTerminal() {
		u.Message = msg
		j.Dirty = true
	}
	if p.Done != u.InstancesDone || instances != u.InstancesTotal || p.InFlight != u.InstancesInFlight {
		u.InstancesDone, u.InstancesTotal, u.InstancesInFlight = p.Done, instances, p.InFlight
		j.Dirty = true
	}
}

// Promote ends the canary phase of a running update, for who (an
// operator's identity); the rest of the instances then move.
func (j *Job) Promote(who string) error {
	u := j.Update
	switch {
	case u.State != model.UpdateRollingForward:
		return fmt.Errorf("update %s is %s: only an update rolling forward can be promoted", u.ID, u.State)
	case u.Canary == 0:
		return fmt.Errorf("update %s has no canaries to promote", u.ID)
	case u.Promoted:
		return fmt.Errorf("update %s was promoted already (by %s)", u.ID, u.PromotedBy)
	}
	u.Promoted, u.PromotedBy, u.Paused = true, who, false
	j.Dirty = true
	return nil
}

// AutoPromote promotes the update by itself once every canary has been on
// the new config and available for its AutoPromoteAfter, as the step's
// plan says; it reports whether it did. Call it before Report, which
// then says when the promotion is due.
func (j *Job) AutoPromote(p Plan, now time.Time) bool {
	u := j.Update
	if u.Promoted || u.AutoPromoteAfter <= 0 || u.State != model.UpdateRollingForward || !p.AwaitingPromotion {
		j.canariesReady = time.Time{}
		return false
	}
	if j.canariesReady.IsZero() {
		j.canariesReady = now
	}
	if now.Sub(j.canariesReady) < u.AutoPromoteAfter {
		return false
	}
	u.Promoted, u.PromotedBy = true, fmt.Sprintf("itself, every canary available for %s", u.AutoPromoteAfter)
	j.Dirty = true
	return true
}

// promotionDue says when a waiting update promotes itself, "" when it
// does not.
func (j *Job) promotionDue() string {
	if j.canariesReady.IsZero() {
		return ""
	}
	at := j.canariesReady.Add(j.Update.AutoPromoteAfter)
	return " (it promotes itself at " + at.UTC().Format(time.RFC3339) + ")"
}

// Outcome is how a complete update ends: rolled back, or succeeded.
func (j *Job) Outcome(p Plan) (model.UpdateState, string) {
	if j.Update.State == model.UpdateRollingBack {
		return model.UpdateRolledBack, fmt.Sprintf("%d instances back on config %d", p.Done, j.Target())
	}
	return model.UpdateSucceeded, fmt.Sprintf("%d instances on config %d", p.Done, j.Target())
}
