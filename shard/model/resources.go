package model

import (
	"math"
	"strconv"
)

// Resources is an amount of each schedulable resource, in whole units of
// the smallest size the scheduler deals in: CPU in millicores, memory and
// disk in MiB, GPU as a device count. Sums and differences are exact; there
// is no rounding and no tolerance anywhere inside the shard. Conversion from
// the decimal amounts of the API, flags and cluster managers happens at the
// edge, once (CoresToMilli, WholeUnits, ResourcesFromDecimal).
type Resources struct {
	MilliCPU int64
	MemMB    int64
	DiskMB   int64
	GPU      int64
}

// Unlimited is the amount that stands for "no limit" (an absent pool limit).
// It is the largest int64, so it compares above every real amount; code that
// adds limits must not add Unlimited to anything.
const Unlimited int64 = math.MaxInt64

// MilliPerCore is the number of millicores in one core.
const MilliPerCore = 1000

// ResourceKinds names the resource dimensions in a fixed order.
var ResourceKinds = [...]string{"cpu", "mem", "disk", "gpu"}

// CoresToMilli converts decimal cores to millicores, rounding to the
// nearest millicore. +Inf maps to Unlimited and NaN to 0.
func CoresToMilli(cores float64) int64 {
	if math.IsInf(cores, 1) {
		return Unlimited
	}
	return WholeUnits(cores * MilliPerCore)
}

// WholeUnits converts a decimal amount (MiB, devices, millicores) to whole
// units, rounding to the nearest. +Inf and amounts beyond int64 map to
// Unlimited, -Inf and amounts below it to its minimum, NaN to 0.
func WholeUnits(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return Unlimited
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(v))
}

// UnitsToDecimal is the inverse edge conversion of WholeUnits: Unlimited
// maps to +Inf.
func UnitsToDecimal(v int64) float64 {
	if v == Unlimited {
		return math.Inf(1)
	}
	return float64(v)
}

// ResourcesFromDecimal converts decimal amounts (cores, MiB, MiB, devices),
// as the API, flags and cluster managers give them, to Resources; +Inf
// becomes Unlimited.
func ResourcesFromDecimal(cores, memMB, diskMB, gpu float64) Resources {
	return Resources{CoresToMilli(cores), WholeUnits(memMB), WholeUnits(diskMB), WholeUnits(gpu)}
}

// UnitsOf converts a decimal amount of the i-th kind of ResourceKinds, as
// the API and cluster managers give it (cpu in cores), to whole units; the
// inverse of DecimalOf.
func UnitsOf(i int, v float64) int64 {
	if i == 0 {
		return CoresToMilli(v)
	}
	return WholeUnits(v)
}

// DecimalOf returns amount v of the i-th kind of ResourceKinds as the API
// and cluster managers give it: cpu in decimal cores, the rest as is, and
// Unlimited as +Inf.
func DecimalOf(i int, v int64) float64 {
	if i == 0 && v != Unlimited {
		return float64(v) / MilliPerCore
	}
	return UnitsToDecimal(v)
}

// Decimal returns the amounts as the API and cluster managers give them:
// decimal cores, MiB, MiB and devices, +Inf for Unlimited.
func (r Resources) Decimal() (cores, memMB, diskMB, gpu float64) {
	return r.Cores(), UnitsToDecimal(r.MemMB), UnitsToDecimal(r.DiskMB), UnitsToDecimal(r.GPU)
}

// Cores returns the CPU amount in decimal cores (+Inf when Unlimited), for
// display and the API edge.
func (r Resources) Cores() float64 { return DecimalOf(0, r.MilliCPU) }

// Get returns the amount of the i-th kind of ResourceKinds.
func (r Resources) Get(i int) int64 {
	switch i {
	case 0:
		return r.MilliCPU
	case 1:
		return r.MemMB
	case 2:
		return r.DiskMB
	case 3:
		return r.GPU
	}
	return 0
}

// Set returns r with the i-th kind of ResourceKinds set to v.
func (r Resources) Set(i int, v int64) Resources {
	switch i {
	case 0:
		r.MilliCPU = v
	case 1:
		r.MemMB = v
	case 2:
		r.DiskMB = v
	case 3:
		r.GPU = v
	}
	return r
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.MilliCPU + o.MilliCPU, r.MemMB + o.MemMB, r.DiskMB + o.DiskMB, r.GPU + o.GPU}
}

