package rollout

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/sla"
)

// A rolling update moves a job's gangs onto a target config version a batch
// at a time. Step is one step of it: given how every gang stands, it
// says which gangs take the target config without a restart, which are
// restarted now, which removed gangs are stopped now, and how far the
// update is. The caller applies the plan and asks again on its next pass.

// Gang is one gang of a job as a rolling update sees it.
type Gang struct {
	// Gang is the gang's index; Size how many instances it has.
	Gang uint32
	Size uint32
	// Stale: a live member is on an older config than the target.
	// Queued: such a member was queued or runs, so it must be restarted
	// (a member that never left INITIALIZED just takes the new config).
	Stale  bool
	Queued bool
	// Settling: every live member is on the target, not all available.
	Settling bool
	// Restarting: a restart (kill, then new runs) is under way.
	Restarting bool
	// Updating: this update restarted the gang and has not counted it
	// done since.
	Updating bool
	// HealthySince is when the gang was first seen available after the
	// update restarted it (zero: not yet, or not since it last settled).
	HealthySince time.Time
	// Removed: the gang lies beyond the target's instance count. Stopping:
	// its members were told to stop; Ended: none of them runs any more.
	Removed  bool
	Stopping bool
	Ended    bool
}

// Input is everything one update step depends on.
type Input struct {
	Now time.Time
	// Gangs of the job, in instance order.
	Gangs []Gang
	// Instances is the target config's instance count.
	Instances uint32
	// Batch is how many instances may be in flight at once (0: all).
	Batch  uint32
	Paused bool
	// MinHealthy is how long a restarted gang must stay available before
	// it counts as done.
	MinHealthy time.Duration
	// SLA is the job as the SLA sees it (nil: no limit), and GangSize
	// how many instances a gang has (0: one), the last one possibly
	// fewer. A gang may be taken down only when SLA.Disrupt allows it,
	// asked of the step's own copy in the order the plan disrupts gangs.
	SLA      *sla.Job
	GangSize uint32
	// Canary is how many instances, the lowest first, move before the
	// others; until Promoted, only the gangs holding them are restarted
	// (under the batch and the SLA like any other) and the rest wait.
	Canary   uint32
	Promoted bool
	// CanaryExtra: the canaries are the highest Canary instances, extra
	// ones beside the job's (Instances counts them until the promotion),
	// rather than the lowest.
	CanaryExtra bool
}

// canaryPhase reports whether the step is in the update's canary phase.
func (in *Input) canaryPhase() bool { return in.Canary > 0 && !in.Promoted }

// isCanary reports whether gang g holds canary instances.
func (in *Input) isCanary(g Gang) bool {
	first := g.Gang * max(in.GangSize, 1)
	if in.CanaryExtra {
		return first >= in.Instances-min(in.Canary, in.Instances)
	}
	return first < in.Canary
}

// Plan is what Step decided.
type Plan struct {
	// Relabel: gangs that take the target config without a restart.
	Relabel []uint32
	// Restart: gangs to restart on the target config now.
	Restart []uint32
	// Remove: removed gangs to stop now, highest first.
	Remove []uint32
	// Settled: gangs the update restarted that are done now.
	Settled []uint32
	// StartHealthy: gangs seen available for the first time since their
	// restart (HealthySince becomes Now); ClearHealthy: gangs that are
	// no longer available (HealthySince is forgotten).
	StartHealthy []uint32
	ClearHealthy []uint32
	// Done and InFlight count instances.
	Done     uint32
	InFlight uint32
	// Waiting says why no more gangs were disrupted ("" when nothing
	// held the update back).
	Waiting string
	// In the canary phase: Canaries counts the canary instances, and
	// CanariesDone those on the target and available (for MinHealthy);
	// AwaitingPromotion says every canary is, and the update waits to be
	// promoted.
	Canaries, CanariesDone uint32
	AwaitingPromotion      bool
	// Complete: every instance is on the target and every removed gang
	// has ended.
	Complete bool
}

// Step plans one step of a rolling update. It is a pure function of
// its input.
func Step(in Input) Plan {
	var t tally
	for _, g := range in.Gangs {
		t.add(in, g)
	}
	p := &t.p
	todo, removals := t.todo, t.removals
	if in.canaryPhase() {
		todo, removals = p.holdForPromotion(in, todo, removals)
	}
	held := len(todo) < len(t.todo) || len(removals) < len(t.removals) // for the promotion
	switch {
	case !in.Paused:
		p.disrupt(in, removals, todo)
	case len(todo) > 0 || len(removals) > 0:
		p.Waiting = "paused"
	}
	switch {
	case p.Waiting != "":
	case p.AwaitingPromotion:
		p.Waiting = fmt.Sprintf("canary: %d of %d instances on the new config and available; waiting for promotion", p.CanariesDone, p.Canaries)
	case held:
		p.Waiting = fmt.Sprintf("canary: %d of %d instances on the new config and available", p.CanariesDone, p.Canaries)
	}
	p.Complete = p.Done >= in.Instances && !t.removing
	return t.p
}

