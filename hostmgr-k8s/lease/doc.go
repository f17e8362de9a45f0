// Package lease keeps a region's leader lease (store.LeaseStore) in
// Kubernetes, as coordination.k8s.io/v1 Lease objects in one namespace,
// for `peloton server` members that run in or beside a Kubernetes cluster
// (`ha: {lease: kubernetes}`) instead of in the Cassandra store.
//
// One Lease object per lease name:
//
//	spec.holderIdentity        the holder; unset when free
//	spec.leaseTransitions      the fencing term: the last one handed out,
//	                           incremented for every new holder (the same
//	                           holder included, after a release or expiry),
//	                           kept when the lease is released
//	spec.renewTime             the holder's clock at the call, rounded up
//	                           to the microsecond
//	spec.leaseDurationSeconds  the TTL rounded up to whole seconds
//	spec.acquireTime           when the holder took it
//
// so a lease taken or renewed by a call started at s is held at least
// until s + TTL. The object is never deleted: deleting it by hand would
// start the terms again at 1. The holder may renew until renewTime + leaseDurationSeconds
// on its own clock; another member takes it over only once its clock is
// past that plus ClockSkew, because the expiry was written with the
// holder's clock. Every write is a compare-and-set on the resourceVersion
// read (a create when there is no object yet); a call whose write loses
// reads and decides once more, then answers store.ErrConflict. The
// decisions (is it held, who may take it, the next term) are a pure
// function of the object read and now (decide.go); Store is the shell that
// reads and writes. An API server that cannot be reached or answer (also
// within the TTL for acquire and renew) is store.ErrUnavailable.
//
// It imports shard/store, shard/clock and client-go; never shard/lease, the
// host manager plugin beside it, or anything of the scheduler.
package lease
