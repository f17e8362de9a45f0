package entitlement

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func cpuSpec(path string, reservation, limit int64, share float64) PoolSpec {
	return PoolSpec{
		Path:        path,
		Reservation: model.Resources{MilliCPU: reservation},
		Limit:       model.Resources{MilliCPU: limit, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited},
		Share:       model.EqualShares(1).Set(0, share),
	}
}

func TestValidateSpecs(t *testing.T) {
	root := cpuSpec("/", 20, 100, 1)
	tests := []struct {
		name  string
		specs []PoolSpec
		want  []error  // sentinels, in order
		field []string // fields, in order
	}{
		{"empty", nil, nil, nil},
		{"valid", []PoolSpec{root, cpuSpec("/a", 10, 10, 1), cpuSpec("/a/b", 10, 20, 0.5)}, nil, nil},
		{"bad paths", []PoolSpec{root, cpuSpec("", 0, 1, 1), cpuSpec("a", 0, 1, 1), cpuSpec("/a//b", 0, 1, 1), cpuSpec("/a/", 0, 1, 1)},
			[]error{ErrBadPath, ErrBadPath, ErrBadPath, ErrBadPath}, []string{"path", "path", "path", "path"}},
		{"duplicate", []PoolSpec{root, cpuSpec("/a", 0, 1, 1), cpuSpec("/a", 0, 1, 1)},
			[]error{ErrDuplicatePool}, []string{"path"}},
		{"missing parent", []PoolSpec{root, cpuSpec("/a/b", 0, 1, 1)},
			[]error{ErrMissingParent}, []string{"parent"}},
		{"missing root", []PoolSpec{cpuSpec("/a", 0, 1, 1)},
			[]error{ErrMissingParent}, []string{"parent"}},
		{"limit below reservation", []PoolSpec{root, cpuSpec("/a", 10, 5, 1)},
			[]error{ErrLimitBelowReservation}, []string{"cpu.limit"}},
		{"bad amounts", []PoolSpec{root, cpuSpec("/a", -1, -1, 1), cpuSpec("/b", model.Unlimited, model.Unlimited, 1)},
			[]error{ErrBadAmount, ErrBadAmount, ErrBadAmount}, []string{"cpu.reservation", "cpu.limit", "cpu.reservation"}},
		{"bad shares", []PoolSpec{root, cpuSpec("/a", 0, 1, 0), cpuSpec("/b", 0, 1, -1), cpuSpec("/c", 0, 1, math.Inf(1))},
			[]error{ErrBadShare, ErrBadShare, ErrBadShare}, []string{"cpu.share", "cpu.share", "cpu.share"}},
		{"children's reservations", []PoolSpec{root, cpuSpec("/a", 15, 100, 1), cpuSpec("/b", 10, 100, 1)},
			[]error{ErrChildReservationsExceedParent}, []string{"cpu.reservation"}},
		{"children's reservations at a deeper level", []PoolSpec{root, cpuSpec("/a", 5, 100, 1), cpuSpec("/a/x", 5, 100, 1), cpuSpec("/a/y", 1, 100, 1)},
			[]error{ErrChildReservationsExceedParent}, []string{"cpu.reservation"}},
		{"every problem at once", []PoolSpec{root, cpuSpec("/a", 30, 10, 0), cpuSpec("/q/r", 0, 1, 1)},
			[]error{ErrChildReservationsExceedParent, ErrLimitBelowReservation, ErrBadShare, ErrMissingParent},
			[]string{"cpu.reservation", "cpu.limit", "cpu.share", "parent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateSpecs(tt.specs)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ValidateSpecs: %v", err)
				}
				return
			}
			var problems ValidationErrors
			if !errors.As(err, &problems) {
				t.Fatalf("ValidateSpecs = %v, want ValidationErrors", err)
			}
			if !errors.Is(err, ErrInvalidPool) {
				t.Errorf("error does not wrap ErrInvalidPool: %v", err)
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("got %d problems (%v), want %d", len(problems), err, len(tt.want))
			}
			for i, p := range problems {
				if !errors.Is(p, tt.want[i]) || p.Field != tt.field[i] {
					t.Errorf("problem %d = %v (field %q), want %v on %q", i, p, p.Field, tt.want[i], tt.field[i])
				}
				if !errors.Is(err, tt.want[i]) {
					t.Errorf("joined error does not match %v", tt.want[i])
				}
			}
			for _, p := range problems {
				if !strings.Contains(err.Error(), p.Error()) || !strings.HasPrefix(p.Error(), p.Path+": "+p.Field+": ") {
					t.Errorf("message %q does not name the pool and field of %q", err, p)
				}
				if !strings.Contains(p.Error(), p.Detail) || p.Err.Error() == "" {
					t.Errorf("message %q lacks its detail", p)
				}
			}
			if _, err := NewTree(tt.specs); err == nil {
				t.Error("NewTree accepted specifications that ValidateSpecs rejects")
			}
		})
	}
}

func TestTreeStructure(t *testing.T) {
	specs := []PoolSpec{
		cpuSpec("/a/y", 0, 1, 1),
		cpuSpec("/", 0, 1, 1),
		cpuSpec("/b", 0, 1, 1),
		cpuSpec("/a", 0, 1, 1),
		cpuSpec("/a/x", 0, 1, 1),
	}
	tree, err := NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	index := func(p string) int {
		i, ok := tree.Index(p)
		if !ok {
			t.Fatalf("no pool %q", p)
		}
		return i
	}
	if _, ok := tree.Index("/nope"); ok {
		t.Error("found a pool that does not exist")
	}
	for i, s := range specs {
		if index(s.Path) != i || tree.Path(i) != s.Path || tree.Spec(i) != s {
			t.Errorf("pool %d is not %q", i, s.Path)
		}
	}
	if tree.Parent(index("/")) != -1 || tree.Parent(index("/a/y")) != index("/a") || tree.Parent(index("/a")) != index("/") {
		t.Error("wrong parents")
	}
	if got, want := tree.Children(index("/a")), []int{index("/a/y"), index("/a/x")}; !slices.Equal(got, want) {
		t.Errorf("children of /a = %v, want %v (specification order)", got, want)
	}
	if !tree.IsLeaf(index("/b")) || tree.IsLeaf(index("/a")) {
		t.Error("wrong leaves")
	}
	for _, p := range []string{"/a", "/a/x", "/"} {
		if _, ok := ParentPath(p); ok != (p != "/") {
			t.Errorf("ParentPath(%q) ok = %v", p, ok)
		}
	}
}

func TestEmptyTree(t *testing.T) {
	tree, err := NewTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Compute(tree, model.Resources{MilliCPU: 10}, nil, Options{Headroom: true})
	if len(r.Entitlement) != 0 || tree.Len() != 0 {
		t.Errorf("empty tree gave %v", r)
	}
}
