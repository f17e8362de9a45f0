package jobmgr

import (
	"sort"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
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
	je := e.jobs[id]
	if je == nil {
		return nil, ErrNotFound
	}
	if je.evicted || je.counts.sum(model.TaskPending, model.TaskReady) == 0 {
		return nil, nil
	}
	counts := map[string]uint32{}
	cache := reasonCache{}
	for _, t := range je.tasks {
		switch t.State {
		case model.TaskPending:
			counts[e.notAdmitted(je, t, false, "", cache)]++
		case model.TaskReady:
			counts[notPlaced(t)]++
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

// notAdmitted says why a PENDING task waits for admission; in full, with
// what its gang asks for and its place in the queue (which takes time in
// proportion to the gangs ahead), else only the reason its job's tasks are
// summed up by, with prefix, rendered once per reason in cache.
func (e *Engine) notAdmitted(je *jobEntry, t *model.TaskRuntime, full bool, prefix string, cache reasonCache) string {
	g := gangOf(je, t.ID.Instance)
	w, ok := e.sched.Why(g)
	if !ok {
		return prefix + "waiting for admission"
	}
	if !full {
		r, ok := cache[w]
		if !ok {
			r = prefix + w.Reason()
			cache[w] = r
		}
		return r
	}
	msg := prefix + w.String()
	if pos := e.sched.Position(g); pos > 0 {
		msg += "; number " + strconv.Itoa(pos) + " in pool " + je.job.Spec.Pool + "'s queue"
	}
	return msg
}

// reasonCache keeps the rendered reasons of one listing: the tasks of a
// job mostly wait for the same one.
type reasonCache map[resmgr.Wait]string

// notPlaced says why a READY task is not on a host yet.
func notPlaced(t *model.TaskRuntime) string {
	switch {
	case t.Message == "":
		return "not placed: waiting for the next placement pass"
	case strings.HasPrefix(t.Message, "not placed"):
		return t.Message
	}
	return "not placed: " + t.Message
}

// explainWaiting sets the message of a copy of a waiting task, under the
// engine's lock: in full for one task, in short for a listing (see
// notAdmitted and notPlaced).
func (e *Engine) explainWaiting(je *jobEntry, cp *model.TaskRuntime, full bool, cache reasonCache) {
	switch cp.State {
	case model.TaskPending:
		cp.Message = e.notAdmitted(je, cp, full, "not admitted: ", cache)
	case model.TaskReady:
		cp.Message = notPlaced(cp)
	}
}
