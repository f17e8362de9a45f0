package resmgr

import (
	"errors"
	"strconv"

	"github.com/peloton-federated/peloton/shard/model"
)

// Sentinel errors of the scheduler. Enqueue and Adopt wrap one of them with
// the gang and the detail.
var (
	// ErrUnknownPool: the gang names a pool that is not in the tree.
	ErrUnknownPool = errors.New("unknown pool")
	// ErrNotLeafPool: the gang names a pool that has child pools; work goes
	// to leaf pools only.
	ErrNotLeafPool = errors.New("pool is not a leaf")
	// ErrDuplicateGang: a gang with the same ID is already queued or admitted.
	ErrDuplicateGang = errors.New("gang already known")
	// ErrEmptyGang: the gang has no members.
	ErrEmptyGang = errors.New("gang has no members")
	// ErrBadResources: a per-task amount is negative, infinite or not a number.
	ErrBadResources = errors.New("bad resources")
)

// GangID names a gang: its job and its number within the job (the first
// instance divided by the job's gang size; for a task that is not in a gang,
// its instance).
type GangID struct {
	Job  model.JobID
	Gang uint32
}

func (id GangID) String() string {
	return string(id.Job) + "#" + strconv.FormatUint(uint64(id.Gang), 10)
}

// Member is one task of a gang, at the run the gang was queued for.
type Member struct {
	Task model.TaskID
	Run  uint32
}

// Gang is the unit of admission and preemption: all of its members are
// admitted, preempted and killed together. A task not in a gang is a gang of
// one.
type Gang struct {
	ID       GangID
	Pool     string // path of a leaf pool
	Priority int32  // higher is admitted first
	// Preemptible work may run on elastic entitlement and be preempted;
	// non-preemptible work is admitted only within the pool's reservation.
	Preemptible bool
	// Revocable work runs only on slack (allocated-but-unused resources)
	// and is the first evicted when slack shrinks. It overrides Preemptible.
	Revocable bool
	Members   []Member
	PerTask   model.Resources
}

// Size is what the whole gang asks for.
func (g *Gang) Size() model.Resources { return g.PerTask.Scale(int64(len(g.Members))) }

// Kind is how a gang is admitted: each kind has its own pending queues, so
// one kind never blocks another.
type Kind uint8

// Kinds of work, in the order admission serves them.
const (
	NonPreemptible Kind = iota
	Preemptible
	Revocable
	kindCount
)

var kindNames = [kindCount]string{"non-preemptible", "preemptible", "revocable"}

func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// KindOf returns the kind a gang is admitted as.
func KindOf(g *Gang) Kind {
	switch {
	case g.Revocable:
		return Revocable
	case g.Preemptible:
		return Preemptible
	}
	return NonPreemptible
}

// PreemptReason says why a gang is preempted. The shell records
// model.ReasonPreempted on the tasks with this as the message.
type PreemptReason string

// Reasons for a preemption.
const (
	// ReasonOverEntitlement: the pool ran above its entitlement for
	// Config.PreemptAfterPasses passes while another pool wanted it.
	ReasonOverEntitlement PreemptReason = "pool over entitlement"
	// ReasonPriority: a higher-priority gang of the same pool could not be
	// admitted otherwise.
	ReasonPriority PreemptReason = "higher-priority work in the pool"
	// ReasonSlackShrank: the cluster's slack fell below what revocable work
	// holds.
	ReasonSlackShrank PreemptReason = "slack shrank"
)

// Preemption is one gang to kill. It keeps its allocation until the shell
// reports the kill done with Remove; the shell then enqueues its tasks again
// as new runs.
type Preemption struct {
	Gang   GangID
	Pool   string
	Reason PreemptReason
}

// Config tunes the scheduler.
type Config struct {
	// PreemptAfterPasses is how many consecutive passes a pool must be over
	// its entitlement (while another pool wants what it holds) before any of
	// its work is preempted for that. Values below 1 count as 1.
	PreemptAfterPasses int
}

// PassInput is what the shell knows at the time of a pass.
type PassInput struct {
	// Capacity is the cluster's capacity (or the shard's share of a global
	// pass): the root of the pool tree divides it.
	Capacity model.Resources
	// Slack is the allocated-but-unused total reported by host managers:
	// revocable work is admitted within it and evicted when it shrinks.
	Slack model.Resources
	// Disruptable bounds, per job, how many more of its instances the
	// pass may preempt: the room its SLA leaves. Jobs absent from it are
	// not bounded. The pass does not change the map.
	Disruptable map[model.JobID]uint32
}

// Decision is what a pass decided. Admitted gangs already count as
// allocated; preempted gangs still do until Remove.
type Decision struct {
	Admit   []GangID // in admission order
	Preempt []Preemption
}

// PoolFigures is what `pool get` shows about one pool after the last pass.
// Amounts are per resource; a parent pool's are its children's sums except
// for its own configuration and entitlement.
type PoolFigures struct {
	Path        string
	Reservation model.Resources
	Limit       model.Resources
	Share       model.Shares
	// Demand is queued plus admitted non-revocable work as the entitlement
	// pass saw it: non-preemptible demand counts up to the reservation,
	// gangs that can never fit do not count, and the pool's limit caps it.
	Demand model.Resources
	// UncappedDemand is what the pool's non-revocable work asks for before
	// those caps: every queued, parked and admitted gang, whatever the
	// reservation and limit. The entitlement pass never sees it; it answers
	// "how much does this pool want" where Demand answers "how much can it
	// be given".
	UncappedDemand model.Resources
	Entitlement    model.Resources
	// Allocation is what admitted non-revocable work holds, preempted work
	// still being killed included.
	Allocation model.Resources
	// SlackEntitlement and RevocableAllocation are the same for revocable
	// work against the cluster's slack.
	SlackEntitlement    model.Resources
	RevocableAllocation model.Resources
	Queued              int // gangs waiting for admission
	Parked              int // gangs that can never fit (beyond reservation or limit)
	Admitted            int // gangs admitted and not removed
	Preempting          int // admitted gangs chosen for preemption, not yet removed
	OverPasses          int // consecutive passes over entitlement (leaves)
}
