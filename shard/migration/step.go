package migration

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// A migration moves a job's gangs from the clusters they run on to one
// target cluster, a batch at a time: the same loop as a rolling update,
// with the cluster as the thing that changes. Step is one step of
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

// GangPlace is where a gang's live members hold hosts.
type GangPlace uint8

const (
	// PlacedOnTarget: every live member holds a host on the target.
	PlacedOnTarget GangPlace = iota
	// PlacedElsewhere: a live member holds a host (placed, launching or
	// running) on a cluster other than the target.
	PlacedElsewhere
	// Unplaced: no live member holds a host (the gang waits to be placed).
	Unplaced
	// PlacedPartly: some live members hold hosts on the target, the others
	// none.
	PlacedPartly
	// Finished: no member will run again (a batch job's ended tasks).
	Finished
)

// Where gathers where a gang's members hold hosts, against the target
// cluster, to say the gang's GangPlace.
type Where struct {
	live                       int
	elsewhere, waiting, onHost bool
}

// Add counts member t; live says whether it may run again (the caller
// knows which of its tasks left memory).
func (w *Where) Add(t *model.TaskRuntime, live bool, target string) {
	if !live {
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

// Place is where the gang stands.
func (w *Where) Place() GangPlace {
	switch {
	case w.live == 0:
		return Finished
	case w.elsewhere:
		return PlacedElsewhere
	case !w.onHost:
		return Unplaced
	case w.waiting:
		return PlacedPartly
	}
	return PlacedOnTarget
}

// GangMove is what this migration did to a gang.
type GangMove uint8

const (
	// NotMoved: the migration has not touched the gang, or counted it
	// moved already.
	NotMoved GangMove = iota
	// Pinned: the migration pinned the gang to the target while it held
	// no host; nothing was taken down.
	Pinned
	// Restarted: the migration took the gang down to restart it on the
	// target; it is in flight.
	Restarted
)

// Phase is where a gang stands in its job's migration: Step
// derives it from the gang and the migration (phaseOf) and acts by it.
type Phase uint8

const (
	// PhaseDone: on the target already (or finished), nothing to do.
	PhaseDone Phase = iota
	// PhaseArrived: the migration moved it and it now runs on the target
	// (available, or placed for a batch job), or finished there.
	PhaseArrived
	// PhaseMoving: the migration moved it; it has not arrived yet.
	PhaseMoving
	// PhaseFinishing: a batch job's gang that finishes where it runs.
	PhaseFinishing
	// PhaseSurgeReady: runs elsewhere; its replacement is available on
	// the target, so it may stop.
	PhaseSurgeReady
	// PhaseSurging: runs elsewhere; its replacement is starting, or
	// stopping.
	PhaseSurging
	// PhaseToMove: runs elsewhere and is to be moved.
	PhaseToMove
	// PhaseToPin: holds no host; it is pinned to the target without a
	// disruption.
	PhaseToPin
)

// Gang is one gang of a job as a migration sees it.
type Gang struct {
	Gang  uint32
	Size  uint32
	Place GangPlace
	Move  GangMove
	// Available: every member is available (runs, and its probes say so;
	// for a batch job, runs).
	Available bool
	// Restarting: a restart (kill, then new runs) is under way.
	Restarting bool
	// Surge is how the gang's surge instance stands (with surge).
	Surge SurgeState
	// Failures counts runs of the gang on the target that failed since
	// the migration moved it; PendingFor is how long a moving gang has
	// waited for a host, and Why what placement said.
	Failures   uint32
	PendingFor time.Duration
	Why        string
}

// name is how a gang is named to an operator: by its instance when it has
// one, else by its number.
func (g *Gang) name() string {
	if g.Size <= 1 {
		return fmt.Sprintf("instance %d", g.Gang)
	}
	return fmt.Sprintf("gang %d", g.Gang)
}

// Input is everything one migration step of a job depends on.
type Input struct {
	// Gangs of the job that the migration moves, in instance order.
	Gangs []Gang
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
	// SLA is the job as the SLA sees it (nil: no limit), and GangSize
	// how many instances a gang has (0: one). A gang may be taken down
	// only when SLA.Disrupt allows it, asked of the step's own copy.
	SLA      *sla.Job
	GangSize uint32
}

// Plan is what Step decided.
type Plan struct {
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

// Step plans one step of a job's migration. It is a pure function
// of its input.
func Step(in Input) Plan {
	var t tally
	surgesLeft := false
	for _, g := range in.Gangs {
		t.p.Total += g.Size
		surgesLeft = surgesLeft || g.Surge != SurgeNone
		t.add(in, g)
	}
	p := &t.p
	switch {
	case p.Stuck != "":
		p.Waiting = "stopped: " + p.Stuck
	case !in.Paused:
		p.move(in, t.surgeReady, t.todo)
	case len(t.todo) > 0 || len(t.surgeReady) > 0:
		p.Waiting = "paused"
	}
	p.Complete = p.Done == p.Total && p.Finishing == 0 && !surgesLeft && len(p.Pin) == 0
	return t.p
}

// tally is a plan being made: the gangs counted so far, and those
// that may be moved once all are counted.
type tally struct {
	p                Plan
	surgeReady, todo []Gang
}

// add counts gang g by its phase.
func (t *tally) add(in Input, g Gang) {
	p := &t.p
	switch phaseOf(in, g) {
	case PhaseDone, PhaseArrived:
		p.done(g)
	case PhaseMoving:
		p.moving(in, g)
	case PhaseFinishing:
		p.Finishing += g.Size
	case PhaseSurgeReady:
		p.InFlight += g.Size
		t.surgeReady = append(t.surgeReady, g)
	case PhaseSurging:
		p.InFlight += g.Size
	case PhaseToMove:
		t.todo = append(t.todo, g)
	case PhaseToPin:
		if !in.Paused {
			p.Pin = append(p.Pin, g.Gang)
		}
	}
}

// phaseOf is where gang g stands in the migration.
func phaseOf(in Input, g Gang) Phase {
	switch {
	case g.Place == Finished && g.Move != NotMoved:
		return PhaseArrived // it was pinned to the target, so it ran there
	case g.Place == Finished:
		return PhaseDone
	case g.Move != NotMoved && g.Place == PlacedOnTarget && (g.Available || in.SettleOnPlace) && !g.Restarting:
		return PhaseArrived
	case g.Move != NotMoved:
		return PhaseMoving
	case g.Place == PlacedElsewhere:
		return stalePhase(in, g)
	case g.Place == Unplaced:
		return PhaseToPin
	}
	return PhaseDone // on the target, or partly placed there, not moved by this migration
}

// stalePhase is the phase of a gang that runs elsewhere.
func stalePhase(in Input, g Gang) Phase {
	switch {
	case !in.Restart:
		return PhaseFinishing
	case in.Surge && g.Surge == SurgeAvailable:
		return PhaseSurgeReady
	case in.Surge && g.Surge != SurgeNone:
		return PhaseSurging
	}
	return PhaseToMove
}

// done counts a gang on the target or finished; one the migration moved
// counts as moved, and its surge instance may go.
func (p *Plan) done(g Gang) {
	p.Done += g.Size
	p.stopping(g)
	if g.Move != NotMoved {
		p.Moved = append(p.Moved, g.Gang)
	}
	if g.Surge == SurgeStarting || g.Surge == SurgeAvailable {
		p.DropSurge = append(p.DropSurge, g.Gang)
	}
}

// moving counts a gang the migration moved that has not arrived, and
// stops the migration when the gang keeps failing on the target or finds
// no host there.
func (p *Plan) moving(in Input, g Gang) {
	if g.Move == Restarted || g.Surge != SurgeNone {
		p.InFlight += g.Size
	}
	if p.Stuck != "" {
		return
	}
	switch {
	case in.MaxFailures > 0 && g.Failures >= in.MaxFailures:
		times := "times"
		if g.Failures == 1 {
			times = "time"
		}
		p.Stuck = fmt.Sprintf("%s failed %d %s on the target", g.name(), g.Failures, times)
	case in.StallAfter > 0 && g.PendingFor >= in.StallAfter:
		p.Stuck = fmt.Sprintf("%s found no host on the target for %s", g.name(), g.PendingFor.Round(time.Second))
	default:
		return
	}
	if g.Why != "" {
		p.Stuck += ": " + g.Why
	}
}

// move picks the gangs to move now, within the batch and the SLA: gangs
// whose replacement is available stop first (each frees a slot of the
// batch once moved), then the gangs to move in instance order: with surge
// a replacement starts (which disrupts nothing), else the gang restarts
// on the target.
func (p *Plan) move(in Input, surgeReady, todo []Gang) {
	job := in.SLA.Clone()
	for _, g := range surgeReady {
		if !p.admit(job, in.GangSize, g) {
			return
		}
		p.Restart = append(p.Restart, g.Gang)
	}
	batch := in.Batch
	if batch == 0 {
		batch = ^uint32(0)
	}
	for _, g := range todo {
		if p.InFlight > 0 && uint64(p.InFlight)+uint64(g.Size) > uint64(batch) {
			return
		}
		if in.Surge {
			p.StartSurge = append(p.StartSurge, g.Gang)
			p.InFlight += g.Size
			continue
		}
		if !p.admit(job, in.GangSize, g) {
			return
		}
		p.InFlight += g.Size
		p.Restart = append(p.Restart, g.Gang)
	}
}

// stopping counts a done gang's surge instance, which stops now or is
// stopping, as in flight until it ended: the job grows by at most the
// batch.
func (p *Plan) stopping(g Gang) {
	if g.Surge != SurgeNone {
		p.InFlight += g.Size
	}
}

// admit asks the SLA whether gang g may go down now.
func (p *Plan) admit(job *sla.Job, gangSize uint32, g Gang) bool {
	ok, why := job.Disrupt(sla.Gang(gangSize, g.Gang, g.Size))
	if !ok {
		p.Waiting = why
	}
	return ok
}
