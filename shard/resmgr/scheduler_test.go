package resmgr

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

func testTree(t *testing.T, paths ...string) *entitlement.Tree {
	t.Helper()
	var specs []entitlement.PoolSpec
	for _, p := range paths {
		specs = append(specs, entitlement.PoolSpec{Path: p,
			Limit: model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited},
			Share: model.EqualShares(1)})
	}
	tree, err := entitlement.NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func gangOf(job string, pool string, members int, cpu int64) Gang {
	g := Gang{ID: GangID{Job: model.JobID(job)}, Pool: pool, Preemptible: true, PerTask: model.Resources{MilliCPU: cpu}}
	for i := range members {
		g.Members = append(g.Members, Member{Task: model.TaskID{Job: model.JobID(job), Instance: uint32(i)}})
	}
	return g
}

func TestEnqueueErrors(t *testing.T) {
	s := New(testTree(t, "/", "/a", "/a/b"), Config{})
	if err := s.Enqueue(gangOf("ok", "/a/b", 1, 1)); err != nil {
		t.Fatal(err)
	}
	negMem := gangOf("negmem", "/a/b", 1, 1)
	negMem.PerTask.MemMB = -1
	inf := gangOf("inf", "/a/b", 1, 1)
	inf.PerTask.GPU = model.Unlimited
	for _, tc := range []struct {
		name string
		gang Gang
		want error
	}{
		{"duplicate", gangOf("ok", "/a/b", 1, 1), ErrDuplicateGang},
		{"unknown pool", gangOf("x", "/zz", 1, 1), ErrUnknownPool},
		{"interior pool", gangOf("x", "/a", 1, 1), ErrNotLeafPool},
		{"root with children", gangOf("x", "/", 1, 1), ErrNotLeafPool},
		{"no members", gangOf("x", "/a/b", 0, 1), ErrEmptyGang},
		{"negative", gangOf("x", "/a/b", 1, -1), ErrBadResources},
		{"negative memory", negMem, ErrBadResources},
		{"infinite", inf, ErrBadResources},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Enqueue(tc.gang); !errors.Is(err, tc.want) {
				t.Fatalf("Enqueue: %v, want %v", err, tc.want)
			}
			if err := s.Adopt(tc.gang); !errors.Is(err, tc.want) {
				t.Fatalf("Adopt: %v, want %v", err, tc.want)
			}
		})
	}
	if s.Len() != 1 {
		t.Fatalf("%d gangs known after refused ones, want 1", s.Len())
	}
}

// TestOddInputs: empty trees, bad amounts and unknown IDs change nothing
// and never panic.
func TestOddInputs(t *testing.T) {
	s := New(nil, Config{PreemptAfterPasses: -5})
	if d := s.Pass(PassInput{Capacity: model.Resources{MilliCPU: -1}}); len(d.Admit)+len(d.Preempt) != 0 {
		t.Fatalf("empty tree decided %+v", d)
	}
	if _, ok := s.PoolFigures("/"); ok {
		t.Fatal("figures for a pool of an empty tree")
	}
	id := GangID{Job: "none"}
	if s.Remove(id) || s.Started(id) || s.Finished(id, model.TaskID{Job: "none"}) {
		t.Fatal("unknown gang reported as known")
	}
	s.SetTree(testTree(t, "/"))
	if err := s.Enqueue(gangOf("a", "/", 2, 1)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []model.Resources{{MilliCPU: -3}, {MilliCPU: math.MinInt64}, {MilliCPU: model.Unlimited}} {
		d := s.Pass(PassInput{Capacity: c, Slack: c})
		if c.MilliCPU == model.Unlimited && len(d.Admit) != 1 {
			t.Fatalf("infinite capacity admitted %v", d.Admit)
		}
	}
	if f, ok := s.PoolFigures("/"); !ok || f.Admitted != 1 || f.Allocation.MilliCPU != 2 {
		t.Fatalf("figures %+v", f)
	}
	if s.Finished(id, model.TaskID{}) || s.Started(GangID{Job: "a", Gang: 9}) {
		t.Fatal("unknown gang reported as known")
	}
	gone := s.SetTree(nil)
	if len(gone) != 1 || gone[0].ID.Job != "a" || s.Len() != 0 {
		t.Fatalf("SetTree(nil) dropped %v, %d left", gone, s.Len())
	}
}

// TestEnqueueCopiesMembers: the caller may reuse its slice.
func TestEnqueueCopiesMembers(t *testing.T) {
	s := New(testTree(t, "/"), Config{})
	g := gangOf("a", "/", 2, 1)
	if err := s.Enqueue(g); err != nil {
		t.Fatal(err)
	}
	g.Members[0].Task.Instance = 77
	got, st, ok := s.Lookup(g.ID)
	if !ok || st != Queued || got.Members[0].Task.Instance != 0 {
		t.Fatalf("lookup %+v %v %v", got, st, ok)
	}
}

// TestFractionalCoresReturnToZero admits thousands of gangs of 0.1, 0.3 and
// 0.7 cores, ends them member by member or whole, in a shuffled order, and
// checks that every pool's allocation comes back to exactly zero: in whole
// millicores nothing drifts, where summed float cores used to leave crumbs.
func TestFractionalCoresReturnToZero(t *testing.T) {
	s := New(testTree(t, "/", "/a", "/b"), Config{})
	rng := rand.New(rand.NewPCG(3, 4))
	cores := []float64{0.1, 0.3, 0.7}
	var gangs []Gang
	for i := range 3000 {
		pool := []string{"/a", "/b"}[i%2]
		g := gangOf(fmt.Sprintf("j%d", i), pool, 1+rng.IntN(3), model.CoresToMilli(cores[rng.IntN(len(cores))]))
		if err := s.Enqueue(g); err != nil {
			t.Fatal(err)
		}
		gangs = append(gangs, g)
	}
	in := PassInput{Capacity: model.Resources{MilliCPU: model.CoresToMilli(100_000)}}
	if d := s.Pass(in); len(d.Admit) != len(gangs) {
		t.Fatalf("admitted %d of %d gangs", len(d.Admit), len(gangs))
	}
	rng.Shuffle(len(gangs), func(i, j int) { gangs[i], gangs[j] = gangs[j], gangs[i] })
	for i, g := range gangs {
		if i%2 == 0 {
			s.Remove(g.ID)
			continue
		}
		for _, m := range g.Members {
			s.Finished(g.ID, m.Task)
		}
	}
	s.Pass(in)
	for _, p := range []string{"/", "/a", "/b"} {
		if f, ok := s.PoolFigures(p); !ok || !f.Allocation.IsZero() || f.Admitted != 0 {
			t.Errorf("%s: allocation %v with %d gangs admitted after every gang ended, want exactly zero", p, f.Allocation, f.Admitted)
		}
	}
}
