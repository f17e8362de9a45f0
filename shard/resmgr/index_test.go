package resmgr

import (
	"testing"
	"unsafe"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestGangIndex(t *testing.T) {
	x := gangIndex{jobs: map[model.JobID]*jobGangs{}}
	e := func(job string, n uint32) *entry { return &entry{id: GangID{Job: model.JobID(job), Gang: n}} }
	var all []*entry
	// Sparse first: far beyond an empty slice.
	far := e("a", 100000)
	x.put(far)
	all = append(all, far)
	// Then dense from 0, growing the slice past the sparse number.
	for n := uint32(0); n < 100000; n += 1 {
		en := e("a", n)
		x.put(en)
		all = append(all, en)
	}
	last := e("a", 100001) // right after the slice's end: dense
	x.put(last)
	all = append(all, last)
	other := e("b", 7)
	x.put(other)
	all = append(all, other)
	if x.n != len(all) {
		t.Fatalf("n = %d, want %d", x.n, len(all))
	}
	for _, en := range all {
		if got := x.get(en.id); got != en {
			t.Fatalf("get %v = %p, want %p", en.id, got, en)
		}
	}
	if x.get(GangID{Job: "a", Gang: 5000000}) != nil || x.get(GangID{Job: "c"}) != nil {
		t.Fatal("get of an unknown id found something")
	}
	if j := x.jobs["a"]; len(j.byNumber) > 2*100002+denseSlack || len(j.sparse) != 1 {
		t.Fatalf("job a: slice of %d, %d sparse", len(j.byNumber), len(j.sparse))
	}
	for _, en := range all {
		x.del(en.id)
		x.del(en.id) // twice: no effect
		if x.get(en.id) != nil {
			t.Fatalf("%v still found after del", en.id)
		}
	}
	if x.n != 0 || len(x.jobs) != 0 {
		t.Fatalf("after removing everything: n %d, %d jobs kept", x.n, len(x.jobs))
	}
}

// An entry is allocated per queued task: it stays within one small size
// class.
func TestEntryIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 128 {
		t.Fatalf("entry is %d bytes, more than 128", n)
	}
}
