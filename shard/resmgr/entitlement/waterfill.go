package entitlement

import (
	"math"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// level is one claimant in a water-filling: the fill level at which it is
// saturated (cap / weight), its position, and the sum of the weights of
// itself and every claimant saturated after it. When the claimants left
// unsaturated are apportioned, at is reused for the fractional remainder.
type level struct {
	at         float64
	i          int32
	weightFrom float64
}

func byLevel(a, b level) int {
	switch {
	case a.at < b.at:
		return -1
	case a.at > b.at:
		return 1
	}
	return 0
}

// sortLevels orders claimants by saturation level: insertion sort for the
// few children most parents have, the library's sort beyond that.
func sortLevels(ls []level) {
	if len(ls) > 16 {
		slices.SortFunc(ls, byLevel)
		return
	}
	for i := 1; i < len(ls); i++ {
		x := ls[i]
		j := i
		for ; j > 0 && ls[j-1].at > x.at; j-- {
			ls[j] = ls[j-1]
		}
		ls[j] = x
	}
}

// addCapped adds two non-negative amounts, saturating at model.Unlimited.
func addCapped(a, b int64) int64 {
	if a > model.Unlimited-b {
		return model.Unlimited
	}
	return a + b
}

// waterfill divides amount among claimants with the given caps and weights:
// out[i] = min(caps[i], x*weights[i]) for the one fill level x at which the
// outs add up to amount, or out = caps when the caps add up to no more than
// amount, in whole units: the claimants left below their caps share what
// the saturated ones leave by the largest remainder rule (apportion).
// Claimants with a cap or weight that is not above zero, or a weight that
// is not finite, get nothing. It returns the sum of out. order is scratch
// space of at least len(caps).
//
// Cost: O(k) when everyone is satisfied. Otherwise a few O(k) rounds first
// settle the claimants whose saturation level lies below the level the
// remaining amount would reach if nobody saturated (that level never
// exceeds the final one, so they are saturated for sure); usually that ends
// it, and what is left is sorted by saturation level: O(k log k) at worst.
// Apportioning the last units sorts the claimants left unsaturated by
// remainder when any unit is left over.
func waterfill(amount int64, caps []int64, weights []float64, out []int64, order []level) int64 {
	var total int64
	weight := 0.0
	n := 0
	for i, c := range caps {
		out[i] = 0
		w := weights[i]
		if c > 0 && w > 0 && w <= math.MaxFloat64 {
			total = addCapped(total, c)
			weight += w
			order[n] = level{at: float64(c) / w, i: int32(i)}
			n++
		}
	}
	if amount <= 0 || n == 0 {
		return 0
	}
	active := order[:n]
	if total <= amount && total < model.Unlimited {
		for _, c := range active {
			out[c.i] = caps[c.i]
		}
		return total
	}
	remaining := amount
	for range settleRounds {
		fill := float64(remaining) / weight
		kept, keptWeight := 0, 0.0
		for _, c := range active {
			if c.at <= fill {
				out[c.i] = caps[c.i]
				remaining -= caps[c.i]
				continue
			}
			active[kept] = c
			kept++
			keptWeight += weights[c.i]
		}
		remaining = max(remaining, 0)
		if kept == len(active) {
			apportion(remaining, caps, weights, out, active, weight)
			return amount
		}
		active, weight = active[:kept], keptWeight
		if kept == 0 {
			return amount - remaining
		}
	}
	fillSorted(remaining, caps, weights, out, active)
	return amount
}

// settleRounds bounds the linear rounds of waterfill before it sorts.
const settleRounds = 4

// fillSorted finishes a water-filling of remaining among active claimants,
// none of which has been given anything yet, by walking them in order of
// saturation level.
func fillSorted(remaining int64, caps []int64, weights []float64, out []int64, active []level) {
	sortLevels(active)
	sum := 0.0
	for j := len(active) - 1; j >= 0; j-- {
		sum += weights[active[j].i]
		active[j].weightFrom = sum
	}
	j := 0
	for ; j < len(active); j++ {
		c := active[j]
		if c.at*c.weightFrom > float64(remaining) {
			break
		}
		out[c.i] = caps[c.i]
		remaining -= caps[c.i]
	}
	if j < len(active) {
		apportion(remaining, caps, weights, out, active[j:], active[j].weightFrom)
	}
}

// apportion divides remaining whole units among the active claimants in
// proportion to their weights (weight is their sum), by the largest
// remainder rule: each gets the floor of its exact part, then the units
// left over go one at a time to the largest fractional remainders, ties to
// the claimant that comes first. Nobody gets more than its cap; callers
// pass claimants whose exact part lies below their cap, so the rule is
// never bent in practice.
func apportion(remaining int64, caps []int64, weights []float64, out []int64, active []level, weight float64) {
	if remaining <= 0 || len(active) == 0 {
		return
	}
	per := float64(remaining) / weight
	left := remaining
	for j := range active {
		c := &active[j]
		exact := per * weights[c.i]
		whole := min(int64(exact), caps[c.i])
		out[c.i] = whole
		c.at = exact - float64(whole)
		left -= whole
	}
	if left == 0 {
		return
	}
	slices.SortFunc(active, byRemainder)
	for left > 0 {
		given := false
		for _, c := range active {
			if left == 0 {
				break
			}
			if out[c.i] < caps[c.i] {
				out[c.i]++
				left--
				given = true
			}
		}
		if !given {
			return
		}
	}
	// Float rounding gave out more than remaining: take back from the
	// smallest remainders.
	for j := len(active) - 1; left < 0 && j >= 0; j-- {
		if c := active[j]; out[c.i] > 0 {
			out[c.i]--
			left++
		}
	}
}

// byRemainder orders claimants by fractional remainder, largest first,
// ties by position.
func byRemainder(a, b level) int {
	switch {
	case a.at > b.at:
		return -1
	case a.at < b.at:
		return 1
	}
	return int(a.i) - int(b.i)
}

// splitter holds the scratch space of one level's division so that a pass
// allocates nothing once its buffers have grown to the widest parent.
type splitter struct {
	caps  []int64
	grant []int64
	extra []int64
	resW  []float64 // reservations as weights
	order []level
}

func (s *splitter) grow(n int) {
	if cap(s.caps) >= n {
		s.caps, s.grant, s.extra, s.resW, s.order = s.caps[:n], s.grant[:n], s.extra[:n], s.resW[:n], s.order[:n]
		return
	}
	s.resW = make([]float64, n)
	s.caps = make([]int64, n)
	s.grant = make([]int64, n)
	s.extra = make([]int64, n)
	s.order = make([]level, n)
}

// divide splits one resource of a parent among its children. amount is the
// parent's entitlement; elasticCap is the most the parent may hand out as
// entitlement plus headroom. dem must already be capped by lim. It writes
// ent and, when headroom is set, head (zero otherwise).
//
// Reservation phase: each child gets min(dem, res), water-filled by
// reservation when amount does not cover that. Elastic phase: the rest is
// water-filled by share, capped by what each child still demands. Headroom:
// elasticCap minus the children's entitlements is water-filled by share,
// capped by what each child's limit leaves above its entitlement. Each
// phase hands out whole units by the largest remainder rule.
func (s *splitter) divide(amount, elasticCap int64, res, lim []int64, share []float64, dem, ent, head []int64, headroom bool) {
	n := len(dem)
	s.grow(n)
	for i := range n {
		s.caps[i] = min(dem[i], res[i])
		s.resW[i] = float64(res[i])
	}
	used := waterfill(amount, s.caps, s.resW, s.grant, s.order)
	for i := range n {
		s.caps[i] = dem[i] - s.grant[i]
	}
	waterfill(amount-used, s.caps, share, s.extra, s.order)
	var given int64
	for i := range n {
		ent[i] = s.grant[i] + s.extra[i]
		given += ent[i]
	}
	if !headroom {
		clear(head)
		return
	}
	for i := range n {
		s.caps[i] = lim[i] - ent[i]
	}
	waterfill(elasticCap-given, s.caps, share, head, s.order)
}
