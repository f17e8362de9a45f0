// Package reservation keeps big tasks from starving: a pure decision, with
// no clock, store or goroutine of its own, of which hosts to hold for
// which waiting tasks.
//
// On a busy cluster of small tasks that end and are replaced all the time,
// a task that fits no host only because every host's free room is cut
// into small pieces waits forever: whatever frees up is taken again by a
// small task before it adds up to a big one. Once such a task has waited
// longer than a bound, Plan reserves it the host that lacks the least of
// what it needs (among the hosts it may run on and could fit on when
// empty): the host takes no new placements while what runs there ends,
// and the task is placed there as soon as it fits. A reservation is
// released when its task is placed (there, or anywhere else first), when
// the task goes away or when the host does. At most PerPool hosts are held
// for the tasks of one pool, the oldest waiters first, so that reserving
// never takes more than a bounded share of a cluster from small work.
//
// The job manager's shell (shard/jobmgr, reserve.go) feeds it the tasks
// placement found no host for, hides the held hosts from every other task
// and tries each reserving task on its host after the placement pass. A
// reservation drains its host only as work there ends by itself: nothing
// is preempted or stopped for it, so the SLA of what runs there is never
// touched.
package reservation
