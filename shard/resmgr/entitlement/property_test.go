package entitlement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// randomAmount returns a value that is often round (to provoke ties and
// exact saturation), sometimes zero and sometimes fine-grained (a thousand
// units to the round one, as millicores to cores).
func randomAmount(rng *rand.Rand, scale int64) int64 {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1, 2:
		return rng.Int64N(scale + 1)
	case 3:
		return rng.Int64N(scale*1000 + 1)
	default:
		return rng.Int64N(scale*10 + 1)
	}
}

func randomShare(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return []float64{1, 2, 4}[rng.IntN(3)]
	}
	return 0.1 + rng.Float64()*10
}

// randomTree builds a valid tree of depth up to levels below the root, with
// random reservations (children's summing to at most the parent's), limits,
// shares and leaf demands.
func randomTree(rng *rand.Rand, levels, maxFanout int) ([]PoolSpec, map[string]model.Resources) {
	var specs []PoolSpec
	demand := map[string]model.Resources{}
	var grow func(path string, reservation model.Resources, depth int)
	grow = func(path string, reservation model.Resources, depth int) {
		spec := PoolSpec{Path: path, Reservation: reservation}
		for k := range kinds {
			r := reservation.Get(k)
			var l int64
			switch rng.IntN(10) {
			case 0:
				l = model.Unlimited
			case 1:
				l = r
			default:
				l = r + randomAmount(rng, 150)
			}
			spec.Limit = spec.Limit.Set(k, l)
			spec.Share = spec.Share.Set(k, randomShare(rng))
		}
		specs = append(specs, spec)
		fanout := 0
		if depth < levels && (depth == 0 || rng.IntN(4) != 0) {
			fanout = rng.IntN(maxFanout + 1)
		}
		if fanout == 0 {
			var d model.Resources
			for k := range kinds {
				if rng.IntN(4) == 0 {
					d = d.Set(k, reservation.Get(k)) // exactly the reservation
				} else {
					d = d.Set(k, randomAmount(rng, 120))
				}
			}
			demand[path] = d
			return
		}
		// Children's reservations: equal parts (summing exactly to the
		// parent's), random parts of an equal split, or nothing.
		mode := rng.IntN(3)
		for c := range fanout {
			var childReservation model.Resources
			for k := range kinds {
				part := reservation.Get(k) / int64(fanout)
				switch mode {
				case 0:
					childReservation = childReservation.Set(k, part)
				case 1:
					childReservation = childReservation.Set(k, rng.Int64N(part+1))
				}
			}
			childPath := path + "/p" + strconv.Itoa(c)
			if path == RootPath {
				childPath = "/p" + strconv.Itoa(c)
			}
			grow(childPath, childReservation, depth+1)
		}
	}
	var rootReservation model.Resources
	for k := range kinds {
		rootReservation = rootReservation.Set(k, randomAmount(rng, 200))
	}
	grow(RootPath, rootReservation, 0)
	return specs, demand
}

func randomCapacity(rng *rand.Rand) model.Resources {
	var c model.Resources
	for k := range kinds {
		c = c.Set(k, randomAmount(rng, 300))
	}
	return c
}

func demandSlice(tree *Tree, demand map[string]model.Resources) []model.Resources {
	out := make([]model.Resources, tree.Len())
	for i := range out {
		out[i] = demand[tree.Path(i)]
	}
	return out
}

// TestComputeMatchesReference compares the fast pass with the reference on
// thousands of seeded random trees, with and without headroom, unit for
// unit, and checks every invariant on the fast pass's result directly.
func TestComputeMatchesReference(t *testing.T) {
	const cases = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range cases {
		levels, fanout := 4, 4
		if c%5 == 0 {
			levels, fanout = 2, 24 // wide parents
		}
		specs, demand := randomTree(rng, levels, fanout)
		capacity := randomCapacity(rng)
		headroom := c%2 == 0
		tree, err := NewTree(specs)
		if err != nil {
			t.Fatalf("case %d: random tree invalid: %v", c, err)
		}
		solver := NewSolver(tree)
		got := solver.Compute(capacity, demandSlice(tree, demand), Options{Headroom: headroom})
		want := referenceCompute(specs, capacity, demand, headroom)
		for i := range tree.Len() {
			path := tree.Path(i)
			w := want[path]
			for k, name := range model.ResourceKinds {
				for _, f := range []struct {
					field     string
					got, want int64
				}{
					{"demand", got.Demand[i].Get(k), w.demand.Get(k)},
					{"entitlement", got.Entitlement[i].Get(k), w.entitlement.Get(k)},
					{"headroom", got.Headroom[i].Get(k), w.headroom.Get(k)},
				} {
					if f.got != f.want {
						t.Fatalf("case %d: %s %s %s = %v, reference %v", c, path, name, f.field, f.got, f.want)
					}
				}
			}
		}
		if err := checkInvariants(tree, capacity, demand, got, headroom); err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
	}
}

