package placement

import "github.com/peloton-federated/peloton/shard/model"

// The amounts a fit tree tracks per host: cpu, mem, disk, gpu, free ports,
// then one joint value per ratio in jointRatios.
//
// Per-dimension maxima alone let a subtree through when one host has the
// cpu and another the memory; with hosts filled unevenly a search then
// wanders through many leaves that fit in no single dimension pair. The
// joint value min(cpu/scale.cpu, mem/(scale.mem*ratio)) of a host that fits
// a request is at least the request's own joint value, so its maximum is
// another valid pruning test, and an exact one for requests whose memory to
// cpu ratio is the joint ratio.
const (
	plainDims = 5
	dims      = plainDims + len(jointRatios)
)

var jointRatios = [...]float64{0.5, 1, 2}

// fitEpsilon matches the tolerance of model.Resources.Fits; jointEpsilon
// covers it in normalised units (scales are at least 1, ratios at least 0.5).
const (
	fitEpsilon   = 1e-9
	jointEpsilon = 4e-9
)

type amounts [dims]float64

// scale normalises cpu and memory for the joint values.
type scale struct{ cpu, mem float64 }

func (s scale) amounts(r model.Resources, ports int) amounts {
	a := amounts{r.CPU, r.MemMB, r.DiskMB, r.GPU, float64(ports)}
	c, m := r.CPU/s.cpu, r.MemMB/s.mem
	for i, ratio := range jointRatios {
		a[plainDims+i] = min(c, m/ratio)
	}
	return a
}

// covers reports whether every component of a reaches need.
func (a *amounts) covers(need *amounts) bool {
	return a[0]+fitEpsilon >= need[0] && a[1]+fitEpsilon >= need[1] &&
		a[2]+fitEpsilon >= need[2] && a[3]+fitEpsilon >= need[3] && a[4] >= need[4] &&
		a[5]+jointEpsilon >= need[5] && a[6]+jointEpsilon >= need[6] && a[7]+jointEpsilon >= need[7]
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
var empty = amounts{-1, -1, -1, -1, -1, -1, -1, -1}

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
	for d := range dims {
		m[d] = max(l[d], r[d])
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
