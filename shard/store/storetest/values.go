package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

func testValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := kinds.GetValue(ctx, s, "mesos/dc1/framework-id"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetValue of a missing key: %v, want ErrNotFound", err)
	}
	if err := kinds.PutValue(ctx, s, "", []byte("x")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("PutValue with an empty key: %v, want ErrInvalid", err)
	}
	v := []byte("framework-1")
	if err := kinds.PutValue(ctx, s, "mesos/dc1/framework-id", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X' // the store must have kept its own copy
	got, err := kinds.GetValue(ctx, s, "mesos/dc1/framework-id")
	if err != nil || !bytes.Equal(got, []byte("framework-1")) {
		t.Fatalf("GetValue = %q, %v", got, err)
	}
	got[0] = 'Y'
	if err := kinds.PutValue(ctx, s, "mesos/dc1/framework-id", []byte("framework-2")); err != nil {
		t.Fatal(err)
	}
	got, err = kinds.GetValue(ctx, s, "mesos/dc1/framework-id")
	if err != nil || !bytes.Equal(got, []byte("framework-2")) {
		t.Fatalf("after replace GetValue = %q, %v", got, err)
	}
	if _, err := kinds.GetValue(ctx, s, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetValue of another key: %v", err)
	}
}

// testRecordRules: the rules of store.RecordStore every kind relies on,
// checked on the tables of package kinds.
func testRecordRules(t *testing.T, s store.Store) {
	ctx := context.Background()
	pool := codecPool(t, "/rules", 1)
	if err := s.PutRecords(ctx, kinds.PoolTable, []store.Record{{Key: "/rules", Data: pool}}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("PutRecords on a table with revisions: %v, want ErrInvalid", err)
	}
	if err := s.CreateRecord(ctx, kinds.ValueTable, "rules", []byte("x")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("CreateRecord on a table without revisions: %v, want ErrInvalid", err)
	}
	if err := s.PutRecords(ctx, kinds.ValueTable, []store.Record{{Key: "", Data: []byte("x")}}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("PutRecords of a record without a key: %v, want ErrInvalid", err)
	}
	if err := s.SwapRecord(ctx, kinds.PoolTable, "/rules", 1, pool); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SwapRecord of a missing record: %v, want ErrNotFound", err)
	}
	if err := s.DeleteRecord(ctx, kinds.PoolTable, "/rules"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteRecord of a missing record with revisions: %v, want ErrNotFound", err)
	}
	if err := s.DeleteRecord(ctx, kinds.ValueTable, "never-put"); err != nil {
		t.Fatalf("DeleteRecord of a missing record without revisions: %v, want no error", err)
	}
	mustNil(t, s.CreateRecord(ctx, kinds.PoolTable, "/rules", pool), "CreateRecord")
	if err := s.CreateRecord(ctx, kinds.PoolTable, "/rules", pool); !errors.Is(err, store.ErrExists) {
		t.Fatalf("CreateRecord of a taken key: %v, want ErrExists", err)
	}
	if err := s.SwapRecord(ctx, kinds.PoolTable, "/rules", 2, codecPool(t, "/rules", 3)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("SwapRecord at another revision: %v, want ErrConflict", err)
	}
	mustNil(t, s.SwapRecord(ctx, kinds.PoolTable, "/rules", 1, codecPool(t, "/rules", 2)), "SwapRecord")
	got, err := kinds.Pools.Get(ctx, s, "/rules")
	if err != nil || got.Revision != 2 {
		t.Fatalf("pool after SwapRecord: %+v, %v; want revision 2", got, err)
	}
	mustNil(t, s.DeleteRecord(ctx, kinds.PoolTable, "/rules"), "DeleteRecord")
	if _, err := s.GetRecord(ctx, kinds.PoolTable, "/rules"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRecord after DeleteRecord: %v, want ErrNotFound", err)
	}
}

// codecPool is the encoding of a full pool at path, at revision rev.
func codecPool(t *testing.T, path string, rev uint64) []byte {
	t.Helper()
	p := FullPool(path)
	return kinds.Pools.Encode(p, rev)
}