// checkInvariants checks the properties the pass promises, per resource,
// without reference to how it computes them. Sums are exact; fill levels
// may differ by the one unit the rounding rule hands out.
func checkInvariants(tree *Tree, capacity model.Resources, demand map[string]model.Resources, r *Result, headroom bool) error {
	root, ok := tree.Index(RootPath)
	if !ok {
		return nil
	}
	for k, name := range model.ResourceKinds {
		get := func(v []model.Resources, i int) float64 { return float64(v[i].Get(k)) }
		ent := func(i int) float64 { return get(r.Entitlement, i) }
		dem := func(i int) float64 { return get(r.Demand, i) }
		head := func(i int) float64 { return get(r.Headroom, i) }
		capOf := func(i int) float64 { return ent(i) + head(i) }
		spec := func(i int) PoolSpec { return tree.Spec(i) }
		c := float64(capacity.Get(k))
		for i := range tree.Len() {
			p := tree.Path(i)
			lim := float64(spec(i).Limit.Get(k))
			raw := float64(demand[p].Get(k))
			if ent(i) < 0 || head(i) < 0 {
				return fmt.Errorf("%s %s: negative entitlement %v or headroom %v", p, name, ent(i), head(i))
			}
			if tree.IsLeaf(i) && ent(i) > min(raw, lim) {
				return fmt.Errorf("%s %s: entitlement %v above min(demand %v, limit %v)", p, name, ent(i), raw, lim)
			}
			if ent(i) > dem(i) || dem(i) > lim {
				return fmt.Errorf("%s %s: entitlement %v, demand %v, limit %v out of order", p, name, ent(i), dem(i), lim)
			}
			if !headroom && head(i) != 0 {
				return fmt.Errorf("%s %s: headroom %v without the option", p, name, head(i))
			}
			if capOf(i) > lim {
				return fmt.Errorf("%s %s: entitlement+headroom %v above limit %v", p, name, capOf(i), lim)
			}
		}
		// Work conservation at the root.
		if want := min(c, dem(root)); ent(root) != want {
			return fmt.Errorf("root %s: entitlement %v, want min(capacity %v, demand %v)", name, ent(root), c, dem(root))
		}
		if want := min(c, float64(spec(root).Limit.Get(k))); headroom && capOf(root) != want {
			return fmt.Errorf("root %s: elastic cap %v, want min(capacity, limit) %v", name, capOf(root), want)
		}
		for p := range tree.Len() {
			kids := tree.Children(p)
			if len(kids) == 0 {
				continue
			}
			if err := checkLevel(tree.Path(p), name, k, tree, kids, ent(p), capOf(p), ent, dem, capOf, headroom); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkLevel(path, name string, k int, tree *Tree, kids []int, parentEnt, parentCap float64,
	ent, dem, capOf func(int) float64, headroom bool) error {
	sumEnt, sumCap, sumClaims := 0.0, 0.0, 0.0
	unmet, belowLimit := false, false
	for _, c := range kids {
		sumEnt += ent(c)
		sumCap += capOf(c)
		sumClaims += min(dem(c), float64(tree.Spec(c).Reservation.Get(k)))
		if ent(c) < dem(c) {
			unmet = true
		}
		if capOf(c) < float64(tree.Spec(c).Limit.Get(k)) {
			belowLimit = true
		}
	}
	if sumEnt > parentEnt {
		return fmt.Errorf("%s %s: children's entitlements %v exceed parent's %v", path, name, sumEnt, parentEnt)
	}
	if unmet && sumEnt < parentEnt {
		return fmt.Errorf("%s %s: %v idle while a child has unmet demand", path, name, parentEnt-sumEnt)
	}
	if headroom && sumCap > parentCap {
		return fmt.Errorf("%s %s: children's elastic caps %v exceed parent's %v", path, name, sumCap, parentCap)
	}
	if headroom && belowLimit && sumCap < parentCap {
		return fmt.Errorf("%s %s: %v headroom idle while a child is below its limit", path, name, parentCap-sumCap)
	}
	covered := parentEnt >= sumClaims
	// ratio is a child's fill level in the phase that was still being
	// filled: elastic part per share, or reservation-phase grant per
	// reservation when the parent could not cover the reservations. step
	// is what one unit of rounding moves it by.
	weight := func(c int) float64 {
		s := tree.Spec(c)
		if covered {
			return s.Share.Get(k)
		}
		return float64(s.Reservation.Get(k))
	}
	ratio := func(c int) float64 {
		s := tree.Spec(c)
		if covered {
			grant := min(dem(c), float64(s.Reservation.Get(k)))
			return (ent(c) - grant) / s.Share.Get(k)
		}
		if r := float64(s.Reservation.Get(k)); r > 0 {
			return ent(c) / r
		}
		return 0
	}
	step := func(c int) float64 {
		if w := weight(c); w > 0 {
			return 1 / w
		}
		return 0
	}
	for _, c := range kids {
		s := tree.Spec(c)
		res := float64(s.Reservation.Get(k))
		if covered && dem(c) >= res && ent(c) < res {
			return fmt.Errorf("%s %s: entitlement %v below reservation %v though the parent has it", s.Path, name, ent(c), res)
		}
		limitOfPhase := dem(c)
		if !covered {
			limitOfPhase = min(dem(c), res)
			if ent(c) > limitOfPhase {
				return fmt.Errorf("%s %s: entitlement %v above its reservation claim %v in a shortage", s.Path, name, ent(c), limitOfPhase)
			}
		}
		if ent(c) >= limitOfPhase {
			continue // saturated: nothing more to check for this child
		}
		// c could take more: nobody may sit at a higher fill level.
		for _, j := range kids {
			if ratio(j) > ratio(c)+step(j)+step(c) {
				return fmt.Errorf("%s %s: fill level %v above %v of unsaturated %s", tree.Spec(j).Path, name, ratio(j), ratio(c), s.Path)
			}
		}
	}
	return nil
}

// TestSplitMatchesReference checks the single-level entry point against the
// reference's level division on random claims.
func TestSplitMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 3000 {
		n := 1 + rng.IntN(8)
		claims := make([]Claim, n)
		for i := range claims {
			for k := range kinds {
				r := randomAmount(rng, 40)
				claims[i].Reservation = claims[i].Reservation.Set(k, r)
				claims[i].Limit = claims[i].Limit.Set(k, r+randomAmount(rng, 100))
				claims[i].Share = claims[i].Share.Set(k, randomShare(rng))
				claims[i].Demand = claims[i].Demand.Set(k, randomAmount(rng, 120))
			}
		}
		amount := randomCapacity(rng)
		headroom := c%2 == 1
		got := Split(amount, claims, Options{Headroom: headroom})
		for k, name := range model.ResourceKinds {
			res, lim, dem, claim := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
			share := make([]float64, n)
			for i, cl := range claims {
				res[i], lim[i], share[i] = cl.Reservation.Get(k), cl.Limit.Get(k), cl.Share.Get(k)
				dem[i] = min(cl.Demand.Get(k), lim[i])
				claim[i] = min(dem[i], res[i])
			}
			a := amount.Get(k)
			ent, head := referenceLevel(a, a, claim, res, share, dem, lim, headroom)
			for i := range claims {
				if got[i].Entitlement.Get(k) != ent[i] || got[i].Headroom.Get(k) != head[i] {
					t.Fatalf("case %d claim %d %s: got %v+%v, reference %v+%v", c, i, name,
						got[i].Entitlement.Get(k), got[i].Headroom.Get(k), ent[i], head[i])
				}
			}
		}
	}
}

// TestComputeHostileInput feeds values validation would never let into a
// tree (via demand and capacity) and checks nothing overflows or goes
// negative.
func TestComputeHostileInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	odd := []int64{model.Unlimited, math.MinInt64, -5, 0, model.Unlimited - 1, 1 << 62, 1}
	for c := range 500 {
		specs, demand := randomTree(rng, 3, 3)
		tree, err := NewTree(specs)
		if err != nil {
			t.Fatal(err)
		}
		d := demandSlice(tree, demand)
		for i := range d {
			if rng.IntN(3) == 0 {
				d[i] = d[i].Set(rng.IntN(kinds), odd[rng.IntN(len(odd))])
			}
		}
		capacity := randomCapacity(rng).Set(rng.IntN(kinds), odd[rng.IntN(len(odd))])
		r := Compute(tree, capacity, d[:rng.IntN(len(d)+1)], Options{Headroom: c%2 == 0})
		for i := range tree.Len() {
			for k := range kinds {
				for _, v := range []int64{r.Demand[i].Get(k), r.Entitlement[i].Get(k), r.Headroom[i].Get(k)} {
					if v < 0 {
						t.Fatalf("case %d: %s: %v with capacity %v", c, tree.Path(i), v, capacity)
					}
				}
			}
		}
	}
}
