package entitlement

import (
	"math"

	"github.com/peloton-federated/peloton/shard/model"
)

// Claim is one claimant of a single-level Split: its reservation, limit,
// share and demand per resource.
type Claim struct {
	Reservation model.Resources
	Limit       model.Resources
	Share       model.Shares
	Demand      model.Resources
}

// Grant is what Split gives one claimant.
type Grant struct {
	// Entitlement is the max-min fair share, never above min(demand, limit).
	Entitlement model.Resources
	// Headroom is unclaimed amount above Entitlement, capped at the limit
	// (Options.Headroom only).
	Headroom model.Resources
}

// Split divides amount among claims with the same rules as one level of a
// tree pass (reservation first, then water-filling by share, then optional
// headroom), as the federation's global pass divides a pool among regions.
// Negative amounts count as zero, and so do unlimited reservations and
// shares that are negative, infinite or NaN; a claim whose share is zero
// gets nothing beyond its reservation.
func Split(amount model.Resources, claims []Claim, opts Options) []Grant {
	var s Splitter
	return s.Split(amount, claims, opts)
}

// Splitter is Split with its scratch space kept from one call to the
// next, for callers that split many times in a row (the global pass splits
// every pool): once its buffers have grown to the most claims, a call
// allocates nothing. The zero value is ready to use; a Splitter is not safe
// for concurrent use.
type Splitter struct {
	buf    []int64
	share  []float64
	grants []Grant
	sp     splitter
}

// Split is the package's Split. The grants it returns are valid until the
// next call.
func (s *Splitter) Split(amount model.Resources, claims []Claim, opts Options) []Grant {
	n := len(claims)
	if cap(s.grants) < n {
		s.grants, s.buf, s.share = make([]Grant, n), make([]int64, 5*n), make([]float64, n)
	}
	grants := s.grants[:n]
	clear(grants)
	if n == 0 {
		return grants
	}
	res, lim := s.buf[:n], s.buf[n:2*n]
	dem, ent, head := s.buf[2*n:3*n], s.buf[3*n:4*n], s.buf[4*n:5*n]
	share := s.share[:n]
	for k := range kinds {
		for i, c := range claims {
			res[i] = nonNegative(c.Reservation.Get(k))
			if res[i] == model.Unlimited {
				res[i] = 0
			}
			lim[i] = nonNegative(c.Limit.Get(k))
			share[i] = finite(c.Share.Get(k))
			dem[i] = min(nonNegative(c.Demand.Get(k)), lim[i])
		}
		a := nonNegative(amount.Get(k))
		s.sp.divide(a, a, res, lim, share, dem, ent, head, opts.Headroom)
		for i := range grants {
			grants[i].Entitlement = grants[i].Entitlement.Set(k, ent[i])
			grants[i].Headroom = grants[i].Headroom.Set(k, head[i])
		}
	}
	return grants
}

// finite maps negative, infinite and NaN weights to zero.
func finite(v float64) float64 {
	if v > 0 && v <= math.MaxFloat64 {
		return v
	}
	return 0
}
