package model

import "fmt"

// Resources is an amount of each schedulable resource: CPU in cores
// (fractional), memory and disk in MiB, GPU as a device count.
type Resources struct {
	CPU    float64
	MemMB  float64
	DiskMB float64
	GPU    float64
}

// epsilon absorbs float rounding when comparing fractional amounts.
const epsilon = 1e-9

// ResourceKinds names the resource dimensions in a fixed order.
var ResourceKinds = [...]string{"cpu", "mem", "disk", "gpu"}

// Get returns the amount of the i-th kind of ResourceKinds.
func (r Resources) Get(i int) float64 {
	switch i {
	case 0:
		return r.CPU
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
func (r Resources) Set(i int, v float64) Resources {
	switch i {
	case 0:
		r.CPU = v
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
	return Resources{r.CPU + o.CPU, r.MemMB + o.MemMB, r.DiskMB + o.DiskMB, r.GPU + o.GPU}
}

// Sub returns r - o; components may go negative.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.CPU - o.CPU, r.MemMB - o.MemMB, r.DiskMB - o.DiskMB, r.GPU - o.GPU}
}

// Scale returns r * n.
func (r Resources) Scale(n float64) Resources {
	return Resources{r.CPU * n, r.MemMB * n, r.DiskMB * n, r.GPU * n}
}

// Fits reports whether r fits within o in every dimension.
func (r Resources) Fits(o Resources) bool {
	return r.CPU <= o.CPU+epsilon && r.MemMB <= o.MemMB+epsilon &&
		r.DiskMB <= o.DiskMB+epsilon && r.GPU <= o.GPU+epsilon
}

// IsZero reports whether every component is zero.
func (r Resources) IsZero() bool { return r == Resources{} }

// Min returns the component-wise minimum.
func (r Resources) Min(o Resources) Resources {
	return Resources{min(r.CPU, o.CPU), min(r.MemMB, o.MemMB), min(r.DiskMB, o.DiskMB), min(r.GPU, o.GPU)}
}

// Max returns the component-wise maximum.
func (r Resources) Max(o Resources) Resources {
	return Resources{max(r.CPU, o.CPU), max(r.MemMB, o.MemMB), max(r.DiskMB, o.DiskMB), max(r.GPU, o.GPU)}
}

func (r Resources) String() string {
	return fmt.Sprintf("cpu=%g mem=%gMiB disk=%gMiB gpu=%g", r.CPU, r.MemMB, r.DiskMB, r.GPU)
}
