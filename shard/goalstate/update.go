package goalstate

import "time"

// A rolling update moves a job's gangs onto a target config version a batch
// at a time. UpdateStep is one step of it: given how every gang stands, it
// says which gangs take the target config without a restart, which are
// restarted now, which removed gangs are stopped now, and how far the
// update is. The caller applies the plan and asks again on its next pass.

// UpdateGang is one gang of a job as a rolling update sees it.
type UpdateGang struct {
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

// UpdateInput is everything one update step depends on.
type UpdateInput struct {
	Now time.Time
	// Gangs of the job, in instance order.
	Gangs []UpdateGang
	// Instances is the target config's instance count.
	Instances uint32
	// Batch is how many instances may be in flight at once (0: all).
	Batch  uint32
	Paused bool
	// MinHealthy is how long a restarted gang must stay available before
	// it counts as done.
	MinHealthy time.Duration
	// Admit asks whether a gang may be taken down now (the SLA). It is
	// asked in the order the plan would disrupt gangs, and must count a
	// yes as a disruption for the questions that follow. Nil: no limit.
	Admit func(gang uint32) (ok bool, why string)
}

// UpdatePlan is what UpdateStep decided.
type UpdatePlan struct {
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
	// Complete: every instance is on the target and every removed gang
	// has ended.
	Complete bool
}

// UpdateStep plans one step of a rolling update. It is a pure function of
// its input.
func UpdateStep(in UpdateInput) UpdatePlan {
	var p UpdatePlan
	var todo, removals []UpdateGang
	removing := false
	for _, g := range in.Gangs {
		if g.Removed {
			switch {
			case g.Ended:
			case g.Stopping:
				p.InFlight += g.Size
				removing = true
			default:
				removals = append(removals, g)
				removing = true
			}
			continue
		}
		if g.Restarting {
			if g.Updating {
				p.InFlight += g.Size
			}
			continue
		}
		switch {
		case g.Stale && !g.Queued:
			p.Relabel = append(p.Relabel, g.Gang)
			p.Done += g.Size
		case g.Stale:
			todo = append(todo, g)
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
	batch := in.Batch
	if batch == 0 {
		batch = ^uint32(0)
	}
	if in.Paused {
		if len(todo) > 0 || len(removals) > 0 {
			p.Waiting = "paused"
		}
	} else {
		// Removed gangs go first, the highest first, so a scale-down ends
		// with the lowest instance numbers.
		for i := len(removals) - 1; i >= 0; i-- {
			g := removals[i]
			if !p.take(in, g, batch) {
				break
			}
			p.Remove = append(p.Remove, g.Gang)
		}
		if p.Waiting == "" {
			for _, g := range todo {
				if !p.take(in, g, batch) {
					break
				}
				p.Restart = append(p.Restart, g.Gang)
			}
		}
	}
	p.Complete = p.Done >= in.Instances && !removing
	return p
}

// take decides whether gang g may be disrupted now: within the batch
// (one gang always may when nothing is in flight) and allowed by Admit.
func (p *UpdatePlan) take(in UpdateInput, g UpdateGang, batch uint32) bool {
	if p.InFlight > 0 && uint64(p.InFlight)+uint64(g.Size) > uint64(batch) {
		return false
	}
	if in.Admit != nil {
		if ok, why := in.Admit(g.Gang); !ok {
			p.Waiting = why
			return false
		}
	}
	p.InFlight += g.Size
	return true
}
