// Package goalstate is the pure core of the job manager's goal-state
// engine: given a task's, a job's or a host's state as values, it says what
// should happen next, and the job manager (the shell) carries it out.
//
// It owns:
//
//   - the end of a run (DecideRunEnd): retry after a backoff, relaunch a
//     lost run, restart a gang, give up after the job's max attempts, or
//     end the task because its goal is to stop;
//   - the one backoff of the tree (Backoff): every delay before a failed
//     run or an unhealthy instance runs again grows by the same rule.
//
// Rolling updates, migrations and host maintenance are capability
// packages of their own (shard/rollout, shard/migration,
// shard/maintenance).
//
// Everything is a function of its arguments: time comes in as now, the
// SLA as the job's instances and limit (evaluated with shard/sla). No
// clock reads, no goroutines, no logging, no I/O; the same input gives the
// same output, so table tests and the scenario files in testdata cover it.
//
// It imports shard/model and shard/sla only. It must not import jobmgr,
// the store, hostmgr or its plugins, or shard/clock.
package goalstate
