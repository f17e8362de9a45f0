package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"sort"

	"github.com/peloton-federated/peloton/shard/model"
)

// A task that waits always says why: a PENDING task is not admitted yet, and
// the resource manager's record of its last pass says which pool figure
// holds it back and where it is in the queue; a READY task is admitted but
// not placed, and placement's reason is its message. Both are read when
// asked, never stored: they change with every pass.

// WaitingGroup is a number of a job's tasks that wait for one reason.
type WaitingGroup struct {
	Tasks  uint32
	Reason string
}

// Waiting sums up why a job's waiting tasks wait, the largest group first:
// "waiting for pool /a's entitlement (cpu 10/10)", "not placed: 0/5
// hosts: 5 zone==x".
func (r Reads) Waiting(id model.JobID) ([]WaitingGroup, error) {
	e := r.e
	e.lock()
	defer e.mu.Unlock()
	je := e.c.Jobs[id]
	if je == nil {
		return nil, core.ErrNotFound
	}
	if je.Evicted || je.Counts.Sum(model.TaskPending, model.TaskReady) == 0 {
		return nil, nil
	}
	counts := map[string]uint32{}
	cache := core.ReasonCache{}
	for _, t := range je.Tasks {
		switch t.State {
		case model.TaskPending:
			counts[e.c.NotAdmitted(je, t, false, "", cache)]++
		case model.TaskReady:
			counts[core.NotPlaced(t)]++
		}
	}
	out := make([]WaitingGroup, 0, len(counts))
	for reason, n := range counts {
		out = append(out, WaitingGroup{Tasks: n, Reason: reason})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tasks != out[j].Tasks {
			return out[i].Tasks > out[j].Tasks
		}
		return out[i].Reason < out[j].Reason
	})
	return out, nil
}
