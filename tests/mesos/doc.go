// Package mesos holds the end-to-end tests of the Mesos host manager through
// the real peloton binary against the in-process Mesos master emulator
// (hostmgr-mesos/mesostest), and its scale benchmark. Nothing here is
// imported by the product.
package mesos
