// Package tests holds the end-to-end and multi-process tests that drive the
// real peloton binary, and the scale benchmarks. Nothing here is imported by
// the product.
package tests
