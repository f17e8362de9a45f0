// Package boltstore is the shard's embedded, durable store.Store on bbolt:
// one file, one writer transaction at a time, fsync on every commit, so a
// call that returned nil survives a crash. Small writes that callers make
// at once (job creates, task, job and event writes, audit records) share
// commits: a write that arrives while a commit runs joins the next one
// (groupcommit.go), so the slower the disk, the more each fsync carries.
//
// Layout (file format 2, layout.go): bucket "jobs" maps a job id to its
// job record (status and config version). Each job has one nested bucket
// under "job_records" holding its tasks ('t' and the big-endian 4-byte
// instance → the encoded runtime), its events ('z' and Seq → expiry and
// event record) and an index of each task's events ('i', instance and Seq
// → nothing), so listing a job's tasks, or its events after a Seq, or one
// task's events, is one ordered cursor scan that reads only what it
// returns; expired events are skipped on read and deleted by PruneEvents.
// The bucket's sequence is the job's incarnation, numbered anew by every
// CreateJob so that decoded configs cached under an earlier job of the
// same id never match. Configs are in the flat bucket "job_configs", keyed
// by the id (length-prefixed) and the big-endian 8-byte version, mapping
// to the config record (the flate-compressed spec), so that a job's bucket
// stays small enough to live inline in its parent's page. A job record of
// an older build holds its spec itself, as config version 1: it reads as
// such, and the spec moves into "job_configs" when the record is first
// updated. Bucket "pools" maps a pool's path to its encoded pool, so a
// cursor lists pools in path order. Bucket "updates" maps an update id to
// its record and "job_updates" lists each job's update ids; "hosts" maps a
// host id to its record. DeleteJob drops the job's bucket, configs and
// updates in the one transaction that deletes its record. Format 1 kept
// five nested buckets per job ("tasks", "configs", and "events" with two
// inside); Open moves a format 1 file's records into format 2 in one
// transaction.
// Values use the versioned binary record
// encoding of package shard/store/codec, shared with the Cassandra backend:
// a reader decodes every older version of a kind, filling fields that
// version lacks with zero values, and a writer always writes the latest. The "meta" bucket
// holds the file format, which a new bucket does not change: an older file
// gains the buckets it lacks when opened. A file of a newer format is
// refused.
//
// It imports shard/model, shard/store, shard/store/codec and bbolt only; it must not import
// the scheduler packages or any other backend.
package boltstore
