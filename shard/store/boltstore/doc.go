// Package boltstore is the shard's embedded, durable store.Store on bbolt:
// one file, one writer transaction at a time, fsync on every commit, so a
// call that returned nil survives a crash.
//
// Layout: bucket "jobs" maps a job id to its encoded job (status plus the
// flate-compressed spec); bucket "tasks" holds one nested bucket per job,
// mapping the big-endian 4-byte instance number to the encoded runtime, so
// listing a job's tasks is one ordered cursor scan and deleting a job drops
// one bucket; bucket "pools" maps a pool's path to its encoded pool, so a
// cursor lists pools in path order. Values use the versioned binary record
// encoding of package shard/store/codec, shared with the Cassandra backend:
// a reader decodes every older version of a kind, filling fields that
// version lacks with zero values, and a writer always writes the latest. The "meta" bucket
// holds the file format, which a new bucket does not change: an older file
// gains the "pools" bucket when opened.
//
// It imports shard/model, shard/store, shard/store/codec and bbolt only; it must not import
// the scheduler packages or any other backend.
package boltstore
