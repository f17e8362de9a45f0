// Package storetest is the contract suite every store.Store backend must
// pass: job create/get/list/update/delete, pool create/update/delete/list,
// compare-and-set on revisions, atomic task batches (within and across
// partitions; a backend declares weaker cross-partition atomicity under
// racing writers with PartitionedBatches, which skips that one test),
// ordering, full-field round trips (unlimited +Inf pool limits included),
// aliasing, a 100,000-instance job, concurrent writers, and a randomised
// comparison with a naive reference model; versioned job configs (one
// with an override for each of 100,000 instances), UpdateJob leaving the
// spec alone, DeleteJob cascading to configs, updates and events; updates
// with compare-and-set, host records, and events with ordering, After,
// Limit, instance filter and expiry (TTLs of a second, polled with a
// deadline); leases, for stores with store.LeaseStore (terms, renewal,
// release, expiry, one winner among concurrent acquirers, a reference
// model). testing.Short() shrinks the large cases. A backend's own test calls Run with a function
// that opens a fresh, empty store; a backend that keeps only leases (such
// as Kubernetes Lease objects) calls RunLeases.
//
// It imports shard/model, shard/store and the standard library's testing
// packages only; it must not import any backend.
package storetest
