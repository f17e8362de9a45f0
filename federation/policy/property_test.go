package policy

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

func randomResources(rng *rand.Rand, maxAmount int) model.Resources {
	var r model.Resources
	for k := range model.ResourceKinds {
		if rng.IntN(4) > 0 {
			r = r.Set(k, int64(rng.IntN(maxAmount+1)))
		}
	}
	return r
}

// scaleBy returns r times f, rounded down to whole units.
func scaleBy(r model.Resources, f float64) model.Resources {
	for k := range model.ResourceKinds {
		r = r.Set(k, int64(float64(r.Get(k))*f))
	}
	return r
}

var labelKeys = []string{"zone", "rack", "ssd"}
var labelValues = []string{"a", "b", "c"}

// randomHosts returns a few hosts' label maps.
func randomHosts(rng *rand.Rand) []map[string]string {
	hosts := make([]map[string]string, rng.IntN(4))
	for i := range hosts {
		hosts[i] = map[string]string{}
		for _, k := range labelKeys {
			if rng.IntN(3) > 0 {
				hosts[i][k] = labelValues[rng.IntN(len(labelValues))]
			}
		}
	}
	return hosts
}

// summarize builds a region's HostLabels from its hosts' labels.
func summarize(hosts []map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, h := range hosts {
		for k, v := range h {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}

func randomLeaf(rng *rand.Rand) model.Constraint {
	c := model.Constraint{Key: labelKeys[rng.IntN(len(labelKeys))], Op: model.ConstraintOp(1 + rng.IntN(6))}
	for range 1 + rng.IntN(2) {
		c.Values = append(c.Values, labelValues[rng.IntN(len(labelValues))])
	}
	return c
}

func randomConstraint(rng *rand.Rand, depth int) model.Constraint {
	if depth == 0 || rng.IntN(3) > 0 {
		return randomLeaf(rng)
	}
	parts := make([]model.Constraint, 2+rng.IntN(2))
	for i := range parts {
		parts[i] = randomConstraint(rng, depth-1)
	}
	if rng.IntN(2) == 0 {
		return model.Constraint{AllOf: parts}
	}
	return model.Constraint{AnyOf: parts}
}

func randomConstraints(rng *rand.Rand) []model.Constraint {
	cs := make([]model.Constraint, rng.IntN(3))
	for i := range cs {
		cs[i] = randomConstraint(rng, 2)
	}
	return cs
}

// TestCouldSatisfyNeverExcludesAMatchingRegion: whenever some host matches
// every constraint, CouldSatisfy says yes; for positive leaves alone
// (==, in, exists) it is exact.
func TestCouldSatisfyNeverExcludesAMatchingRegion(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		hosts := randomHosts(rng)
		cs := randomConstraints(rng)
		some := slices.ContainsFunc(hosts, func(h map[string]string) bool {
			for j := range cs {
				if !cs[j].Matches(h) {
					return false
				}
			}
			return true
		})
		got := CouldSatisfy(cs, summarize(hosts))
		if some && !got {
			t.Fatalf("case %d: a host matches %v but CouldSatisfy says no (hosts %v)", i, cs, hosts)
		}
		leaf := randomLeaf(rng)
		if leaf.Op == model.OpEquals || leaf.Op == model.OpIn || leaf.Op == model.OpExists {
			want := slices.ContainsFunc(hosts, func(h map[string]string) bool { return leaf.Matches(h) })
			if got := CouldSatisfy([]model.Constraint{leaf}, summarize(hosts)); got != want {
				t.Fatalf("case %d: %s on hosts %v: got %v, want %v", i, leaf.String(), hosts, got, want)
			}
		}
	}
}

type splitCase struct {
	pools   []model.Pool
	regions []RegionState
	now     time.Time
	maxAge  time.Duration
}

var poolPaths = []string{"/a", "/b", "/a/x", "/a/y", "/c"}

func randomSplitCase(rng *rand.Rand) splitCase {
	now := epoch.Add(time.Hour)
	c := splitCase{now: now, maxAge: time.Minute}
	for i := range 1 + rng.IntN(5) {
		r := RegionState{
			Name:     fmt.Sprintf("r%d", i),
			Capacity: randomResources(rng, 1000),
			Seen:     now.Add(-time.Duration(rng.IntN(90)) * time.Second),
			Pools:    map[string]PoolUsage{},
		}
		if rng.IntN(5) == 0 {
			r.Health = Health(rng.IntN(3))
		}
		for _, p := range poolPaths {
			if rng.IntN(3) > 0 {
				r.Pools[p] = PoolUsage{Demand: randomResources(rng, 600)}
			}
		}
		c.regions = append(c.regions, r)
	}
	// Reservations nest: children within their parent; top-level pools
	// together within half the reservation room, or beyond it sometimes.
	for _, path := range poolPaths {
		if path != "/a" && rng.IntN(4) == 0 {
			continue
		}
		p := model.Pool{Path: path, Reservation: randomResources(rng, 400)}
		p.Limit = p.Reservation.Add(randomResources(rng, 800))
		for k := range model.ResourceKinds {
			if rng.IntN(3) == 0 {
				p.Limit = p.Limit.Set(k, model.Unlimited)
			}
		}
		c.pools = append(c.pools, p)
	}
	// Children's reservations within their parent's.
	var a model.Pool
	for _, p := range c.pools {
		if p.Path == "/a" {
			a = p
		}
	}
	for i := range c.pools {
		if c.pools[i].Path == "/a/x" || c.pools[i].Path == "/a/y" {
			half := model.Resources{}
			for k := range model.ResourceKinds {
				half = half.Set(k, a.Reservation.Get(k)/2)
			}
			c.pools[i].Reservation = c.pools[i].Reservation.Min(half)
			c.pools[i].Limit = c.pools[i].Limit.Max(c.pools[i].Reservation)
		}
	}
	return c
}

func (c splitCase) eligible(r RegionState) bool {
	return r.Health != HealthFailed && c.now.Sub(r.Seen) <= c.maxAge
}

func shuffled[T any](rng *rand.Rand, s []T) []T {
	out := slices.Clone(s)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestSplitPoolsProperties checks, on random federations, that the split
// hands out the whole reservation when the regions can hold it, never more
// than capacity, nests, keeps limits above reservations and within the
// global limit, gives ineligible regions nothing, and ignores input order.
func TestSplitPoolsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		c := randomSplitCase(rng)
		got := SplitPools(c.pools, c.regions, c.now, c.maxAge)
		if again := SplitPools(shuffled(rng, c.pools), shuffled(rng, c.regions), c.now, c.maxAge); !reflect.DeepEqual(got, again) {
			t.Fatalf("case %d: order changed the split:\n%v\n%v", i, got, again)
		}
		checkSplit(t, i, c, got)
	}
}

