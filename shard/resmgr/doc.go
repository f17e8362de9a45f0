// Package resmgr is the shard's resource manager core: per leaf pool, the
// pending queues of gangs and the admitted work; each pass computes
// entitlements (with the entitlement/ subpackage), preempts and admits.
//
// Scheduler is a deterministic state machine in the manner of etcd-raft: no
// goroutines, clock reads, I/O or logging. The shell (the job manager's
// loop) feeds it events and applies the decisions it returns as data:
//
//	s := resmgr.New(tree, resmgr.Config{PreemptAfterPasses: 3})
//	s.Enqueue(gang)             // a task or gang became pending
//	d := s.Pass(resmgr.PassInput{Capacity: c, Slack: slack})
//	for _, id := range d.Admit  // hand the gang's members to placement
//	for _, p := range d.Preempt // kill the gang's tasks (reason PREEMPTED)
//	s.Remove(id)                // a queued gang was killed, or an admitted
//	                            // gang ended or its kill completed
//	s.Finished(id, task)        // one member of an admitted gang ended
//	s.SetTree(tree)             // pools changed: fail the gangs returned
//	s.Why(id), s.Position(id)   // why a gang waits, as data (wait.go)
//
// The scheduler never re-queues preempted work itself: a preempted gang
// keeps its allocation until the shell reports the kill done with Remove,
// and the shell then enqueues its tasks again as new runs. Nothing needs
// persisting: after a restart the shell enqueues pending gangs again and
// records running ones with Adopt; hysteresis counts start again from zero.
//
// Rules, per pass:
//
//   - Demand of a leaf is its queued plus admitted non-revocable work;
//     non-preemptible work counts only up to the reservation (no more of it
//     can be admitted), and gangs that can never fit (Parked: a
//     non-preemptible gang larger than the reservation, any gang above the
//     lowest limit on its way to the root) do not count.
//   - Preemptible work is admitted within the pool's Entitlement, not the
//     elastic cap: demand already counts the queued work, so the entitlement
//     covers all that admission could use, and headroom would only let a
//     pool run above its fair share to be preempted back later.
//     Non-preemptible work is admitted within the reservation and the
//     entitlement. The cluster's admitted non-revocable work never exceeds
//     the capacity of the pass.
//   - Revocable work is admitted against a second entitlement pass over the
//     slack (allocated-but-unused resources reported by host managers) and
//     revocable demand, never against the capacity; when it holds more than
//     the slack, pools above their slack entitlement give revocable gangs
//     back at once (reason ReasonSlackShrank).
//   - Queues: each pool has one queue per kind (non-preemptible,
//     preemptible, revocable), priorities highest first, FIFO within a
//     priority by a sequence number the scheduler assigns. The first gang of
//     a kind that does not fit stops that kind in that pool for the pass, so
//     small gangs do not starve a big one; the other kinds go on, so there
//     is no head-of-line blocking across kinds. Gangs whose job is at its
//     maxRunning (SetJobLimit), and gangs larger than the whole capacity of
//     the pass, are skipped without stopping anything.
//   - Cross-pool preemption: a pool over its entitlement for
//     Config.PreemptAfterPasses consecutive passes, while another pool has
//     unmet demand within its entitlement in a resource it is over in (or
//     while it is over its limit), gives back preemptible gangs: lowest
//     priority first, then the most recently started, each only if it lowers
//     a resource still over, until it is within (ReasonOverEntitlement).
//   - Within a pool, the gang at which a kind stopped preempts preemptible
//     gangs of the same pool with a lower priority, in the same order, only
//     as many as it needs and only if it then fits (ReasonPriority).
//     Non-preemptible work is never preempted.
//
// A pass costs in proportion to what changed since the previous one, not
// to the number of pools: every change comes through the scheduler's own
// methods, which mark the leaf they change; the entitlement solvers divide
// again only where a demand or the capacity moved (entitlement's
// Solver.Update), and admission, preemption and the figures look only at
// the leaves that were changed, whose entitlement moved, or whose last
// decision depended on more than their own state. The decisions are
// exactly those of a pass over every leaf (incremental.go says how, and a
// property test compares the two).
//
// The package must not import the job manager, placement, storage or host
// manager plugins.
package resmgr
