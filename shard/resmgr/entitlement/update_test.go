package entitlement

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// TestUpdateMatchesCompute runs Update over random sequences of demand and
// capacity changes on random trees and requires, after every pass, exactly
// what a fresh Compute gives for the same input, and exactly the pools
// whose figures differ from the pass before in the list it returns.
func TestUpdateMatchesCompute(t *testing.T) {
	cases := 600
	if testing.Short() {
		cases = 100
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range cases {
		levels, fanout := 4, 4
		if c%5 == 0 {
			levels, fanout = 2, 24
		}
		specs, demands := randomTree(rng, levels, fanout)
		tree, err := NewTree(specs)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		opts := Options{Headroom: c%2 == 0}
		demand := demandSlice(tree, demands)
		capacity := randomCapacity(rng)
		s := NewSolver(tree)
		prev := clone(s.Compute(capacity, demand, opts))
		for step := range 30 {
			var changed []int
			for range rng.IntN(4) {
				i := rng.IntN(tree.Len())
				changed = append(changed, i) // parents' demands do not count
				var d model.Resources
				if rng.IntN(5) > 0 {
					for k := range kinds {
						d = d.Set(k, randomAmount(rng, 120))
					}
				}
				if rng.IntN(6) == 0 {
					d = demand[i] // reported as changed, the same
				}
				demand[i] = d
			}
			if rng.IntN(5) == 0 {
				capacity = randomCapacity(rng)
			}
			got, moved := s.Update(capacity, demand, changed, opts)
			want := Compute(tree, capacity, demand, opts)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("case %d step %d: Update\n got  %+v\n want %+v", c, step, *got, want)
			}
			var differ []int
			for i := range tree.Len() {
				if got.Demand[i] != prev.Demand[i] || got.Entitlement[i] != prev.Entitlement[i] || got.Headroom[i] != prev.Headroom[i] {
					differ = append(differ, i)
				}
			}
			moved = slices.Sorted(slices.Values(moved))
			if !slices.Equal(moved, differ) {
				t.Fatalf("case %d step %d: moved %v, pools that differ %v", c, step, moved, differ)
			}
			prev = clone(got)
		}
	}
}

// TestUpdateFirstPass: without an earlier pass, or with other options,
// Update is Compute and every pool counts as moved.
func TestUpdateFirstPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specs, demands := randomTree(rng, 3, 4)
	tree, err := NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	demand, capacity := demandSlice(tree, demands), randomCapacity(rng)
	s := NewSolver(tree)
	for _, opts := range []Options{{}, {}, {Headroom: true}} {
		got, moved := s.Update(capacity, demand, nil, opts)
		if want := Compute(tree, capacity, demand, opts); !reflect.DeepEqual(*got, want) {
			t.Fatalf("%+v: got %+v want %+v", opts, *got, want)
		}
		if opts.Headroom && len(moved) != tree.Len() {
			t.Fatalf("options changed: %d pools moved, want all %d", len(moved), tree.Len())
		}
	}
	if _, moved := s.Update(capacity, demand, nil, Options{Headroom: true}); len(moved) != 0 {
		t.Fatalf("nothing changed, yet %v moved", moved)
	}
}

func clone(r *Result) Result {
	return Result{Demand: slices.Clone(r.Demand), Entitlement: slices.Clone(r.Entitlement), Headroom: slices.Clone(r.Headroom)}
}
