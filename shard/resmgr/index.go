package resmgr

import "github.com/peloton-federated/peloton/shard/model"

// gangIndex finds a gang's entry by its id. A job's gang numbers are dense
// from 0 (the shell numbers them by instance), so each job keeps a slice
// by number: a job of a million single-task gangs costs one pointer per
// gang, where a map keyed by id cost about a hundred bytes. Numbers far
// beyond a job's slice go to a map, so that a sparse number cannot make
// the slice huge.
type gangIndex struct {
	jobs map[model.JobID]*jobGangs
	n    int // entries
}

// jobGangs are one job's entries.
type jobGangs struct {
	byNumber []*entry
	sparse   map[uint32]*entry
	n        int
}

// denseSlack is how far past a job's slice a number may be and still grow
// the slice rather than go to the sparse map.
const denseSlack = 1024

func (x *gangIndex) get(id GangID) *entry {
	j := x.jobs[id.Job]
	if j == nil {
		return nil
	}
	if int(id.Gang) < len(j.byNumber) && j.byNumber[id.Gang] != nil {
		return j.byNumber[id.Gang]
	}
	return j.sparse[id.Gang] // a number put there before the slice reached it
}

// put adds e, whose id is not in the index.
func (x *gangIndex) put(e *entry) {
	j := x.jobs[e.id.Job]
	if j == nil {
		j = &jobGangs{}
		x.jobs[e.id.Job] = j
	}
	switch n := int(e.id.Gang); {
	case n < len(j.byNumber):
		j.byNumber[n] = e
	case n <= 2*len(j.byNumber)+denseSlack:
		if n >= cap(j.byNumber) {
			grown := make([]*entry, n+1, max(2*cap(j.byNumber), n+1))
			copy(grown, j.byNumber)
			j.byNumber = grown
		}
		j.byNumber = j.byNumber[:n+1]
		j.byNumber[n] = e
	default:
		if j.sparse == nil {
			j.sparse = map[uint32]*entry{}
		}
		j.sparse[e.id.Gang] = e
	}
	j.n++
	x.n++
}

// del removes the entry of id, if any; a job without entries is dropped.
func (x *gangIndex) del(id GangID) {
	j := x.jobs[id.Job]
	if j == nil {
		return
	}
	if int(id.Gang) < len(j.byNumber) && j.byNumber[id.Gang] != nil {
		j.byNumber[id.Gang] = nil
	} else {
		if _, ok := j.sparse[id.Gang]; !ok {
			return
		}
		delete(j.sparse, id.Gang)
	}
	j.n--
	x.n--
	if j.n == 0 {
		delete(x.jobs, id.Job)
	}
}

// each calls f for every entry of a job.
func (x *gangIndex) each(job model.JobID, f func(*entry)) {
	j := x.jobs[job]
	if j == nil {
		return
	}
	for _, e := range j.byNumber {
		if e != nil {
			f(e)
		}
	}
	for _, e := range j.sparse {
		f(e)
	}
}
