// Package store is the shard's storage gateway: the interfaces every
// backend implements, the sentinel errors, and what is built on them
// (a pass's one write, a copy of a whole store). Records kept whole under
// a key (pools, cluster migrations, hosts, named values) go through the
// generic RecordStore: a Table says where a kind lives, a Kind gives its
// typed calls, and package kinds declares them. Jobs, tasks, updates,
// events, the audit log and leases have interfaces of their own. Every
// backend must pass the contract suite in storetest; the scheduler
// depends only on these interfaces, never on a backend.
package store
