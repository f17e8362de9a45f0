// Package boltstore is the shard's embedded, durable store.Store on bbolt:
// one file, one writer transaction at a time, fsync on every commit, so a
// call that returned nil survives a crash.
//
// Layout: bucket "jobs" maps a job id to its encoded job (status plus the
// flate-compressed spec); bucket "tasks" holds one nested bucket per job,
// mapping the big-endian 4-byte instance number to the encoded runtime, so
// listing a job's tasks is one ordered cursor scan and deleting a job drops
// one bucket. Values use a compact, versioned binary encoding (codec.go).
//
// It imports shard/model, shard/store and bbolt only; it must not import
// the scheduler packages or any other backend.
package boltstore
