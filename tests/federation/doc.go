// Package federation holds multi-process tests of a federation of regions:
// real `peloton server` processes on loopback addresses.
package federation
