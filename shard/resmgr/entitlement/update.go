package entitlement

import "github.com/peloton-federated/peloton/shard/model"

// incremental is what Update keeps between passes besides the pass's own
// arrays: the last pass's input, the tree's positions and depths, and the
// scratch lists of the pools to sum and divide again, by depth.
type incremental struct {
	valid    bool // a pass ran: dem, ent and head hold its result
	capacity model.Resources
	opts     Options
	pos      []int32 // pool number -> layout position
	depth    []int32 // layout position -> depth (the root is 0)
	up, down [][]int32
	inUp     []bool // by position: in up
	inDown   []bool // by position: in down
	moved    []bool // by position: in movedPos
	movedPos []int32
	movedExt []int
	oldEnt   []int64
	oldHead  []int64
}

// initIncremental fills the tree's positions and depths.
func (s *Solver) initIncremental() {
	t := s.tree
	n := len(t.order)
	x := &s.inc
	x.pos = make([]int32, len(t.specs))
	x.depth = make([]int32, n)
	x.inUp, x.inDown, x.moved = make([]bool, n), make([]bool, n), make([]bool, n)
	deepest := int32(0)
	for pos, ext := range t.order {
		x.pos[ext] = int32(pos)
		if p := t.parent[pos]; p >= 0 {
			x.depth[pos] = x.depth[p] + 1
			deepest = max(deepest, x.depth[pos])
		}
	}
	x.up = make([][]int32, deepest+1)
	x.down = make([][]int32, deepest+1)
}

// Update is Compute for a Solver that already ran a pass, when only the
// demands of the pools in changed (pool numbers) may differ from those the
// last pass had: it sums demand again only on the way from those pools to
// the root, and divides again only the parents whose entitlement or whose
// children's demand moved, so that a pass costs in proportion to what
// changed. Its result is exactly Compute's for the same input. It also
// returns the pools whose demand, entitlement or headroom differ from the
// last pass's; both belong to the Solver until its next pass. Without an
// earlier pass, or with other options than the last pass's, it runs
// Compute and returns every pool.
func (s *Solver) Update(capacity model.Resources, demand []model.Resources, changed []int, opts Options) (*Result, []int) {
	x := &s.inc
	x.movedExt = x.movedExt[:0]
	if !x.valid || opts != x.opts {
		s.Compute(capacity, demand, opts)
		for i := range s.tree.specs {
			x.movedExt = append(x.movedExt, i)
		}
		return &s.result, x.movedExt
	}
	if len(s.tree.order) == 0 {
		return &s.result, x.movedExt
	}
	for _, pos := range x.movedPos {
		x.moved[pos] = false
	}
	x.movedPos = x.movedPos[:0]
	for k := range kinds {
		s.updateKind(k, nonNegative(capacity.Get(k)), nonNegative(x.capacity.Get(k)), demand, changed, opts.Headroom)
	}
	x.capacity = capacity
	for _, pos := range x.movedPos {
		ext := s.tree.order[pos]
		s.result.Demand[ext] = s.vector(&s.dem, int(pos))
		s.result.Entitlement[ext] = s.vector(&s.ent, int(pos))
		s.result.Headroom[ext] = s.vector(&s.head, int(pos))
		x.movedExt = append(x.movedExt, int(ext))
	}
	return &s.result, x.movedExt
}

// updateKind brings one resource's demand, entitlement and headroom up to
// date: the changed leaves' demands, their ancestors' sums deepest first,
// then the divisions from the root down.
func (s *Solver) updateKind(k int, c, was int64, demand []model.Resources, changed []int, headroom bool) {
	leavesMoved := s.setLeafDemands(k, demand, changed)
	upMoved := s.sumDemandsUp(k)
	if c != was || leavesMoved || upMoved {
		s.divideRoot(k, c, headroom)
	}
	x := &s.inc
	for d := range x.down {
		for i := 0; i < len(x.down[d]); i++ {
			s.redivide(k, x.down[d][i], headroom)
		}
		x.down[d] = x.down[d][:0]
	}
}

