package boltstore

import (
	"errors"

	"github.com/peloton-federated/peloton/shard/store/codec"
)

// fileFormat is the layout version kept in the meta bucket: which key
// shapes the buckets use. Adding a bucket leaves it unchanged, since an
// older file simply gains the bucket when it is opened. Format 2 keeps
// a job's tasks and events in one bucket of its own and its configs in
// one flat bucket (layout.go); Open moves a format 1 file's records into
// them.
const fileFormat = 2

// The values themselves use the shared record encoding of package codec.
const (
	taskRecordVersion = codec.TaskRecordVersion
	jobRecordVersion  = codec.JobRecordVersion
	poolRecordVersion = codec.PoolRecordVersion
)

// ErrCorrupt means a stored value could not be decoded.
var ErrCorrupt = codec.ErrCorrupt

// ErrNewerFormat means the file was written by a newer build, in a
// layout this build cannot read.
var ErrNewerFormat = errors.New("store file written by a newer build")

var (
	appendTask     = codec.AppendTask
	storedRevision = codec.StoredRevision
	decodeTask     = codec.DecodeTask
	decodeTaskInto = codec.DecodeTaskInto
)
