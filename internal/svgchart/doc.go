// Package svgchart draws figures as SVG charts with no plotting tool:
// line charts on logarithmic axes (the cost curves of tests/bench/curves,
// where a power law is a straight line) or linear ones (the detection
// trade-off of tests/lossy), with optional whiskers around each point
// (a range measured, a bound).
//
// It imports nothing of ours; benchmark tools import it.
package svgchart
