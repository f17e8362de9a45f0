package main

import (
	"fmt"
	"math"
)

// Slope fits y = a·x^s by least squares on log x, log y and returns s: the
// slope of the line on a log-log chart. Points that are not positive are
// left out; with fewer than two left it returns NaN.
func Slope(x, y []float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			continue
		}
		lx, ly := math.Log(x[i]), math.Log(y[i])
		n++
		sx += lx
		sy += ly
		sxx += lx * lx
		sxy += lx * ly
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / d
}

// Growth says how a series is judged from its slope.
type Growth uint8

const (
	// Cost: y is what the whole job costs (time, bytes) as x grows; its
	// growth is the slope.
	Cost Growth = iota + 1
	// CostPerUnit: y is a cost per unit of x (bytes per task); the whole
	// grows as x^(1+slope).
	CostPerUnit
	// RatePerUnit: y is units done per second (decisions/s); the cost of one
	// unit grows as x^(−slope).
	RatePerUnit
	// Scaling: y is a throughput as parallelism x grows; slope 1 is
	// perfect scaling.
	Scaling
)

// Tolerance around 1 within which a growth exponent counts as linear, and
// below which it counts as flat; measurement noise on these machines moves
// fitted exponents by a few hundredths.
const (
	linearTolerance = 0.1
	flatBelow       = 0.15
)

// classify names a growth exponent.
func classify(e float64) string {
	switch {
	case math.IsNaN(e):
		return "unknown (too few points)"
	case e < flatBelow:
		return "flat: better than linear"
	case e < 1-linearTolerance:
		return "sublinear: better than linear"
	case e <= 1+linearTolerance:
		return "linear"
	}
	return "superlinear: worse than linear"
}

// Superlinear reports whether the judged growth is worse than linear.
func Superlinear(g Growth, slope float64) bool {
	return exponent(g, slope) > 1+linearTolerance
}

// exponent is the growth exponent of the judged quantity.
func exponent(g Growth, slope float64) float64 {
	switch g {
	case CostPerUnit:
		return 1 + slope
	case RatePerUnit:
		return -slope
	}
	return slope
}

// Verdict states a series' growth from its fitted slope, in words a reader
// of the chart can check against the line. x and unit name the axis
// ("hosts"), what the quantity is ("time", "bytes").
func Verdict(g Growth, slope float64, x string) string {
	e := exponent(g, slope)
	switch g {
	case CostPerUnit:
		return fmt.Sprintf("per unit ∝ %s^%.2f, total ∝ %s^%.2f: %s", x, slope, x, e, classify(e))
	case RatePerUnit:
		return fmt.Sprintf("time per decision ∝ %s^%.2f: %s", x, e, classify(e))
	case Scaling:
		return fmt.Sprintf("∝ %s^%.2f (1.00 would be perfect scaling)", x, slope)
	}
	return fmt.Sprintf("∝ %s^%.2f: %s", x, e, classify(e))
}
