// Package memstore is the in-memory twin of the shard's storage backends: a
// store.Store kept in maps behind one mutex, with the same semantics as the
// embedded bbolt backend (revisions, compare-and-set, atomic batches,
// sentinel errors). Values are deep-copied on every write and read, so a
// caller can never alias stored state. It is meant for unit tests of other
// shard packages and for dev runs that need no durability.
//
// Job configs are kept decoded, one copy per version, beside job records
// that name their version; events keep their expiry and are filtered on
// read (PruneEvents frees the expired ones).
//
// It imports only shard/model, shard/store and shard/store/codec (for the
// checks and deep copies every backend shares); it must not import any
// other backend or any scheduler package.
package memstore