func checkSplit(t *testing.T, i int, c splitCase, got Shares) {
	t.Helper()
	for k, kind := range model.ResourceKinds {
		var room int64 // what the eligible regions can hold in all
		for _, r := range c.regions {
			if c.eligible(r) {
				room += r.Capacity.Get(k)
			}
		}
		// Siblings share their parent's room: together they get all their
		// reservations, or all the room when it is short.
		groupWant := map[string]int64{} // parent path → sum of reservations
		groupGot := map[string]int64{}
		for _, p := range sortedPools(c.pools) {
			var res, lim int64
			unlimited := p.Limit.Get(k) == model.Unlimited
			for _, r := range c.regions {
				s := got[r.Name][p.Path]
				rv, lv := s.Reservation.Get(k), s.Limit.Get(k)
				if !c.eligible(r) && (rv != 0 || lv != 0) {
					t.Fatalf("case %d: ineligible %s gets %s %s %v/%v", i, r.Name, p.Path, kind, rv, lv)
				}
				if rv < 0 || rv > r.Capacity.Get(k) || lv < rv {
					t.Fatalf("case %d: %s %s %s: reservation %v, limit %v, capacity %v", i, r.Name, p.Path, kind, rv, lv, r.Capacity.Get(k))
				}
				if c.eligible(r) && unlimited != (lv == model.Unlimited) {
					t.Fatalf("case %d: %s %s %s: global limit %v, region limit %v", i, r.Name, p.Path, kind, p.Limit.Get(k), lv)
				}
				res += rv
				if !unlimited {
					lim += lv
				}
			}
			want := p.Reservation.Get(k)
			if res > want {
				t.Fatalf("case %d: %s %s: shares add up to %v, above %v", i, p.Path, kind, res, want)
			}
			if l := p.Limit.Get(k); !unlimited && lim > l {
				t.Fatalf("case %d: %s %s: limit shares add up to %v, above %v", i, p.Path, kind, lim, l)
			}
			parent := "/"
			if p.Path == "/a/x" || p.Path == "/a/y" {
				parent = "/a"
			}
			groupWant[parent] += want
			groupGot[parent] += res
		}
		parentRoom := map[string]int64{"/": room}
		for _, r := range c.regions {
			parentRoom["/a"] += got[r.Name]["/a"].Reservation.Get(k)
		}
		for parent, want := range groupWant {
			if w := min(want, parentRoom[parent]); groupGot[parent] != w {
				t.Fatalf("case %d: children of %s %s: shares add up to %v, want %v (reservations %v, room %v)",
					i, parent, kind, groupGot[parent], w, want, parentRoom[parent])
			}
		}
		for _, r := range c.regions {
			var top, children int64
			for _, p := range c.pools {
				v := got[r.Name][p.Path].Reservation.Get(k)
				switch p.Path {
				case "/a", "/b", "/c":
					top += v
				case "/a/x", "/a/y":
					children += v
				}
			}
			if top > r.Capacity.Get(k) || children > got[r.Name]["/a"].Reservation.Get(k) {
				t.Fatalf("case %d: %s %s: top-level %v of capacity %v, children %v of parent %v",
					i, r.Name, kind, top, r.Capacity.Get(k), children, got[r.Name]["/a"].Reservation.Get(k))
			}
		}
		// The first pool in path order sees every region's whole capacity:
		// when the demands fit its reservation, each gets its demand.
		first := sortedPools(c.pools)[0]
		var demand int64
		for _, r := range c.regions {
			if c.eligible(r) {
				demand += min(r.Pools[first.Path].Demand.Get(k), r.Capacity.Get(k))
			}
		}
		if demand <= first.Reservation.Get(k) {
			for _, r := range c.regions {
				d := min(r.Pools[first.Path].Demand.Get(k), r.Capacity.Get(k))
				if c.eligible(r) && got[r.Name][first.Path].Reservation.Get(k) < d {
					t.Fatalf("case %d: %s %s %s: share %v below demand %v", i, r.Name, first.Path, kind, got[r.Name][first.Path].Reservation.Get(k), d)
				}
			}
		}
	}
}