// tally is a plan being made: the gangs counted so far, and those that
// may be taken down once all are counted.
type tally struct {
	p              Plan
	todo, removals []Gang
	removing       bool
}

// add counts gang g.
func (t *tally) add(in Input, g Gang) {
	p := &t.p
	done := p.Done
	switch {
	case g.Removed:
		t.removing = t.removing || !g.Ended
		if p.countRemoved(g) {
			t.removals = append(t.removals, g)
		}
	case g.Restarting:
		if g.Updating {
			p.InFlight += g.Size
		}
	case g.Stale && g.Queued:
		t.todo = append(t.todo, g)
	default:
		p.countCurrent(in, g)
	}
	if in.canaryPhase() && !g.Removed && in.isCanary(g) {
		// A canary counts once on the new config and available now.
		p.Canaries += g.Size
		if !g.Settling {
			p.CanariesDone += p.Done - done
		}
	}
}

// holdForPromotion keeps, in the canary phase, only the canary gangs to
// restart: the others, and removals, wait for the promotion.
func (p *Plan) holdForPromotion(in Input, todo, removals []Gang) ([]Gang, []Gang) {
	var canaries []Gang
	for _, g := range todo {
		if in.isCanary(g) {
			canaries = append(canaries, g)
		}
	}
	p.AwaitingPromotion = p.CanariesDone == p.Canaries
	return canaries, nil
}

// countRemoved counts a gang beyond the target's instances: one stopping
// is in flight. It reports whether the gang is still to be stopped.
func (p *Plan) countRemoved(g Gang) bool {
	switch {
	case g.Ended:
		return false
	case g.Stopping:
		p.InFlight += g.Size
		return false
	}
	return true
}

// countCurrent counts a gang that needs no restart: one whose runs take
// the target as they are, or one the update restarted, in flight until it
// stayed available for MinHealthy.
func (p *Plan) countCurrent(in Input, g Gang) {
	switch {
	case g.Stale:
		p.Relabel = append(p.Relabel, g.Gang)
		p.Done += g.Size
	case g.Updating && g.Settling:
		p.InFlight += g.Size
		if !g.HealthySince.IsZero() {
			p.ClearHealthy = append(p.ClearHealthy, g.Gang)
		}
	case g.Updating && in.MinHealthy > 0 && g.HealthySince.IsZero():
		p.InFlight += g.Size
		p.StartHealthy = append(p.StartHealthy, g.Gang)
	case g.Updating && in.MinHealthy > 0 && in.Now.Sub(g.HealthySince) < in.MinHealthy:
		p.InFlight += g.Size
	default:
		if g.Updating {
			p.Settled = append(p.Settled, g.Gang)
		}
		p.Done += g.Size
	}
}

// disrupt picks the gangs to take down now, within the batch and the SLA:
// removed gangs first, the highest first, so a scale-down ends with the
// lowest instance numbers; then stale gangs in instance order, unless the
// SLA held a removal.
func (p *Plan) disrupt(in Input, removals, todo []Gang) {
	batch := in.Batch
	if batch == 0 {
		batch = ^uint32(0)
	}
	job := in.SLA.Clone()
	for i := len(removals) - 1; i >= 0; i-- {
		g := removals[i]
		if !p.take(job, in.GangSize, g, batch) {
			break
		}
		p.Remove = append(p.Remove, g.Gang)
	}
	if p.Waiting != "" {
		return // the SLA holds the rest
	}
	for _, g := range todo {
		if !p.take(job, in.GangSize, g, batch) {
			return
		}
		p.Restart = append(p.Restart, g.Gang)
	}
}

// take decides whether gang g may be disrupted now: within the batch
// (one gang always may when nothing is in flight) and allowed by the SLA.
func (p *Plan) take(job *sla.Job, gangSize uint32, g Gang, batch uint32) bool {
	if p.InFlight > 0 && uint64(p.InFlight)+uint64(g.Size) > uint64(batch) {
		return false
	}
	if ok, why := job.Disrupt(sla.Gang(gangSize, g.Gang, g.Size)); !ok {
		p.Waiting = why
		return false
	}
	p.InFlight += g.Size
	return true
}
