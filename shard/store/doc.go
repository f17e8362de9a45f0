// Package store is the shard's storage gateway: one small interface per
// aggregate (jobs, tasks, ...), the sentinel errors, and the backends that
// implement them. Every backend must pass the contract suite in storetest.
// The scheduler depends only on these interfaces, never on a backend.
package store
