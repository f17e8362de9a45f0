package entitlement

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWaterfillMatchesProgressiveFill compares the water-filling against
// the reference's round-by-round filling on random claimants: narrow and
// wide levels, equal caps (ties), geometric caps (many rounds before the
// sorted finish), zero caps and weights.
func TestWaterfillMatchesProgressiveFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for c := range 5000 {
		n := 1 + rng.IntN(8)
		if c%3 == 0 {
			n = 1 + rng.IntN(60)
		}
		caps, weights := make([]int64, n), make([]float64, n)
		var total int64
		for i := range n {
			switch c % 4 {
			case 0:
				caps[i] = int64(math.Pow(1.7, float64(i))) // geometric: one saturates per round
			case 1:
				caps[i] = 10 // ties
			default:
				caps[i] = randomAmount(rng, 100)
			}
			weights[i] = randomShare(rng)
			if rng.IntN(10) == 0 {
				weights[i] = 0
			}
			if weights[i] > 0 {
				total += caps[i]
			}
		}
		amount := int64(float64(total) * rng.Float64() * 1.2)
		if c%7 == 0 {
			amount = total // exactly enough
		}
		out := make([]int64, n)
		given := waterfill(amount, caps, weights, out, make([]level, n))
		want := progressiveFill(amount, caps, weights)
		var sum int64
		for i := range n {
			sum += out[i]
			if out[i] != want[i] || out[i] > caps[i] {
				t.Fatalf("case %d: claimant %d of %d got %v, reference %v (caps %v weights %v amount %v)",
					c, i, n, out[i], want[i], caps, weights, amount)
			}
		}
		if sum != given || given != min(amount, total) {
			t.Fatalf("case %d: returned %v, gave %v of %v", c, given, sum, amount)
		}
	}
}
