package resmgr

import "math/bits"

// leafSet is a set of leaves by their number in Scheduler.leaves, walked
// in that order: a pass visits the leaves it needs in the order a pass
// over every leaf would, and a leaf added ahead of the walk is still
// visited by it. Walking costs a word per 64 leaves plus the members.
type leafSet []uint64

func newLeafSet(n int) leafSet { return make(leafSet, (n+63)/64) }

func (s leafSet) add(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s leafSet) remove(i int)   { s[i>>6] &^= 1 << (i & 63) }
func (s leafSet) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }

// addAll adds the first n leaves.
func (s leafSet) addAll(n int) {
	for i := range s {
		switch {
		case (i+1)<<6 <= n:
			s[i] = ^uint64(0)
		case i<<6 < n:
			s[i] |= 1<<(n&63) - 1
		}
	}
}

func (s leafSet) clear() { clear(s) }

// next returns the first member from i on, or -1.
func (s leafSet) next(i int) int {
	w := i >> 6
	if w >= len(s) {
		return -1
	}
	if word := s[w] >> (i & 63); word != 0 {
		return i + bits.TrailingZeros64(word)
	}
	for w++; w < len(s); w++ {
		if s[w] != 0 {
			return w<<6 + bits.TrailingZeros64(s[w])
		}
	}
	return -1
}

// drain appends the members to out in order, empties the set and returns
// out.
func (s leafSet) drain(out []int32) []int32 {
	for w, word := range s {
		for word != 0 {
			out = append(out, int32(w<<6+bits.TrailingZeros64(word)))
			word &= word - 1
		}
		s[w] = 0
	}
	return out
}
