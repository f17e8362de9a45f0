package core

import (
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// NotAdmitted says why a PENDING task waits for admission; in full, with
// what its gang asks for and its place in the queue (which takes time in
// proportion to the gangs ahead), else only the reason its job's tasks are
// summed up by, with prefix, rendered once per reason in cache.
func (e *State) NotAdmitted(je *Job, t *model.TaskRuntime, full bool, prefix string, cache ReasonCache) string {
	g := GangOf(je, t.ID.Instance)
	w, ok := e.Queue.Sched.Why(g)
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
	if pos := e.Queue.Sched.Position(g); pos > 0 {
		msg += "; number " + strconv.Itoa(pos) + " in pool " + je.Job.Spec.Pool + "'s queue"
	}
	return msg
}

// ReasonCache keeps the rendered reasons of one listing: the tasks of a
// job mostly wait for the same one.
type ReasonCache map[resmgr.Wait]string

// NotPlaced says why a READY task is not on a host yet.
func NotPlaced(t *model.TaskRuntime) string {
	switch {
	case t.Message == "":
		return "not placed: waiting for the next placement pass"
	case strings.HasPrefix(t.Message, "not placed"):
		return t.Message
	}
	return "not placed: " + t.Message
}

// ExplainWaiting sets the message of a copy of a waiting task, under the
// engine's lock: in full for one task, in short for a listing (see
// notAdmitted and notPlaced).
func (e *State) ExplainWaiting(je *Job, cp *model.TaskRuntime, full bool, cache ReasonCache) {
	switch cp.State {
	case model.TaskPending:
		cp.Message = e.NotAdmitted(je, cp, full, "not admitted: ", cache)
	case model.TaskReady:
		cp.Message = NotPlaced(cp)
	}
}
