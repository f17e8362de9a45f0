package resmgr

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// randomSpecs builds a valid random tree of up to three levels over cpu and
// mem, with pool names from a small set so that successive trees overlap.
func randomSpecs(rng *rand.Rand) []entitlement.PoolSpec {
	var specs []entitlement.PoolSpec
	var add func(path string, reservation model.Resources, depth int)
	add = func(path string, reservation model.Resources, depth int) {
		spec := entitlement.PoolSpec{Path: path, Reservation: reservation}
		for k := range model.ResourceKinds {
			spec.Limit = spec.Limit.Set(k, model.Unlimited)
			spec.Share = spec.Share.Set(k, float64(1+rng.IntN(4)))
		}
		if rng.IntN(4) == 0 {
			spec.Limit.MilliCPU = reservation.MilliCPU + int64(5*rng.IntN(12))
		}
		specs = append(specs, spec)
		if depth == 2 || (depth > 0 && rng.IntN(2) == 0) {
			return
		}
		left := reservation
		for c := range 1 + rng.IntN(3) {
			var r model.Resources
			r.MilliCPU = rng.Int64N(left.MilliCPU + 1)
			r.MemMB = rng.Int64N(left.MemMB + 1)
			left = left.Sub(r)
			child := fmt.Sprintf("/p%d", c)
			if path != "/" {
				child = path + child
			}
			add(child, r, depth+1)
		}
	}
	add("/", model.Resources{MilliCPU: int64(10 * rng.IntN(5)), MemMB: int64(10 * rng.IntN(5))}, 0)
	return specs
}

func randomPool(rng *rand.Rand, tree *entitlement.Tree) string {
	if rng.IntN(20) == 0 {
		return "/nowhere"
	}
	return tree.Path(rng.IntN(tree.Len()))
}

func randomGang(rng *rand.Rand, tree *entitlement.Tree) Gang {
	id := GangID{Job: model.JobID(fmt.Sprintf("j%d", rng.IntN(5))), Gang: uint32(rng.IntN(12))}
	n := 1 + rng.IntN(4)
	if rng.IntN(30) == 0 {
		n = 0
	}
	g := Gang{
		ID:          id,
		Pool:        randomPool(rng, tree),
		Priority:    int32(rng.IntN(4)),
		Preemptible: rng.IntN(3) > 0,
		Revocable:   rng.IntN(6) == 0,
		PerTask:     model.Resources{MilliCPU: int64(1 + rng.IntN(10)), MemMB: int64(rng.IntN(8))},
	}
	if rng.IntN(40) == 0 {
		g.PerTask.MilliCPU = -1
	}
	for i := range n {
		g.Members = append(g.Members, Member{Task: model.TaskID{Job: id.Job, Instance: id.Gang*8 + uint32(i)}})
	}
	return g
}

// TestMatchesReference drives the scheduler and the plain reference with the
// same random operations and requires the same answers, decisions and
// figures; after every pass it checks the invariants directly.
func TestMatchesReference(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 7))
		tree, err := entitlement.NewTree(randomSpecs(rng))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		cfg := Config{PreemptAfterPasses: rng.IntN(3)}
		s, r := New(tree, cfg), newRef(tree, cfg)
		for step := range 250 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			switch op := rng.IntN(100); {
			case op < 35:
				g := randomGang(rng, tree)
				adopt := rng.IntN(10) == 0
				var got error
				var want bool
				if adopt {
					got, want = s.Adopt(g), r.Adopt(g)
				} else {
					got, want = s.Enqueue(g), r.Enqueue(g)
				}
				if (got == nil) != want {
					t.Fatalf("%s: enqueue %+v: got %v, reference accepted=%v", where, g, got, want)
				}
			case op < 43:
				g := randomGang(rng, tree)
				if got, want := s.Remove(g.ID), r.Remove(g.ID); got != want {
					t.Fatalf("%s: remove %s: got %v want %v", where, g.ID, got, want)
				}
			case op < 50:
				g := randomGang(rng, tree)
				task := model.TaskID{Job: g.ID.Job, Instance: g.ID.Gang*8 + uint32(rng.IntN(4))}
				if got, want := s.Finished(g.ID, task), r.Finished(g.ID, task); got != want {
					t.Fatalf("%s: finished %s %s: got %v want %v", where, g.ID, task, got, want)
				}
			case op < 54:
				g := randomGang(rng, tree)
				if got, want := s.Started(g.ID), r.Started(g.ID); got != want {
					t.Fatalf("%s: started %s: got %v want %v", where, g.ID, got, want)
				}
			case op < 56:
				job, limit := model.JobID(fmt.Sprintf("j%d", rng.IntN(5))), uint32(rng.IntN(10))
				s.SetJobLimit(job, limit)
				r.SetJobLimit(job, limit)
			case op < 58:
				next, err := entitlement.NewTree(randomSpecs(rng))
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				tree = next
				if got, want := s.SetTree(tree), r.SetTree(tree); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: SetTree dropped %v, reference %v", where, got, want)
				}
			case op < 68:
				// The shell finishes the kills of preempted gangs and queues
				// them again.
				for _, x := range append([]*refGang(nil), r.gangs...) {
					if x.state != Preempting || rng.IntN(2) == 0 {
						continue
					}
					g := x.g
					s.Remove(g.ID)
					r.Remove(g.ID)
					if err := s.Enqueue(g); (err == nil) != r.Enqueue(g) {
						t.Fatalf("%s: enqueue again %s: %v", where, g.ID, err)
					}
				}
			default:
				in := PassInput{
					Capacity: model.Resources{MilliCPU: int64(10 * rng.IntN(12)), MemMB: int64(10 * rng.IntN(12))},
					Slack:    model.Resources{MilliCPU: int64(5 * rng.IntN(6)), MemMB: int64(5 * rng.IntN(6))},
				}
				got, want := s.Pass(in), r.Pass(in)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: pass %+v:\n got  %+v\n want %+v", where, in, got, want)
				}
				if f := s.Figures(); !reflect.DeepEqual(f, r.last) {
					t.Fatalf("%s: figures\n got  %+v\n want %+v", where, f, r.last)
				}
				checkPassInvariants(t, where, r, in, got)
			}
			if s.Len() != len(r.gangs) {
				t.Fatalf("%s: %d gangs, reference %d", where, s.Len(), len(r.gangs))
			}
			for _, x := range r.gangs {
				want := x.state
				if want == Queued && r.parked(x) {
					want = Parked
				}
				if _, got, ok := s.Lookup(x.g.ID); !ok || got != want {
					t.Fatalf("%s: %s is %v (known %v), reference %v", where, x.g.ID, got, ok, want)
				}
			}
		}
	}
}

