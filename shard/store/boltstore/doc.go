// Package boltstore is the shard's embedded, durable store.Store on bbolt:
// one file, one writer transaction at a time, fsync on every commit, so a
// call that returned nil survives a crash. Small writes that callers make
// at once (job creates, task, job and event writes, audit records) share
// commits: a write that arrives while a commit runs joins the next one
// (groupcommit.go), so the slower the disk, the more each fsync carries.
//
// Layout: bucket "jobs" maps a job id to its job record (status and
// config version); bucket "configs" holds one nested bucket per job,
// mapping the big-endian 8-byte config version to the config record (the
// flate-compressed spec), numbered (bucket sequence) anew by every
// CreateJob so that decoded configs cached under an earlier job of the
// same id never match. A job record of an older build holds its spec
// itself, as config version 1: it reads as such, and the spec moves into
// "configs" when the record is first updated. Bucket "tasks" holds one nested bucket per job,
// mapping the big-endian 4-byte instance number to the encoded runtime, so
// listing a job's tasks is one ordered cursor scan and deleting a job drops
// one bucket; bucket "pools" maps a pool's path to its encoded pool, so a
// cursor lists pools in path order. Bucket "updates" maps an update id to
// its record and "job_updates" lists each job's update ids; "hosts" maps a
// host id to its record. Bucket "events" holds per job a "seq" bucket
// (big-endian Seq → expiry and event record) and a "task" bucket
// (instance and Seq → nothing), so a query with After and Limit, or for
// one task, reads only what it returns; expired events are skipped on
// read and deleted by PruneEvents. DeleteJob drops the job's nested
// buckets and updates in the one transaction that deletes its record.
// Values use the versioned binary record
// encoding of package shard/store/codec, shared with the Cassandra backend:
// a reader decodes every older version of a kind, filling fields that
// version lacks with zero values, and a writer always writes the latest. The "meta" bucket
// holds the file format, which a new bucket does not change: an older file
// gains the buckets it lacks when opened.
//
// It imports shard/model, shard/store, shard/store/codec and bbolt only; it must not import
// the scheduler packages or any other backend.
package boltstore
