// Package sim is the host manager plugin that simulates a cluster, for tests
// and benchmarks: hosts declared one by one or generated (a count, a shape,
// labels cycled over the hosts such as zones a, b, c), and runs that last
// the duration in their task env (EnvDuration, else Config.DefaultDuration)
// and end with the exit code in EnvExitCode (default 0), on an injected
// clock.
//
// A launched run is RUNNING at once and ends when its time comes on the
// clock. One goroutine (Run) ends runs from a min-heap of deadlines and
// hands every report to the sink in batches, so a simulation holds millions
// of runs on tens of thousands of hosts without a goroutine or timer per
// run. Kill ends a run as KILLED at once; Reconcile reports what the
// simulation knows and LOST for the rest. Operations on the simulation see
// it as of the clock's now, whether or not the timer loop caught up.
//
// Test and operations hooks: AddHost, RemoveHost (its runs become LOST),
// SetUsage and Usage (reported usage, kept for slack and revocable work).
//
// It imports shard/hostmgr, shard/model and shard/clock only; never another
// plugin, the job or resource manager, or the store.
package sim
