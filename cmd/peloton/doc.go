// Command peloton is the one binary of Peloton, federated: the server roles
// (dev, server, executor), the operator's commands (store, tls, auth, the
// Mesos master emulator) and the CLI client (cmd/peloton/cli).
//
// It is composition: it reads flags and config files and wires the parts
// of a region together. serverconfig.go reads a server's config file,
// each part of it checked by a small function that fills its defaults and
// names the field of every problem; region.go opens a region member's
// store, host manager plugins, shard engine, federation router and
// failover, and gateway, and runs them. What a part does, and how it
// keeps its records, belongs to that part's package (the federation's
// replicas and drills are federation.ValueReplicas and ValueDrills, the
// audit log is shard/auditlog), so that it can be tested and reused there.
//
// It may import any package of the tree but nothing under tests/; nothing
// imports it.
package main
