// Package kinds declares the record kinds every store backend keeps
// through store.RecordStore: where each lives (its store.Table) and its
// typed calls (its store.Kind: key, revision, checks and codec). Adding
// such a kind is a Table and a Kind here, a codec in package codec and a
// Cassandra table in the schema; no backend changes.
//
// It imports shard/store and shard/store/codec; the backends and the
// store's users import it.
package kinds

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// revision reads the revision of a record encoded in versions up to
// latest.
func revision(latest byte) func([]byte) (uint64, error) {
	return func(b []byte) (uint64, error) { return codec.StoredRevision(b, latest) }
}

// PoolTable holds the resource pools by path.
var PoolTable = &store.Table{Name: "pools", Key: "path", Revision: revision(codec.PoolRecordVersion)}

// MigrationTable holds the cluster migrations by id.
var MigrationTable = &store.Table{Name: "migrations", CQL: "cluster_migrations", Key: "id", Part: true,
	Revision: revision(codec.MigrationRecordVersion)}

// HostTable holds what the shard knows of its hosts, by host id; its
// records carry no revision.
var HostTable = &store.Table{Name: "hosts", Key: "id", Part: true}

// Pools are the resource pool tree, listed by path in byte order, so that
// a pool comes before its descendants.
var Pools = &store.Kind[*model.Pool]{
	Table: PoolTable, Name: "pool", WriteVerb: "update",
	Key:      func(p *model.Pool) string { return p.Path },
	Revision: func(p *model.Pool) *uint64 { return &p.Revision },
	Check:    codec.CheckPool,
	CheckKey: codec.CheckPoolPath,
	Encode:   codec.EncodePool,
	Decode:   codec.DecodePool,
}

// Migrations are the cluster migrations, listed oldest first.
var Migrations = &store.Kind[*model.Migration]{
	Table: MigrationTable, Name: "migration", WriteVerb: "write",
	Key:      func(m *model.Migration) string { return string(m.ID) },
	Revision: func(m *model.Migration) *uint64 { return &m.Revision },
	Check:    codec.CheckMigration,
	Encode:   codec.EncodeMigration,
	Decode: func(key string, b []byte) (*model.Migration, error) {
		return codec.DecodeMigration(model.MigrationID(key), b)
	},
	Compare: codec.CompareMigrations,
}

// Hosts are the host records, listed by id; Put stores or replaces many
// at once, and deleting an unknown host is no error.
var Hosts = &store.Kind[*model.HostRecord]{
	Table: HostTable, Name: "host",
	Key:    func(h *model.HostRecord) string { return string(h.Host.ID) },
	Check:  func(h *model.HostRecord) error { return codec.CheckHosts([]*model.HostRecord{h}) },
	Encode: func(h *model.HostRecord, _ uint64) []byte { return codec.EncodeHost(h) },
	Decode: func(key string, b []byte) (*model.HostRecord, error) {
		return codec.DecodeHost(model.HostID(key), b)
	},
}

// ValueTable holds the named values, small records the shard's
// components keep by name (a Mesos framework id, the federation's
// replicas); they carry no revision.
var ValueTable = &store.Table{Name: "values", CQL: "named_values", Key: "name", Column: "value"}

// Value is a named value.
type Value struct {
	Name string
	Data []byte
}

// Values are the named values (GetValue and PutValue read and write one).
var Values = &store.Kind[*Value]{
	Table: ValueTable, Name: "value",
	Key: func(v *Value) string { return v.Name },
	Check: func(v *Value) error {
		if v == nil || v.Name == "" {
			return fmt.Errorf("%w: a value without a name", store.ErrInvalid)
		}
		return nil
	},
	Encode: func(v *Value, _ uint64) []byte { return v.Data },
	Decode: func(key string, b []byte) (*Value, error) { return &Value{Name: key, Data: b}, nil },
}

// GetValue returns the value named name; ErrNotFound if it was never put.
func GetValue(ctx context.Context, s store.RecordStore, name string) ([]byte, error) {
	v, err := Values.Get(ctx, s, name)
	if err != nil {
		return nil, err
	}
	return v.Data, nil
}

// PutValue stores or replaces the value named name.
func PutValue(ctx context.Context, s store.RecordStore, name string, data []byte) error {
	return Values.Put(ctx, s, []*Value{{Name: name, Data: data}})
}

// Tables are the tables of every kind, for a copy of a whole store.
func Tables() []*store.Table {
	return []*store.Table{PoolTable, MigrationTable, HostTable, ValueTable}
}
