// Package maintenance is the pure core of host maintenance: hosts an
// operator drains or marks down, and hosts their cluster drains (Mesos
// maintenance windows). Given the draining hosts, the runs on them and
// each job's SLA as values, its drain step (Drain) says which runs move
// under their job's SLA, which are killed at once (revocable work, a
// passed deadline, a host marked down), which wait and why, and which
// hosts are drained.
//
// Everything is a function of its arguments: time comes in as now, the
// SLA as each job's instances and limit (asked with shard/sla's Disrupt).
// No clock reads, no goroutines, no I/O. Table tests and the scenario
// files in testdata cover it.
//
// The job manager's adapter (shard/jobmgr/internal/core/drain.go) describes the hosts
// and runs, calls Drain at the pass's disruption point, and carries the
// plan out. This package imports shard/model and shard/sla only; it must
// not import the job manager, the store, hostmgr or shard/clock.
package maintenance
