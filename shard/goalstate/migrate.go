package goalstate

import (
	"fmt"
	"time"
)

// A migration moves a job's gangs from the clusters they run on to one
// target cluster, a batch at a time: the same loop as a rolling update,
// with the cluster as the thing that changes. MigrateStep is one step of
// it: given how every gang stands, it says which gangs are pinned to the
// target without a disruption (they hold no host), which get a surge
// instance on the target, which are stopped and restarted on the target
// now, which surge instances may go, and how far the migration is. The
// caller applies the plan and asks again on its next pass.

// SurgeState is how a gang's surge instance stands.
type SurgeState uint8

const (
	// SurgeNone: the gang has no surge instance (or it ended).
	SurgeNone SurgeState = iota
	// SurgeStarting: the surge instance was asked for and is not yet
	// available.
	SurgeStarting
	// SurgeAvailable: it runs on the target and is available.
	SurgeAvailable
	// SurgeStopping: it was told to stop and has not ended yet.
	SurgeStopping
)

// MigrateGang is one gang of a job as a migration sees it.
type MigrateGang struct {
	Gang uint32
	Size uint32
	// Stale: a live member holds a host (placed, launching or running) on
	// a cluster other than the target.
	Stale bool
	// Unplaced: no live member holds a host (the gang waits to be placed).
	Unplaced bool
	// OnTarget: every live member holds a host on the target.
	OnTarget bool
	// Available: every member is available (runs, and its probes say so;
	// for a batch job, runs).
	Available bool
	// Finished: no member will run again (a batch job's ended tasks).
	Finished bool
	// Restarting: a restart (kill, then new runs) is under way.
	Restarting bool
	// Moving: this migration pinned the gang to the target (it restarted
	// it, or it waited unplaced) and has not counted it moved since.
	// Restarted: of those, the ones it took down; they are in flight.
	Moving    bool
	Restarted bool
	// Surge is how the gang's surge instance stands (with surge).
	Surge SurgeState
	// Failures counts runs of the gang on the target that failed since
	// the migration moved it; PendingFor is how long a moving gang has
	// waited for a host, and Why what placement said.
	Failures   uint32
	PendingFor time.Duration
	Why        string
}

// MigrateInput is everything one migration step of a job depends on.
type MigrateInput struct {
	// Gangs of the job that the migration moves, in instance order.
	Gangs []MigrateGang
	// Batch is how many instances may be in flight at once (0: all).
	Batch uint32
	// Surge: start each gang's replacement on the target and wait until
	// it is available before the gang itself stops.
	Surge bool
	// Restart: stale gangs are stopped and restarted on the target (long-
	// running jobs, and batch jobs with move-running); otherwise they
	// finish where they run.
	Restart bool
	// SettleOnPlace: a moving gang counts moved once it holds hosts on the
	// target, available or not (batch jobs, whose tasks may end before a
	// pass sees them run).
	SettleOnPlace bool
	Paused        bool
	// MaxFailures is how many failed runs on the target one gang may have
	// before the migration stops (0: no limit); StallAfter how long a
	// moving gang may wait for a host (0: forever).
	MaxFailures uint32
	StallAfter  time.Duration
	// Admit asks whether a gang may be taken down now (the SLA), counting
	// a yes for the questions that follow. Nil: no limit.
	Admit func(gang uint32) (ok bool, why string)
}

// MigratePlan is what MigrateStep decided.
type MigratePlan struct {
	// Pin: gangs that hold no host, to be placed on the target only.
	Pin []uint32
	// StartSurge: gangs to give a surge instance on the target now.
	StartSurge []uint32
	// Restart: gangs to stop now and restart on the target.
	Restart []uint32
	// DropSurge: gangs whose surge instance may stop now.
	DropSurge []uint32
	// Moved: gangs the migration moved that now run on the target.
	Moved []uint32
	// Total, Done, InFlight and Finishing count instances: every one, those
	// on the target (or finished), those being moved, and a batch job's
	// stale ones left to finish where they run.
	Total, Done, InFlight, Finishing uint32
	// Waiting says why no more gangs were moved ("" when nothing held the
	// migration back); Stuck why it cannot progress at all.
	Waiting string
	Stuck   string
	// Complete: every gang is on the target or finished, and no surge
	// instance is left.
	Complete bool
}

