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
	p := &pass{x: x, classByKey: map[classKey]int32{}, consKeys: map[sliceID]string{}}
	byRef := make(map[int]int32, len(tasks))
	for i := range tasks {
		if _, dup := byRef[tasks[i].Ref]; !dup {
			byRef[tasks[i].Ref] = int32(i)
		}
	}
	gangMembers := map[int][]int{}
	for i, a := range plan {
		if ti, ok := byRef[a.Ref]; ok && tasks[ti].Gang != 0 {
			gangMembers[tasks[ti].Gang] = append(gangMembers[tasks[ti].Gang], i)
		}
	}
	var res CommitResult
	reject := func(ref int, code Code, detail string) {
		res.Rejected = append(res.Rejected, Unplaced{Ref: ref, Reason: Explanation{Code: code, Detail: detail}})
	}
	// check re-runs the chain on the planned host and deducts on success.
	check := func(a Assignment) (*class, int32, string) {
		ti := byRef[a.Ref]
		t := &tasks[ti]
		slot, ok := x.slotOf[a.Host]
		if !ok {
			return nil, -1, "host " + string(a.Host) + " is unknown"
		}
		c := p.classes[p.classOf(t)]
		if c.invalid != "" {
			return nil, -1, c.invalid
		}
		for _, f := range feasibilityChain {
			if reason := f(x, c, slot); reason != "" {
				return nil, -1, "host " + string(a.Host) + ": " + reason
			}
		}
		x.take(slot, c.need, c.ports, 1, c.counts)
		return c, slot, ""
	}
	done := map[int]bool{}
	for _, a := range plan {
		ti, ok := byRef[a.Ref]
		if !ok {
			reject(a.Ref, InvalidTask, "ref "+strconv.Itoa(a.Ref)+" is not among the plan's tasks")
			continue
		}
		gang := tasks[ti].Gang
		if gang == 0 {
			if _, _, why := check(a); why != "" {
				reject(a.Ref, Conflict, why)
			} else {
				res.Committed = append(res.Committed, a)
			}
			continue
		}
		if done[gang] {
			continue
		}
		done[gang] = true
		members := gangMembers[gang]
		var taken []undoStep
		why := ""
		for _, i := range members {
			c, slot, w := check(plan[i])
			if w != "" {
				why = w
				break
			}
			taken = append(taken, undoStep{slot: slot, c: c, n: 1})
		}
		if why == "" {
			for _, i := range members {
				res.Committed = append(res.Committed, plan[i])
			}
			continue
		}
		for i := len(taken) - 1; i >= 0; i-- {
			s := taken[i]
			x.give(s.slot, s.c.need, s.c.ports, 1, s.c.counts)
		}
		for _, i := range members {
			reject(plan[i].Ref, Conflict, "gang "+strconv.Itoa(gang)+" not committed: "+why)
		}
	}
	return res
}
