// Package jobmgr is the shard's job manager: it accepts jobs, creates their
// tasks asynchronously, and drives every task through its state machine with
// a goal-state engine (initialized → pending → ready → placing → placed →
// launching → running → succeeded/failed/killed/lost), retrying failed runs
// with backoff and relaunching lost ones. It persists every transition
// through the store before acting on it, feeds the resource manager and the
// placement core, launches and kills through host manager plugins, and
// derives each job's state from its tasks.
//
// A change is a command, a value of its own type handed to Do
// (commands.go); a read goes through the engine's read side, Reads
// (reads.go). The Engine is the loop; what the commands and the
// capabilities do around it are shells of their own, each a type the
// Engine holds: intake (new jobs, create.go), jobs (a job's instances,
// api.go), updates, migrations, pools, clusters, host records, periodic
// jobs, the host pool policy, and recovery (recover.go).
//
// The state a pass decides on is its core, package
// shard/jobmgr/internal/core: jobs and their tasks, the work set, pools,
// the queue, the host index and the capabilities' per-job state, with the
// methods that decide on them. The core imports no lock, store or clock.
// The Engine holds it (Engine.c) and is its shell: the lock, the store,
// the clock, the loop's goroutines, the published view and what callers
// wait on are the Engine's alone. The Engine hands the core the time and
// the fencing whenever it takes its lock, and at the start of a pass what
// plugins reported; what the core needs read from the store it asks for,
// and the Engine reads it after the pass.
//
// The loop's pass has three parts (loop.go, write.go). Under the engine's
// lock it steps: it applies reports, converges jobs, admits, places and
// decides launches, then takes copies of every record it changed as one
// write set. With no lock held it writes that set, while API calls and
// reads go on. Under the lock again it takes the store's revisions, or
// marks the set changed again when the write failed. Only then does it
// answer the API calls that waited for the write (awaitWrite), publish
// the pass's events and launch and kill. Jobs and running updates are
// read from a view published after each write (view.go), not from the
// state a pass decides. No store call runs while an
// engine lock is held; PELOTON_LOCK_CHECK=1 (lockcheck.go) enforces it.
// docs/core.md draws the loop.
//
// What follows the end of a run is decided by the pure core goalstate,
// and what a drain step does by shard/maintenance; the core builds their
// input and applies the decision.
//
// It is also the shell of the host pool policy (hostpools.go; the decisions
// are package hostpool's): the job manager owns the host records that hold
// a host's host pool beside its drain, and the drain step that moves
// service instances off a host under their SLA, so a move is a change of
// the record it already keeps plus a drain it already knows how to run.
// The host manager's cache only mirrors what plugins report.
//
// It imports the shard's cores (resmgr, placement, goalstate, sla,
// hostpool) and capabilities (rollout, migration, maintenance, daemon,
// periodic, reservation), the store and hostmgr interfaces, and the store's record
// encoding (store/codec: events waiting for the store are kept encoded);
// never a concrete store backend, plugin, the API or gateway.
package jobmgr
