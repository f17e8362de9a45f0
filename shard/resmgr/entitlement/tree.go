package entitlement

import (
	"math"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// kinds is the number of resource dimensions handled, in the order of
// model.ResourceKinds.
const kinds = len(model.ResourceKinds)

// RootPath is the path of the pool at the top of every tree.
const RootPath = "/"

// PoolSpec is the configuration of one pool: where it sits and, per
// resource, its reservation (guaranteed when there is demand), limit (never
// more) and share (weight for what is left over).
type PoolSpec struct {
	Path        string // "/" for the root, "/a", "/a/b" below it
	Reservation model.Resources
	Limit       model.Resources // model.Unlimited for "no limit"
	Share       model.Shares    // above zero and finite in every dimension
}

// Tree is a validated, immutable pool tree. Pools are numbered by their
// position in the specifications given to NewTree; the same numbers index
// demands and results. A Tree never changes after NewTree and is safe for
// concurrent use; to change a pool, validate and build a new Tree.
type Tree struct {
	specs     []PoolSpec
	index     map[string]int
	parentExt []int   // by pool number; -1 for the root
	childExt  [][]int // by pool number, in specification order

	// The pass works on a breadth-first layout so that the children of a
	// pool occupy one contiguous range and parents come before children.
	order  []int32 // layout position -> pool number
	parent []int32 // layout position -> parent's layout position (-1 for root)
	first  []int32 // layout position -> layout position of first child
	count  []int32 // layout position -> number of children
	res    [kinds][]int64
	lim    [kinds][]int64
	share  [kinds][]float64
}

// ParentPath returns the path of a pool's parent, and false for the root or
// a malformed path.
func ParentPath(path string) (string, bool) {
	if path == RootPath || !validPath(path) {
		return "", false
	}
	i := strings.LastIndexByte(path, '/')
	if i == 0 {
		return RootPath, true
	}
	return path[:i], true
}

func validPath(p string) bool {
	if p == RootPath {
		return true
	}
	if len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' {
		return false
	}
	return !strings.Contains(p, "//")
}

func formatAmount(v int64) string { return model.FormatUnits(v) }

