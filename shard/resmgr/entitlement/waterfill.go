package entitlement

import (
	"math"
	"slices"
)

// level is one claimant in a water-filling: the fill level at which it is
// saturated (cap / weight), its position, and the sum of the weights of
// itself and every claimant saturated after it.
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

// waterfill divides amount among claimants with the given caps and weights:
// out[i] = min(caps[i], x*weights[i]) for the one fill level x at which the
// outs add up to amount, or out = caps when the caps add up to no more than
// amount. Claimants with a cap or weight that is not above zero get nothing.
// It returns the sum of out. order is scratch space of at least len(caps).
//
// Cost: O(k) when everyone is satisfied. Otherwise a few O(k) rounds first
// settle the claimants whose saturation level lies below the level the
// remaining amount would reach if nobody saturated (that level never
// exceeds the final one, so they are saturated for sure); usually that ends
// it, and what is left is sorted by saturation level: O(k log k) at worst.
func waterfill(amount float64, caps, weights, out []float64, order []level) float64 {
	total, weight := 0.0, 0.0
	n := 0
	for i, c := range caps {
		out[i] = 0
		w := weights[i]
		if c > 0 && w > 0 && !(math.IsInf(c, 1) && math.IsInf(w, 1)) {
			total += c
			weight += w
			order[n] = level{at: c / w, i: int32(i)}
			n++
		}
	}
	if !(amount > 0) || n == 0 {
		return 0
	}
	active := order[:n]
	if total <= amount {
		for _, c := range active {
			out[c.i] = caps[c.i]
		}
		return total
	}
	remaining := amount
	for range settleRounds {
		fill := remaining / weight
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
			for _, c := range active {
				out[c.i] = min(fill*weights[c.i], caps[c.i])
			}
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
func fillSorted(remaining float64, caps, weights, out []float64, active []level) {
	sortLevels(active)
	sum := 0.0
	for j := len(active) - 1; j >= 0; j-- {
		sum += weights[active[j].i]
		active[j].weightFrom = sum
	}
	j := 0
	for ; j < len(active); j++ {
		c := active[j]
		if c.at*c.weightFrom > remaining {
			break
		}
		out[c.i] = caps[c.i]
		remaining = max(remaining-caps[c.i], 0)
	}
	if j < len(active) {
		fill := remaining / active[j].weightFrom
		for _, c := range active[j:] {
			out[c.i] = min(fill*weights[c.i], caps[c.i])
		}
	}
}

// splitter holds the scratch space of one level's division so that a pass
// allocates nothing once its buffers have grown to the widest parent.
type splitter struct {
	caps  []float64
	grant []float64
	extra []float64
	order []level
}

func (s *splitter) grow(n int) {
	if cap(s.caps) >= n {
		s.caps, s.grant, s.extra, s.order = s.caps[:n], s.grant[:n], s.extra[:n], s.order[:n]
		return
	}
	s.caps = make([]float64, n)
	s.grant = make([]float64, n)
	s.extra = make([]float64, n)
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
// capped by what each child's limit leaves above its entitlement.
func (s *splitter) divide(amount, elasticCap float64, res, lim, share, dem, ent, head []float64, headroom bool) {
	n := len(dem)
	s.grow(n)
	for i := range n {
		s.caps[i] = min(dem[i], res[i])
	}
	used := waterfill(amount, s.caps, res, s.grant, s.order)
	for i := range n {
		s.caps[i] = dem[i] - s.grant[i]
	}
	waterfill(amount-used, s.caps, share, s.extra, s.order)
	given := 0.0
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
