package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/resmgr"
)

// Figures are what the core observed while it decided, for the Engine's
// statBook: the core keeps no lock and reads no clock, so it lists what
// happened and the Engine records it (takeFigures, statBook.record).
type Figures struct {
	// QueueWaits: how long each admitted task waited, by pool.
	QueueWaits []poolWait
	// Preempted: a reason label per Preempted gang or evicted run.
	Preempted []string
	// Placed and unplaced (by reason code) count placement's outcomes.
	Placed   int
	Unplaced map[string]uint64
}

type poolWait struct {
	Pool string
	Wait time.Duration
}

// TakeFigures takes what the core observed since the last time.
func (e *State) TakeFigures() Figures {
	f := e.figures
	e.figures = Figures{}
	return f
}

// preemptLabel is a short, stable name of a preemption reason.
func preemptLabel(r resmgr.PreemptReason) string {
	switch r {
	case resmgr.ReasonOverEntitlement:
		return "over_entitlement"
	case resmgr.ReasonPriority:
		return "priority"
	case resmgr.ReasonSlackShrank:
		return "slack_shrank"
	}
	return "other"
}
