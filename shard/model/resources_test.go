package model

import (
	"math"
	"testing"
)

func TestCoresToMilliRoundsToNearest(t *testing.T) {
	for _, tc := range []struct {
		cores float64
		want  int64
	}{
		{0, 0}, {1.5, 1500}, {0.1, 100}, {0.1 + 0.2, 300}, {0.0004, 0}, {0.0005, 1}, {1.005, 1005},
		{-0.25, -250}, {math.Inf(1), Unlimited}, {math.NaN(), 0}, {1e300, Unlimited},
	} {
		if got := CoresToMilli(tc.cores); got != tc.want {
			t.Errorf("CoresToMilli(%v) = %d, want %d", tc.cores, got, tc.want)
		}
	}
	if got := WholeUnits(2048.25); got != 2048 {
		t.Errorf("WholeUnits(2048.25) = %d", got)
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		want  string
	}{
		{0, "0"}, {1, "0.001"}, {10, "0.01"}, {1500, "1.5"}, {12000, "12"}, {1234, "1.234"},
		{-250, "-0.25"}, {math.MinInt64, "-9223372036854775.808"}, {Unlimited, "inf"},
	} {
		if got := FormatMilli(tc.milli); got != tc.want {
			t.Errorf("FormatMilli(%d) = %q, want %q", tc.milli, got, tc.want)
		}
	}
	r := Resources{MilliCPU: 1500, MemMB: 512, DiskMB: Unlimited, GPU: 1}
	if got, want := r.String(), "cpu=1.5 mem=512MiB disk=infMiB gpu=1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestDecimalEdgeRoundTrips(t *testing.T) {
	r := ResourcesFromDecimal(0.7, 1024, math.Inf(1), 2)
	if r != (Resources{MilliCPU: 700, MemMB: 1024, DiskMB: Unlimited, GPU: 2}) {
		t.Fatalf("ResourcesFromDecimal: %+v", r)
	}
	cpu, mem, disk, gpu := r.Decimal()
	if cpu != 0.7 || mem != 1024 || !math.IsInf(disk, 1) || gpu != 2 {
		t.Fatalf("Decimal: %v %v %v %v", cpu, mem, disk, gpu)
	}
	for i := range ResourceKinds {
		if got := UnitsOf(i, DecimalOf(i, r.Get(i))); got != r.Get(i) {
			t.Errorf("%s: %d round-trips to %d", ResourceKinds[i], r.Get(i), got)
		}
	}
	if i := r.Invalid(); i != 2 {
		t.Errorf("Invalid() = %d, want 2 (unlimited disk)", i)
	}
	if i := (Resources{MemMB: -1}).Invalid(); i != 1 {
		t.Errorf("Invalid() of negative memory = %d", i)
	}
	if i := (Resources{MilliCPU: 1}).Invalid(); i != -1 {
		t.Errorf("Invalid() of a real amount = %d", i)
	}
}
