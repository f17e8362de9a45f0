// Package hostmgr defines the host manager Plugin interface through which a
// shard learns about hosts and runs tasks on them, the HostCache that
// aggregates the hosts of all plugins, and the built-in plugins: local (real
// processes on this machine) and sim (simulated hosts for tests and
// benchmarks). The Mesos and Kubernetes plugins live in the top-level
// packages hostmgr-mesos and hostmgr-k8s and implement Plugin; this package
// never imports them.
package hostmgr