// setLeafDemands takes the changed leaves' demand of kind k, capped by
// their limits, and reports whether the root's demand may have moved.
func (s *Solver) setLeafDemands(k int, demand []model.Resources, changed []int) bool {
	t, x := s.tree, &s.inc
	dem, lim := s.dem[k], t.lim[k]
	moved := false
	for _, ext := range changed {
		if ext < 0 || ext >= len(x.pos) {
			continue
		}
		pos := x.pos[ext]
		if t.count[pos] != 0 {
			continue // only leaves take demand
		}
		var v int64
		if ext < len(demand) {
			v = nonNegative(demand[ext].Get(k))
		}
		if s.setDemand(dem, pos, min(v, lim[pos])) {
			moved = true
		}
	}
	return moved
}

// sumDemandsUp sums the demand of kind k of the pools whose children's
// moved, deepest first, and reports whether the root's may have moved.
func (s *Solver) sumDemandsUp(k int) bool {
	t, x := s.tree, &s.inc
	dem, lim := s.dem[k], t.lim[k]
	moved := false
	for d := len(x.up) - 1; d >= 0; d-- {
		for i := 0; i < len(x.up[d]); i++ {
			p := x.up[d][i]
			x.inUp[p] = false
			s.divideAgain(p) // a child's demand moved
			a, b := t.first[p], t.first[p]+t.count[p]
			var sum int64
			for _, v := range dem[a:b] {
				sum = addCapped(sum, v)
			}
			if s.setDemand(dem, p, min(sum, lim[p])) {
				moved = true
			}
		}
		x.up[d] = x.up[d][:0]
	}
	return moved
}

// divideRoot gives the root capacity c of kind k and, when its
// entitlement or headroom moved, has its children divided again.
func (s *Solver) divideRoot(k int, c int64, headroom bool) {
	t := s.tree
	dem, ent, head, lim := s.dem[k], s.ent[k], s.head[k], t.lim[k]
	res, share := t.res[k], t.share[k]
	e0, h0 := ent[0], head[0]
	s.split.divide(c, c, res[:1], lim[:1], share[:1], dem[:1], ent[:1], head[:1], headroom)
	if ent[0] != e0 || head[0] != h0 {
		s.moved(0)
		if t.count[0] > 0 {
			s.divideAgain(0)
		}
	}
}

// setDemand sets the demand at position pos to v and, when that moves
// it, queues its parent's sum; it reports whether it moved the root's.
func (s *Solver) setDemand(dem []int64, pos int32, v int64) (root bool) {
	if v == dem[pos] {
		return false
	}
	dem[pos] = v
	s.moved(pos)
	if p := s.tree.parent[pos]; p >= 0 {
		s.sumAgain(p)
		return false
	}
	return true
}

// redivide divides parent p's entitlement among its children again and
// marks the children whose share moved.
func (s *Solver) redivide(k int, p int32, headroom bool) {
	t, x := s.tree, &s.inc
	x.inDown[p] = false
	dem, ent, head := s.dem[k], s.ent[k], s.head[k]
	a, b := int(t.first[p]), int(t.first[p]+t.count[p])
	x.oldEnt = append(x.oldEnt[:0], ent[a:b]...)
	x.oldHead = append(x.oldHead[:0], head[a:b]...)
	s.split.divide(ent[p], ent[p]+head[p], t.res[k][a:b], t.lim[k][a:b], t.share[k][a:b], dem[a:b], ent[a:b], head[a:b], headroom)
	for i := a; i < b; i++ {
		if ent[i] == x.oldEnt[i-a] && head[i] == x.oldHead[i-a] {
			continue
		}
		s.moved(int32(i))
		if t.count[i] > 0 {
			s.divideAgain(int32(i))
		}
	}
}

// sumAgain queues parent p's demand to be summed again.
func (s *Solver) sumAgain(p int32) {
	x := &s.inc
	if !x.inUp[p] {
		x.inUp[p] = true
		x.up[x.depth[p]] = append(x.up[x.depth[p]], p)
	}
}

// divideAgain queues parent p's entitlement to be divided again.
func (s *Solver) divideAgain(p int32) {
	x := &s.inc
	if !x.inDown[p] {
		x.inDown[p] = true
		x.down[x.depth[p]] = append(x.down[x.depth[p]], p)
	}
}

// moved records that the pool at position pos has a new demand,
// entitlement or headroom in some resource.
func (s *Solver) moved(pos int32) {
	x := &s.inc
	if !x.moved[pos] {
		x.moved[pos] = true
		x.movedPos = append(x.movedPos, pos)
	}
}
