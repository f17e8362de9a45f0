// Package codec is the compact, versioned binary encoding of the shard's
// stored records — task runtimes, jobs (status plus a flate-compressed
// spec) and pools — shared by every store backend that keeps records as
// opaque values (the embedded bbolt store and Cassandra), so that both
// read and write exactly the same bytes.
//
// Each value starts with its record version: a reader decodes every older
// version of a kind, filling the fields that version lacks with zero
// values, and rejects a newer one as ErrCorrupt; a writer always writes the
// latest. Keys (job id, task id, pool path) are not part of the values.
// Decoding never panics and bounds what a corrupt value can make it
// allocate.
//
// It imports shard/model and shard/store (for the sentinel errors) only; it
// must not import any backend.
package codec
