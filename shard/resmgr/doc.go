// Package resmgr is the shard's resource manager: pending queues, admission
// of tasks within entitlement, and (in entitlement/) the hierarchical max-min
// fair entitlement core. Admission is a pure function of the queues, the
// capacity and the current allocation; the job manager's loop feeds it and
// applies its decisions. It must not import the job manager, placement,
// storage or host manager plugins.
package resmgr
