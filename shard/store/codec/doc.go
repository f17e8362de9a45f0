// Package codec is the compact, versioned binary encoding of the shard's
// stored records — task runtimes, job records (status and config version),
// job configs (the flate-compressed spec, overrides included), pools,
// updates, host records and events — shared by every store backend that
// keeps records as opaque values (the embedded bbolt store and Cassandra),
// so that both read and write exactly the same bytes. Beside the encoding
// it holds what every backend shares about those values: the checks that
// reject what no backend stores (ErrInvalid), deep copies of specs, and a
// bounded cache of decoded configs (SpecCache), which never go stale as a
// stored config never changes.
//
// Each value starts with its record version: a reader decodes every older
// version of a kind, filling the fields that version lacks with zero
// values, and rejects a newer one as ErrCorrupt; a writer always writes the
// latest. Job records of versions 1 and 2 hold the spec themselves: they
// read as the job at config version 1. Resource amounts are varints of
// integer units (millicores, MiB, devices) from ConfigRecordV3,
// PoolRecordV2 and HostRecordV3 on; older records hold doubles (cpu in
// cores, +Inf for no limit), which read back rounded to the nearest unit.
// Pool shares are weights and stay doubles. Keys (job id, task id, pool path,
// update id, host id, event seq) are not part of the values.
// Decoding never panics and bounds what a corrupt value can make it
// allocate.
//
// It imports shard/model and shard/store (for the sentinel errors) only; it
// must not import any backend.
package codec
