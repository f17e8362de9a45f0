// Package hostpool is the pure core of the host pool policy: given the
// host pools with their hosts (capacity, what the shard holds there, moves
// in flight), the demand that waits for hosts of each host pool, the floor
// of each host pool and the time, Plan says which hosts move where. Idle
// hosts move at once; a host that runs something is drained first, and
// finishes its move once nothing of the shard runs there (or goes back to
// service when the demand that called for it is gone).
//
// Like the placement and entitlement cores it starts no goroutine, reads
// no clock and does no I/O or logging: the same input gives the same
// moves. The job manager (shard/jobmgr) is its shell: it owns the host
// records the host pool labels live in and the drain machinery the moves
// go through, feeds Plan every policy period and applies its moves.
//
// It imports shard/model only.
package hostpool
