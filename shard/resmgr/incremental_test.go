package resmgr

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// passFromScratch runs a pass that ignores what the scheduler kept from
// earlier passes: every demand, entitlement, admission and figure is
// computed again over every leaf, as after a new tree.
func (s *Scheduler) passFromScratch(in PassInput) Decision {
	s.rebuild = true
	return s.Pass(in)
}

// wideSpecs builds a valid tree of two or three levels with up to eight
// children a parent, so that most passes change few of many leaves.
func wideSpecs(rng *rand.Rand) []entitlement.PoolSpec {
	unlimited := model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited}
	spec := func(path string, res int64) entitlement.PoolSpec {
		s := entitlement.PoolSpec{Path: path, Reservation: model.Resources{MilliCPU: res, MemMB: res}, Limit: unlimited}
		for k := range model.ResourceKinds {
			s.Share = s.Share.Set(k, float64(1+rng.IntN(3)))
		}
		if rng.IntN(5) == 0 {
			s.Limit.MilliCPU = res + int64(5*rng.IntN(8))
		}
		return s
	}
	specs := []entitlement.PoolSpec{spec("/", 80)}
	groups := 1 + rng.IntN(4)
	for g := range groups {
		group := fmt.Sprintf("/p%d", g)
		specs = append(specs, spec(group, int64(80/groups)))
		kids := rng.IntN(8)
		for c := range kids {
			specs = append(specs, spec(fmt.Sprintf("%s/p%d", group, c), int64(80/groups/kids)))
		}
	}
	return specs
}

func randomTreeOf(t *testing.T, rng *rand.Rand) *entitlement.Tree {
	specs := randomSpecs(rng)
	if rng.IntN(2) == 0 {
		specs = wideSpecs(rng)
	}
	tree, err := entitlement.NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestIncrementalMatchesFromScratch drives two schedulers with the same
// random enqueues, adoptions, removals, releases, starts, job limits, tree
// changes, capacity, slack and SLA room: one runs its passes on what
// changed, the other starts every pass from scratch. Answers, decisions,
// figures, and every gang's state, reason for waiting and queue position
// must be the same after every step.
func TestIncrementalMatchesFromScratch(t *testing.T) {
	seeds := 250
	if testing.Short() {
		seeds = 40
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 11))
		tree := randomTreeOf(t, rng)
		cfg := Config{PreemptAfterPasses: rng.IntN(3)}
		inc, scratch := New(tree, cfg), New(tree, cfg)
		var ids []GangID // every gang ever offered, to compare
		in := PassInput{}
		for step := range 300 {
			// both does the same to each scheduler and compares the answers.
			both := func(what string, f func(s *Scheduler, fromScratch bool) any) {
				if a, b := f(inc, false), f(scratch, true); !reflect.DeepEqual(a, b) {
					t.Fatalf("seed %d step %d: %s:\n incremental  %+v\n from scratch %+v", seed, step, what, a, b)
				}
			}
			g := randomGang(rng, tree)
			task := model.TaskID{Job: g.ID.Job, Instance: g.ID.Gang*8 + uint32(rng.IntN(4))}
			switch op := rng.IntN(100); {
			case op < 27:
				ids = append(ids, g.ID)
				both("enqueue", func(s *Scheduler, _ bool) any { return s.Enqueue(g) == nil })
			case op < 30:
				ids = append(ids, g.ID)
				both("adopt", func(s *Scheduler, _ bool) any { return s.Adopt(g) == nil })
			case op < 37:
				both("remove", func(s *Scheduler, _ bool) any { return s.Remove(g.ID) })
			case op < 44:
				both("finished", func(s *Scheduler, _ bool) any { return s.Finished(g.ID, task) })
			case op < 48:
				both("started", func(s *Scheduler, _ bool) any { return s.Started(g.ID) })
			case op < 51:
				limit := uint32(rng.IntN(10))
				both("job limit", func(s *Scheduler, _ bool) any { s.SetJobLimit(g.ID.Job, limit); return nil })
			case op < 53:
				if rng.IntN(3) > 0 {
					tree = randomTreeOf(t, rng)
				}
				both("new tree", func(s *Scheduler, _ bool) any { return s.SetTree(tree) })
			case op < 60:
				// The shell finishes the kills of some preempted gangs and
				// queues them again.
				for _, id := range ids {
					if _, state, _ := scratch.Lookup(id); state != Preempting || rng.IntN(2) == 0 {
						continue
					}
					both("requeue", func(s *Scheduler, _ bool) any {
						g, _, _ := s.Lookup(id)
						return [2]bool{s.Remove(id), s.Enqueue(g) == nil}
					})
				}
			default:
				in = randomInput(rng, in)
				both("pass", func(s *Scheduler, fromScratch bool) any {
					if fromScratch {
						return s.passFromScratch(in)
					}
					return s.Pass(in)
				})
				both("figures", func(s *Scheduler, _ bool) any { return s.Figures() })
			}
			for _, id := range ids {
				both("gang "+id.String(), func(s *Scheduler, _ bool) any {
					type seen struct {
						state        GangState
						known, waits bool
						why          Wait
						position     int
					}
					_, state, known := s.Lookup(id)
					why, waits := s.Why(id)
					return seen{state, known, waits, why, s.Position(id)}
				})
			}
		}
	}
}

// randomInput keeps the last pass's input most of the time, as a shell
// does between host changes, and otherwise changes the capacity, the
// slack or the SLA room.
func randomInput(rng *rand.Rand, last PassInput) PassInput {
	in := last
	switch rng.IntN(8) {
	case 0:
		in.Capacity = model.Resources{MilliCPU: int64(10 * rng.IntN(12)), MemMB: int64(10 * rng.IntN(12))}
	case 1:
		in.Slack = model.Resources{MilliCPU: int64(5 * rng.IntN(6)), MemMB: int64(5 * rng.IntN(6))}
	case 2:
		in.Disruptable = map[model.JobID]uint32{}
		for j := range 5 {
			if rng.IntN(2) == 0 {
				in.Disruptable[model.JobID(fmt.Sprintf("j%d", j))] = uint32(rng.IntN(6))
			}
		}
	case 3:
		in.Disruptable = nil
	}
	return in
}

func TestLeafSet(t *testing.T) {
	for _, size := range []int{0, 1, 63, 64, 65, 200} {
		for _, n := range []int{0, 1, 63, 64, 65, 130, size} {
			if n > size {
				continue
			}
			s := newLeafSet(size)
			s.addAll(n)
			var got []int
			for i := s.next(0); i >= 0; i = s.next(i + 1) {
				got = append(got, i)
			}
			if len(got) != n || (n > 0 && got[n-1] != n-1) {
				t.Fatalf("size %d: addAll(%d) holds %v", size, n, got)
			}
			if d := s.drain(nil); len(d) != n || s.next(0) != -1 {
				t.Fatalf("size %d: drain of %d gave %d, left %d", size, n, len(d), s.next(0))
			}
		}
	}
}