// checkPassInvariants checks, on the reference's state after a pass (equal
// to the scheduler's), what must hold whatever the operations were.
func checkPassInvariants(t *testing.T, where string, r *refScheduler, in PassInput, d Decision) {
	t.Helper()
	c := r.clusterSums()
	admittedNonRevocable := false
	for _, id := range d.Admit {
		if x := r.find(id); x != nil && x.kind != Revocable {
			admittedNonRevocable = true
		}
	}
	if admittedNonRevocable {
		if held := c.alloc[NonPreemptible].Add(c.alloc[Preemptible]); !held.Fits(in.Capacity) {
			t.Fatalf("%s: admitted up to %v, capacity %v", where, held, in.Capacity)
		}
	}
	for _, id := range d.Admit {
		if x := r.find(id); x != nil && x.kind == Revocable && !c.alloc[Revocable].Fits(in.Slack) {
			t.Fatalf("%s: revocable work holds %v, slack %v", where, c.alloc[Revocable], in.Slack)
		}
	}
	if !c.alloc[Revocable].Sub(c.releasing[Revocable]).Fits(in.Slack) {
		t.Fatalf("%s: revocable work keeps %v of slack %v", where, c.alloc[Revocable].Sub(c.releasing[Revocable]), in.Slack)
	}
	for _, p := range d.Preempt {
		x := r.find(p.Gang)
		if x == nil || x.kind == NonPreemptible {
			t.Fatalf("%s: preempted %s, which is non-preemptible or unknown", where, p.Gang)
		}
		if (x.kind == Revocable) != (p.Reason == ReasonSlackShrank) {
			t.Fatalf("%s: %s (%v) preempted for %q", where, p.Gang, x.kind, p.Reason)
		}
	}
	if max(r.cfg.PreemptAfterPasses, 1) != 1 {
		return
	}
	// With no hysteresis, after the pass every leaf is within its
	// entitlement, unless what it holds above it is not preemptible, or
	// nobody else wants it and it is within its limit.
	fig := r.last
	var wanted [len(model.ResourceKinds)]bool
	for i, f := range fig {
		if r.tree.IsLeaf(i) {
			for k := range wanted {
				wanted[k] = wanted[k] || f.Entitlement.Get(k) > f.Allocation.Get(k)
			}
		}
	}
	for i, f := range fig {
		if !r.tree.IsLeaf(i) {
			continue
		}
		var pool []*refGang
		for _, x := range r.gangs {
			if x.g.Pool == f.Path {
				pool = append(pool, x)
			}
		}
		s := r.poolSums(pool)
		held := s.alloc[NonPreemptible].Add(s.alloc[Preemptible]).Sub(s.releasing[Preemptible])
		if held.Fits(f.Entitlement) || !overAndWanted(held, f.Entitlement, limitBound(r.tree, i), wanted) {
			continue
		}
		for _, v := range victimsOf(pool, Preemptible, anyPriority) {
			if lowersExcess(v.size(), held, f.Entitlement) {
				t.Fatalf("%s: %s holds %v over entitlement %v, and preemptible %s could give some back",
					where, f.Path, held, f.Entitlement, v.g.ID)
			}
		}
	}
}