// Sub returns r - o; components may go negative.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.MilliCPU - o.MilliCPU, r.MemMB - o.MemMB, r.DiskMB - o.DiskMB, r.GPU - o.GPU}
}

// Scale returns r * n.
func (r Resources) Scale(n int64) Resources {
	return Resources{r.MilliCPU * n, r.MemMB * n, r.DiskMB * n, r.GPU * n}
}

// Fits reports whether r fits within o in every dimension.
func (r Resources) Fits(o Resources) bool {
	return r.MilliCPU <= o.MilliCPU && r.MemMB <= o.MemMB && r.DiskMB <= o.DiskMB && r.GPU <= o.GPU
}

// IsZero reports whether every component is zero.
func (r Resources) IsZero() bool { return r == Resources{} }

// Min returns the component-wise minimum.
func (r Resources) Min(o Resources) Resources {
	return Resources{min(r.MilliCPU, o.MilliCPU), min(r.MemMB, o.MemMB), min(r.DiskMB, o.DiskMB), min(r.GPU, o.GPU)}
}

// Max returns the component-wise maximum.
func (r Resources) Max(o Resources) Resources {
	return Resources{max(r.MilliCPU, o.MilliCPU), max(r.MemMB, o.MemMB), max(r.DiskMB, o.DiskMB), max(r.GPU, o.GPU)}
}

// String renders r as "cpu=1.5 mem=512MiB disk=0MiB gpu=0".
func (r Resources) String() string {
	return "cpu=" + FormatMilli(r.MilliCPU) + " mem=" + FormatUnits(r.MemMB) + "MiB disk=" +
		FormatUnits(r.DiskMB) + "MiB gpu=" + FormatUnits(r.GPU)
}

// FormatAmount renders an amount of the i-th kind of ResourceKinds in the
// unit people read it in: cpu as decimal cores (FormatMilli), the rest as
// whole numbers.
func FormatAmount(i int, v int64) string {
	if i == 0 {
		return FormatMilli(v)
	}
	return FormatUnits(v)
}

// FormatUnits renders a whole amount, "inf" for Unlimited.
func FormatUnits(v int64) string {
	if v == Unlimited {
		return "inf"
	}
	return strconv.FormatInt(v, 10)
}

// FormatMilli renders millicores as decimal cores with at most three
// decimals and no trailing zeros ("1.5", "0.001", "12"); "inf" for
// Unlimited. It uses integer arithmetic only.
func FormatMilli(m int64) string {
	if m == Unlimited {
		return "inf"
	}
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", uint64(-(m+1))+1
	}
	whole, frac := u/MilliPerCore, u%MilliPerCore
	s := sign + strconv.FormatUint(whole, 10)
	if frac == 0 {
		return s
	}
	f := strconv.FormatUint(frac+MilliPerCore, 10)[1:] // three digits, zero-padded
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return s + "." + f
}

// Shares is a pool's weight per resource for dividing what is left after
// reservations. Shares are ratios, not amounts: they are never added to
// resources, only used to weigh one claimant against another, so they stay
// decimal (any finite value above zero). The divisions they weigh still
// hand out whole units (see the entitlement package's rounding rule).
type Shares struct {
	CPU, Mem, Disk, GPU float64
}

// EqualShares returns v for every resource.
func EqualShares(v float64) Shares { return Shares{v, v, v, v} }

// SharesOf weighs by the given amounts (as the federation weighs regions by
// capacity).
func SharesOf(r Resources) Shares {
	return Shares{float64(r.MilliCPU), float64(r.MemMB), float64(r.DiskMB), float64(r.GPU)}
}

// Get returns the share of the i-th kind of ResourceKinds.
func (s Shares) Get(i int) float64 {
	switch i {
	case 0:
		return s.CPU
	case 1:
		return s.Mem
	case 2:
		return s.Disk
	case 3:
		return s.GPU
	}
	return 0
}

// Set returns s with the i-th kind of ResourceKinds set to v.
func (s Shares) Set(i int, v float64) Shares {
	switch i {
	case 0:
		s.CPU = v
	case 1:
		s.Mem = v
	case 2:
		s.Disk = v
	case 3:
		s.GPU = v
	}
	return s
}

// Invalid returns the index (into ResourceKinds) of the first amount that
// is negative or Unlimited, or -1 when every amount is a real amount, as a
// task's needs and a host's capacity must be.
func (r Resources) Invalid() int {
	for i := range len(ResourceKinds) {
		if v := r.Get(i); v < 0 || v == Unlimited {
			return i
		}
	}
	return -1
}