func formatShare(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ValidateSpecs checks a whole set of pool specifications and reports every
// problem, not only the first: bad or duplicate paths, missing parents,
// negative amounts, limits below reservations, shares not above zero, and
// children's reservations that add up to more than their parent's. It
// returns nil or a ValidationErrors. To validate a pool create or update,
// apply it to the current specifications and validate the result.
func ValidateSpecs(specs []PoolSpec) error {
	v := &specCheck{specs: specs, perSpec: make([][]*FieldError, len(specs)), seen: make(map[string]int, len(specs)),
		childReservations: make([][kinds]int64, len(specs)), hasChildren: make([]bool, len(specs))}
	v.checkPaths()
	for i := range specs {
		v.checkPool(i)
	}
	v.checkChildReservations()
	var all ValidationErrors
	for _, errs := range v.perSpec {
		all = append(all, errs...)
	}
	if len(all) == 0 {
		return nil
	}
	return all
}

// specCheck is a ValidateSpecs under way: the errors found per spec, the
// first spec of each path, and, per pool, whether it has children and
// the sum of their reservations per resource.
type specCheck struct {
	specs             []PoolSpec
	perSpec           [][]*FieldError
	seen              map[string]int
	childReservations [][kinds]int64
	hasChildren       []bool
}

func (v *specCheck) add(i int, field string, err error, detail string) {
	v.perSpec[i] = append(v.perSpec[i], &FieldError{Path: v.specs[i].Path, Field: field, Err: err, Detail: detail})
}

// checkPaths refuses paths that are not absolute and paths declared twice.
func (v *specCheck) checkPaths() {
	for i, s := range v.specs {
		if !validPath(s.Path) {
			v.add(i, "path", ErrBadPath, strconv.Quote(s.Path)+" is not an absolute path like \"/\" or \"/a/b\"")
			continue
		}
		if j, dup := v.seen[s.Path]; dup {
			v.add(i, "path", ErrDuplicatePool, "declared more than once (first as specification "+strconv.Itoa(j+1)+")")
			continue
		}
		v.seen[s.Path] = i
	}
}

// checkPool checks spec i's amounts and parent, and adds its reservation
// to its parent's children's.
func (v *specCheck) checkPool(i int) {
	s := v.specs[i]
	if first, ok := v.seen[s.Path]; !ok || first != i {
		return
	}
	checkAmounts(s, func(field string, err error, detail string) { v.add(i, field, err, detail) })
	pp, ok := ParentPath(s.Path)
	if !ok {
		return
	}
	p, ok := v.seen[pp]
	if !ok {
		v.add(i, "parent", ErrMissingParent, "pool "+strconv.Quote(pp)+" does not exist")
		return
	}
	v.hasChildren[p] = true
	for k := range kinds {
		if r := s.Reservation.Get(k); r > 0 && r != model.Unlimited {
			v.childReservations[p][k] = addCapped(v.childReservations[p][k], r) // bad amounts are reported above
		}
	}
}

// checkChildReservations refuses a pool whose children reserve more than
// it does.
func (v *specCheck) checkChildReservations() {
	for p, s := range v.specs {
		if !v.hasChildren[p] {
			continue
		}
		for k, name := range model.ResourceKinds {
			sum, own := v.childReservations[p][k], s.Reservation.Get(k)
			if sum > own {
				v.add(p, name+".reservation", ErrChildReservationsExceedParent,
					"children's reservations ("+formatAmount(sum)+") exceed parent's ("+formatAmount(own)+")")
			}
		}
	}
}

// checkAmounts reports problems with one specification's numbers.
func checkAmounts(s PoolSpec, report func(field string, err error, detail string)) {
	for k, name := range model.ResourceKinds {
		r, l, sh := s.Reservation.Get(k), s.Limit.Get(k), s.Share.Get(k)
		badReservation := r == model.Unlimited || r < 0
		if badReservation {
			report(name+".reservation", ErrBadAmount, "reservation ("+formatAmount(r)+") must be a finite amount of at least 0")
		}
		switch {
		case l < 0:
			report(name+".limit", ErrBadAmount, "limit ("+formatAmount(l)+") must be an amount of at least 0")
		case !badReservation && l < r:
			report(name+".limit", ErrLimitBelowReservation, "limit ("+formatAmount(l)+") is below reservation ("+formatAmount(r)+")")
		}
		if !(sh > 0) || math.IsInf(sh, 0) {
			report(name+".share", ErrBadShare, "share ("+formatShare(sh)+") must be a finite number above 0")
		}
	}
}

// NewTree validates the specifications (see ValidateSpecs) and builds the
// tree. The specifications must include the root "/" unless there are none.
func NewTree(specs []PoolSpec) (*Tree, error) {
	if err := ValidateSpecs(specs); err != nil {
		return nil, err
	}
	n := len(specs)
	t := &Tree{
		specs:     append([]PoolSpec(nil), specs...),
		index:     make(map[string]int, n),
		parentExt: make([]int, n),
		childExt:  make([][]int, n),
	}
	for i, s := range specs {
		t.index[s.Path] = i
	}
	root := -1
	for i, s := range specs {
		pp, ok := ParentPath(s.Path)
		if !ok {
			root = i
			t.parentExt[i] = -1
			continue
		}
		p := t.index[pp]
		t.parentExt[i] = p
		t.childExt[p] = append(t.childExt[p], i)
	}
	if root < 0 {
		return t, nil // no pools at all
	}
	t.layout(root)
	return t, nil
}

// layout numbers the pools breadth-first from the root and copies their
// configuration into per-resource arrays in that order.
func (t *Tree) layout(root int) {
	n := len(t.specs)
	t.order = make([]int32, 0, n)
	t.parent = make([]int32, n)
	t.first = make([]int32, n)
	t.count = make([]int32, n)
	t.order = append(t.order, int32(root))
	t.parent[0] = -1
	for pos := 0; pos < len(t.order); pos++ {
		kids := t.childExt[t.order[pos]]
		t.first[pos] = int32(len(t.order))
		t.count[pos] = int32(len(kids))
		for _, c := range kids {
			t.parent[len(t.order)] = int32(pos)
			t.order = append(t.order, int32(c))
		}
	}
	for k := range kinds {
		t.res[k] = make([]int64, n)
		t.lim[k] = make([]int64, n)
		t.share[k] = make([]float64, n)
		for pos, ext := range t.order {
			s := t.specs[ext]
			t.res[k][pos] = s.Reservation.Get(k)
			t.lim[k][pos] = s.Limit.Get(k)
			t.share[k][pos] = s.Share.Get(k)
		}
	}
}

// Len returns the number of pools.
func (t *Tree) Len() int { return len(t.specs) }

// Spec returns pool i's specification.
func (t *Tree) Spec(i int) PoolSpec { return t.specs[i] }

// Path returns pool i's path.
func (t *Tree) Path(i int) string { return t.specs[i].Path }

// Index returns the number of the pool with the given path.
func (t *Tree) Index(path string) (int, bool) {
	i, ok := t.index[path]
	return i, ok
}

// Parent returns the number of pool i's parent, or -1 for the root.
func (t *Tree) Parent(i int) int { return t.parentExt[i] }

// Children returns the numbers of pool i's children in specification order.
func (t *Tree) Children(i int) []int { return append([]int(nil), t.childExt[i]...) }

// IsLeaf reports whether pool i has no children; only leaves take demand.
func (t *Tree) IsLeaf(i int) bool { return len(t.childExt[i]) == 0 }
