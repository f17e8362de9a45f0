// Package lease elects one leader among the processes of a shard: each
// runs an Elector on the same named lease of a store.LeaseStore (Cassandra
// or a Kubernetes Lease in production, the embedded store for one
// process). The holder of the
// lease is the leader and runs the shard's engine; the others are
// standbys that keep trying to take the lease and report who holds it, so
// they can forward writes to the leader.
//
// Safety. A lease taken or renewed by a call started at time s is held at
// least until s + TTL (the store's promise). The leader treats it as safe
// only until s + TTL - SafetyMargin, measured on its own clock: once that
// deadline passes without a successful renewal, or as soon as the store
// says the lease is another's, the context given to the leader's work is
// cancelled, so the work stops before a standby can take the lease over.
// Each new holder gets a higher term, a fencing token the leader can
// write beside its state.
//
// The decisions (when to renew, when the lease counts as lost, how the
// durations default and must relate) are pure functions of now and the
// outcome of the last call (decide.go); the Elector is the thin shell that
// calls the store, keeps time with a clock.Clock and runs the callbacks.
//
// It imports shard/store (the LeaseStore interface and sentinels) and
// shard/clock only; it must not import a store backend (its tests use
// memstore and cassandra) or any scheduler package.
package lease