// MigrateStep plans one step of a job's migration. It is a pure function
// of its input.
func MigrateStep(in MigrateInput) MigratePlan {
	var p MigratePlan
	var surgeReady, todo []MigrateGang
	surgesLeft := false
	for _, g := range in.Gangs {
		p.Total += g.Size
		if g.Surge != SurgeNone {
			surgesLeft = true
		}
		switch {
		case g.Finished:
			p.Done += g.Size
			p.stopping(g)
			if g.Moving {
				// It was pinned to the target, so it ran there.
				p.Moved = append(p.Moved, g.Gang)
			}
			if g.Surge == SurgeStarting || g.Surge == SurgeAvailable {
				p.DropSurge = append(p.DropSurge, g.Gang)
			}
		case g.Moving:
			if g.OnTarget && (g.Available || in.SettleOnPlace) && !g.Restarting {
				p.Moved = append(p.Moved, g.Gang)
				p.Done += g.Size
				p.stopping(g)
				if g.Surge == SurgeStarting || g.Surge == SurgeAvailable {
					p.DropSurge = append(p.DropSurge, g.Gang)
				}
				continue
			}
			if g.Restarted || g.Surge != SurgeNone {
				p.InFlight += g.Size
			}
			switch {
			case p.Stuck != "":
			case in.MaxFailures > 0 && g.Failures >= in.MaxFailures:
				p.Stuck = fmt.Sprintf("instance %d failed %d times on the target", g.Gang, g.Failures)
			case in.StallAfter > 0 && g.PendingFor >= in.StallAfter:
				p.Stuck = fmt.Sprintf("instance %d found no host on the target for %s", g.Gang, g.PendingFor.Round(time.Second))
			}
			if p.Stuck != "" && g.Why != "" {
				p.Stuck += ": " + g.Why
			}
		case g.Stale && !in.Restart:
			p.Finishing += g.Size
		case g.Stale && in.Surge && g.Surge == SurgeAvailable:
			p.InFlight += g.Size
			surgeReady = append(surgeReady, g)
		case g.Stale && in.Surge && g.Surge != SurgeNone:
			p.InFlight += g.Size
		case g.Stale:
			todo = append(todo, g)
		case g.Unplaced:
			if !in.Paused {
				p.Pin = append(p.Pin, g.Gang)
			}
		default:
			// On the target already, and not moved by this migration.
			p.Done += g.Size
			p.stopping(g)
			if g.Surge == SurgeStarting || g.Surge == SurgeAvailable {
				p.DropSurge = append(p.DropSurge, g.Gang)
			}
		}
	}
	batch := in.Batch
	if batch == 0 {
		batch = ^uint32(0)
	}
	switch {
	case p.Stuck != "":
		p.Waiting = "stopped: " + p.Stuck
	case in.Paused:
		if len(todo) > 0 || len(surgeReady) > 0 {
			p.Waiting = "paused"
		}
	default:
		// Gangs whose replacement is available stop first: each frees a
		// slot of the batch once moved.
		for _, g := range surgeReady {
			if !p.admit(in, g) {
				break
			}
			p.Restart = append(p.Restart, g.Gang)
		}
		if p.Waiting == "" {
			for _, g := range todo {
				if p.InFlight > 0 && uint64(p.InFlight)+uint64(g.Size) > uint64(batch) {
					break
				}
				if in.Surge {
					// Starting a replacement disrupts nothing.
					p.StartSurge = append(p.StartSurge, g.Gang)
					p.InFlight += g.Size
					continue
				}
				if !p.admit(in, g) {
					break
				}
				p.InFlight += g.Size
				p.Restart = append(p.Restart, g.Gang)
			}
		}
	}
	p.Complete = p.Done == p.Total && p.Finishing == 0 && !surgesLeft && len(p.Pin) == 0
	return p
}

// stopping counts a done gang's surge instance, which stops now or is
// stopping, as in flight until it ended: the job grows by at most the
// batch.
func (p *MigratePlan) stopping(g MigrateGang) {
	if g.Surge != SurgeNone {
		p.InFlight += g.Size
	}
}

// admit asks the SLA whether gang g may go down now.
func (p *MigratePlan) admit(in MigrateInput, g MigrateGang) bool {
	if in.Admit == nil {
		return true
	}
	ok, why := in.Admit(g.Gang)
	if !ok {
		p.Waiting = why
	}
	return ok
}
