package placement

import (
	"strconv"
)

// CommitResult says which assignments of a plan a Commit applied.
type CommitResult struct {
	Committed []Assignment
	// Rejected are tasks whose host no longer takes them (Code Conflict) or
	// that the plan got wrong (Code InvalidTask); the caller places them
	// again in a later pass.
	Rejected []Unplaced
}

// Commit applies a plan made by Place against a clone of x: each assignment
// is checked again against x as it is now (the host still schedulable and
// matching, enough free, limits not reached) and deducted if it still
// holds, like Nomad's plan applier. A gang is committed whole or not at all.
// tasks are the tasks the plan was made for (matched by Ref).
//
// Several workers may place concurrently against clones of one shared
// index; the shell serialises their Commit calls on it, so no host is
// double-booked however the workers' views overlapped.
func (x *HostIndex) Commit(tasks []Task, plan []Assignment) CommitResult {
	c := &committer{x: x, p: &pass{x: x, classByKey: map[classKey]int32{}, consKeys: map[sliceID]string{}},
		tasks: tasks, plan: plan, byRef: make(map[int]int32, len(tasks)), gangMembers: map[int][]int{}}
	for i := range tasks {
		if _, dup := c.byRef[tasks[i].Ref]; !dup {
			c.byRef[tasks[i].Ref] = int32(i)
		}
	}
	for i, a := range plan {
		if ti, ok := c.byRef[a.Ref]; ok && tasks[ti].Gang != 0 {
			c.gangMembers[tasks[ti].Gang] = append(c.gangMembers[tasks[ti].Gang], i)
		}
	}
	done := map[int]bool{}
	for _, a := range plan {
		ti, ok := c.byRef[a.Ref]
		if !ok {
			c.reject(a.Ref, InvalidTask, "ref "+strconv.Itoa(a.Ref)+" is not among the plan's tasks")
			continue
		}
		gang := tasks[ti].Gang
		switch {
		case gang == 0:
			if _, _, why := c.check(a); why != "" {
				c.reject(a.Ref, Conflict, why)
			} else {
				c.res.Committed = append(c.res.Committed, a)
			}
		case !done[gang]:
			done[gang] = true
			c.commitGang(gang)
		}
	}
	return c.res
}

// committer is a Commit under way: the plan's tasks by ref, the plan's
// assignments of each gang, and the result so far.
type committer struct {
	x           *HostIndex
	p           *pass
	tasks       []Task
	plan        []Assignment
	byRef       map[int]int32
	gangMembers map[int][]int
	res         CommitResult
}

func (c *committer) reject(ref int, code Code, detail string) {
	c.res.Rejected = append(c.res.Rejected, Unplaced{Ref: ref, Reason: Explanation{Code: code, Detail: detail}})
}

// check re-runs the feasibility chain on the planned host and deducts on
// success; it returns why the assignment does not hold otherwise.
func (c *committer) check(a Assignment) (*class, int32, string) {
	t := &c.tasks[c.byRef[a.Ref]]
	slot, ok := c.x.slotOf[a.Host]
	if !ok {
		return nil, -1, "host " + string(a.Host) + " is unknown"
	}
	cl := c.p.classes[c.p.classOf(t)]
	if cl.invalid != "" {
		return nil, -1, cl.invalid
	}
	for _, f := range feasibilityChain {
		if reason := f(c.x, cl, slot); reason != "" {
			return nil, -1, "host " + string(a.Host) + ": " + reason
		}
	}
	c.x.take(slot, cl.need, cl.ports, 1, cl.counts)
	return cl, slot, ""
}

// commitGang commits every assignment of a gang or none: a member that
// does not hold gives back what the ones before it took.
func (c *committer) commitGang(gang int) {
	members := c.gangMembers[gang]
	var taken []undoStep
	why := ""
	for _, i := range members {
		cl, slot, w := c.check(c.plan[i])
		if w != "" {
			why = w
			break
		}
		taken = append(taken, undoStep{slot: slot, c: cl, n: 1})
	}
	if why == "" {
		for _, i := range members {
			c.res.Committed = append(c.res.Committed, c.plan[i])
		}
		return
	}
	for i := len(taken) - 1; i >= 0; i-- {
		s := taken[i]
		c.x.give(s.slot, s.c.need, s.c.ports, 1, s.c.counts)
	}
	for _, i := range members {
		c.reject(c.plan[i].Ref, Conflict, "gang "+strconv.Itoa(gang)+" not committed: "+why)
	}
}
