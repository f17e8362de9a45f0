package timeseries

import (
	"time"
)

// Tier is one resolution: a point per Step, kept for Span.
type Tier struct {
	Step, Span time.Duration
}

// points is how many points the tier holds.
func (t Tier) points() int { return int((t.Span + t.Step - 1) / t.Step) }

// Tiers returns the resolutions for a window: every sample (a step of
// every) for the last hour, a point a minute for the last day, a point per
// ten minutes for the rest of the window; resolutions finer than every
// and spans beyond the window are left out.
func Tiers(window, every time.Duration) []Tier {
	if every <= 0 {
		every = 10 * time.Second
	}
	var out []Tier
	for _, t := range []Tier{{every, time.Hour}, {time.Minute, 24 * time.Hour}, {10 * time.Minute, window}} {
		if t.Step < every || (len(out) > 0 && t.Step <= out[len(out)-1].Step) {
			continue
		}
		t.Span = min(t.Span, window)
		if t.Span < t.Step {
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		out = []Tier{{every, max(window, every)}}
	}
	return out
}

// Point is one row of a table: the mean of the samples taken in [T, T+Step).
type Point struct {
	T    time.Time
	Step time.Duration
	V    []int64
}

// Table holds rows of cols values at each of its tiers.
type Table struct {
	cols  int
	rings []ring
}

// NewTable returns an empty table of cols columns.
func NewTable(cols int, tiers []Tier) *Table {
	t := &Table{cols: cols}
	for _, tier := range tiers {
		t.rings = append(t.rings, ring{step: tier.Step, size: tier.points(), open: -1})
	}
	return t
}

// ring is one tier: closed points in a ring of size, and the point still
// being filled (open: its step's start in unix seconds, -1 when none).
type ring struct {
	step  time.Duration
	size  int
	times []int64 // unix seconds of each point's step start
	vals  []int64 // size × cols, row after row
	first int     // index of the oldest point once the ring is full
	// evicted: the ring has dropped points, so what it holds no longer
	// covers every sample taken.
	evicted bool
	open    int64
	sum     []int64
	n       int64
}

// Add records a sample taken at t; row has the table's columns (missing
// ones count as zero, extra ones are ignored). A sample older than the
// newest point of a tier is ignored by that tier.
func (t *Table) Add(at time.Time, row []int64) {
	for i := range t.rings {
		t.rings[i].add(at, row, t.cols)
	}
}

func (r *ring) add(at time.Time, row []int64, cols int) {
	start := at.Truncate(r.step).Unix()
	if r.open >= 0 && start < r.open {
		return
	}
	if r.open >= 0 && start != r.open {
		r.close(cols)
	}
	if r.open < 0 {
		if r.sum == nil {
			r.sum = make([]int64, cols)
		}
		clear(r.sum)
		r.open, r.n = start, 0
	}
	for c := 0; c < cols && c < len(row); c++ {
		r.sum[c] += row[c]
	}
	r.n++
}

// close moves the open point into the ring, over the oldest when full.
func (r *ring) close(cols int) {
	var slot int
	if len(r.times) < r.size {
		slot = len(r.times)
		r.grow(cols)
		r.times = r.times[:slot+1]
		r.vals = r.vals[:(slot+1)*cols]
	} else {
		slot = r.first
		r.first = (r.first + 1) % r.size
		r.evicted = true
	}
	r.times[slot] = r.open
	v := r.vals[slot*cols : (slot+1)*cols]
	for c := range v {
		v[c] = r.sum[c] / r.n
	}
	r.open = -1
}

// grow makes room for one more point: the ring's memory doubles as it
// fills, never past its size.
func (r *ring) grow(cols int) {
	if len(r.times) < cap(r.times) {
		return
	}
	n := min(max(2*cap(r.times), 16), r.size)
	times := make([]int64, len(r.times), n)
	copy(times, r.times)
	vals := make([]int64, len(r.vals), n*cols)
	copy(vals, r.vals)
	r.times, r.vals = times, vals
}

// each calls f with the tier's points oldest first, the open one last.
func (r *ring) each(cols int, f func(t int64, v []int64)) {
	for i := range len(r.times) {
		slot := (r.first + i) % len(r.times)
		f(r.times[slot], r.vals[slot*cols:(slot+1)*cols])
	}
	if r.open >= 0 {
		mean := make([]int64, cols)
		for c := range mean {
			mean[c] = r.sum[c] / r.n
		}
		f(r.open, mean)
	}
}

// oldest is the start of the tier's oldest point, and false when empty.
func (r *ring) oldest() (int64, bool) {
	switch {
	case len(r.times) > 0:
		return r.times[r.first%len(r.times)], true
	case r.open >= 0:
		return r.open, true
	}
	return 0, false
}

// Points returns the points whose step ends after since, oldest first:
// each stretch of time from the finest tier that holds it. A coarser point
// may also hold samples of the first finer points after it.
func (t *Table) Points(since time.Time) []Point {
	var out []Point
	// until: the finer tiers cover everything from here on.
	until := int64(1<<62 - 1)
	var parts [][]Point
	for i := range t.rings {
		r := &t.rings[i]
		var part []Point
		step := int64(r.step / time.Second)
		r.each(t.cols, func(ts int64, v []int64) {
			if ts+step <= since.Unix() || ts >= until {
				return
			}
			part = append(part, Point{T: time.Unix(ts, 0).UTC(), Step: r.step, V: append([]int64(nil), v...)})
		})
		parts = append(parts, part)
		if !r.evicted {
			break // it holds every sample: coarser tiers add nothing
		}
		if o, ok := r.oldest(); ok && o < until {
			until = o
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, parts[i]...)
	}
	return out
}

// Bytes is the most memory the table's values and times take once every
// tier is full: it does not grow with the number of samples.
func (t *Table) Bytes() int {
	n := 0
	for _, r := range t.rings {
		n += r.size*(t.cols+1)*8 + t.cols*8
	}
	return n
}

// held is what the table holds now, for tests.
func (t *Table) held() int {
	n := 0
	for _, r := range t.rings {
		n += cap(r.times)*8 + cap(r.vals)*8 + cap(r.sum)*8
	}
	return n
}
