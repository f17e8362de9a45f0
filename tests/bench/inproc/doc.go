// Package inproc starts regions of a federation inside one process, for the
// benchmarks that measure the federation rather than one binary: a region
// is a real shard (jobmgr.Engine on a store, the sim host manager) behind a
// real federation.Router served over gRPC on a loopback address, with the
// failover shell, and either a static directory or real gossip
// (federation.GossipDirectory: serf over memberlist on 127.0.0.x).
//
// It is the in-process twin of what `peloton server` wires for one region;
// it leaves out the gateway (authentication, HTTP) and high availability.
//
// It imports the shard's and the federation's packages and the API's
// generated package; the product never imports it.
package inproc
