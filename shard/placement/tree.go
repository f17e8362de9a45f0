package placement

import "github.com/peloton-federated/peloton/shard/model"

// The amounts a fit tree tracks per host: cpu, mem, disk, gpu and free
// ports as exact integers, then one joint value per ratio in jointRatios.
//
// Per-dimension maxima alone let a subtree through when one host has the
// cpu and another the memory; with hosts filled unevenly a search then
// wanders through many leaves that fit in no single dimension pair. The
// joint value min(cpu/scale.cpu, mem/(scale.mem*ratio)) of a host that fits
// a request is at least the request's own joint value, so its maximum is
// another valid pruning test, and an exact one for requests whose memory to
// cpu ratio is the joint ratio. Joint values are floats, but only bounds for
// pruning: converting an integer to float, dividing by the same positive
// number and taking a minimum never reverse an order, so a host that fits
// a request never has a smaller joint value, and no tolerance is needed.
const plainDims = 5

var jointRatios = [...]float64{0.5, 1, 2}

type amounts struct {
	plain [plainDims]int64
	joint [len(jointRatios)]float64
}

// scale normalises cpu and memory for the joint values.
type scale struct{ cpu, mem float64 }

func (s scale) amounts(r model.Resources, ports int) amounts {
	a := amounts{plain: [plainDims]int64{r.MilliCPU, r.MemMB, r.DiskMB, r.GPU, int64(ports)}}
	c, m := float64(r.MilliCPU)/s.cpu, float64(r.MemMB)/s.mem
	for i, ratio := range jointRatios {
		a.joint[i] = min(c, m/ratio)
	}
	return a
}

// covers reports whether every component of a reaches need.
func (a *amounts) covers(need *amounts) bool {
	return a.plain[0] >= need.plain[0] && a.plain[1] >= need.plain[1] && a.plain[2] >= need.plain[2] &&
		a.plain[3] >= need.plain[3] && a.plain[4] >= need.plain[4] &&
		a.joint[0] >= need.joint[0] && a.joint[1] >= need.joint[1] && a.joint[2] >= need.joint[2]
}

// fitTree is a segment tree over a fixed sequence of hosts. Each node holds
// the per-dimension maximum of its leaves, so a subtree where no host has
// enough of some dimension is skipped whole. The maxima of different
// dimensions may come from different hosts, so a descent can still reach a
// leaf that does not fit; callers check the leaf and search on.
type fitTree struct {
	n    int
	size int
	max  []amounts
}

// empty is the value of leaves past the end: nothing fits there.
var empty = amounts{plain: [plainDims]int64{-1, -1, -1, -1, -1}, joint: [len(jointRatios)]float64{-1, -1, -1}}

func newFitTree(leaves []amounts) *fitTree {
	size := 1
	for size < len(leaves) {
		size *= 2
	}
	t := &fitTree{n: len(leaves), size: size, max: make([]amounts, 2*size)}
	for i := range size {
		if i < len(leaves) {
			t.max[size+i] = leaves[i]
		} else {
			t.max[size+i] = empty
		}
	}
	for i := size - 1; i >= 1; i-- {
		t.pull(i)
	}
	return t
}

func (t *fitTree) pull(i int) {
	l, r := &t.max[2*i], &t.max[2*i+1]
	m := &t.max[i]
	for d := range plainDims {
		m.plain[d] = max(l.plain[d], r.plain[d])
	}
	for d := range jointRatios {
		m.joint[d] = max(l.joint[d], r.joint[d])
	}
}

// set replaces leaf pos and refreshes its ancestors.
func (t *fitTree) set(pos int, v amounts) {
	i := t.size + pos
	t.max[i] = v
	for i >>= 1; i >= 1; i >>= 1 {
		old := t.max[i]
		t.pull(i)
		if t.max[i] == old {
			return
		}
	}
}

// first returns the lowest position in [lo, hi) whose leaf covers need,
// or -1.
func (t *fitTree) first(lo, hi int, need *amounts) int {
	if lo < 0 {
		lo = 0
	}
	if hi > t.n {
		hi = t.n
	}
	if lo >= hi {
		return -1
	}
	return t.descend(1, 0, t.size, lo, hi, need)
}

func (t *fitTree) descend(node, nlo, nhi, lo, hi int, need *amounts) int {
	if nhi <= lo || nlo >= hi || !t.max[node].covers(need) {
		return -1
	}
	if nhi-nlo == 1 {
		return nlo
	}
	mid := (nlo + nhi) / 2
	if r := t.descend(2*node, nlo, mid, lo, hi, need); r >= 0 {
		return r
	}
	return t.descend(2*node+1, mid, nhi, lo, hi, need)
}

func (t *fitTree) clone() *fitTree {
	c := *t
	c.max = append([]amounts(nil), t.max...)
	return &c
}