// naiveFit counts whole tasks of perTask that fit in room by adding one at
// a time (up to a bound), the reference for the ranking. Resources the task
// does not use, and unlimited room, do not count.
func naiveFit(room, perTask model.Resources) int64 {
	if perTask.IsZero() {
		return model.Unlimited
	}
	for k := range model.ResourceKinds {
		if perTask.Get(k) == 0 || room.Get(k) == model.Unlimited {
			room = room.Set(k, 0)
			perTask = perTask.Set(k, 0)
		}
	}
	n := 0
	for used := perTask; used.Fits(room) && n < 100000; used = used.Add(perTask) {
		n++
	}
	if n == 100000 || perTask.IsZero() {
		return model.Unlimited
	}
	return int64(n)
}

// TestChooseRegionAgainstReference: the chosen region can take the job and
// no other region that can offers more room on the ranking keys, computed
// naively; the order of the regions does not matter.
func TestChooseRegionAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 3000 {
		c := randomSplitCase(rng)
		for j := range c.regions {
			c.regions[j].Allocation = scaleBy(c.regions[j].Capacity, rng.Float64())
			c.regions[j].HostLabels = summarize(randomHosts(rng))
			c.regions[j].Health = Health(rng.IntN(4) % 3)
			for p, u := range c.regions[j].Pools {
				u.Allocation = scaleBy(u.Demand, rng.Float64())
				c.regions[j].Pools[p] = u
			}
		}
		shares := SplitPools(c.pools, c.regions, c.now, c.maxAge)
		req := JobRequest{Pool: poolPaths[rng.IntN(len(poolPaths))], PerTask: randomResources(rng, 20), Instances: 1 + uint32(rng.IntN(10))}
		if rng.IntN(2) == 0 {
			req.Constraints = []model.Constraint{randomConstraint(rng, 1)}
		}
		if rng.IntN(4) == 0 {
			req.Allowed = []string{"r0", "r2"}
		}
		got, err := ChooseRegion(req, c.regions, shares)
		again, err2 := ChooseRegion(req, shuffled(rng, c.regions), shares)
		if !reflect.DeepEqual(got, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("case %d: order changed the choice: %v / %v", i, got, again)
		}
		type keys struct{ res, lim, free int64 }
		var best *keys
		var bestName string
		for _, r := range c.regions {
			ok := r.Health == HealthAlive && (len(req.Allowed) == 0 || slices.Contains(req.Allowed, r.Name)) &&
				CouldSatisfy(req.Constraints, r.HostLabels) && req.PerTask.Fits(r.Capacity)
			if !ok {
				if r.Name == got.Region {
					t.Fatalf("case %d: chose %s, which cannot take the job", i, r.Name)
				}
				continue
			}
			s := shares[r.Name][req.Pool]
			held := r.Pools[req.Pool].Allocation
			k := keys{naiveFit(s.Reservation.Sub(held), req.PerTask), naiveFit(leftOf(s.Limit, held), req.PerTask), naiveFit(r.Capacity.Sub(r.Allocation), req.PerTask)}
			better := best == nil || k.res > best.res ||
				k.res == best.res && (k.lim > best.lim || k.lim == best.lim && (k.free > best.free || k.free == best.free && r.Name < bestName))
			if better {
				best, bestName = &k, r.Name
			}
		}
		if best == nil {
			if err == nil {
				t.Fatalf("case %d: no region can take the job, yet chose %q", i, got.Region)
			}
			continue
		}
		if err != nil || got.Region != bestName {
			t.Fatalf("case %d: chose %q (%v), reference %q; reasons %v", i, got.Region, err, bestName, got.Reasons)
		}
	}
}
