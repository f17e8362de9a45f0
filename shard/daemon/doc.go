// Package daemon is the pure core of daemon jobs: a daemon job runs one
// instance on every host that takes it (up, reported, and matching the
// job's constraints). Given the hosts and the job's live instances as
// values, Plan says which instances stop (their host no longer takes the
// daemon, or a second instance holds the same host) and on which hosts
// new instances start. Instance numbers are never reused: the job
// manager makes each new instance with the next number, pinned to its
// host.
//
// Everything is a function of its arguments: no clock, no goroutines, no
// I/O. The scenario files in testdata cover it.
//
// The job manager's adapter (shard/jobmgr/internal/core/daemon.go) describes the hosts
// and instances at the pass's beforeConverge point, calls Plan and
// carries it out. This package imports shard/model only.
package daemon
