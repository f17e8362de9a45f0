package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/peloton-federated/peloton/shard/store"
)

func testValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.GetValue(ctx, "mesos/dc1/framework-id"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetValue of a missing key: %v, want ErrNotFound", err)
	}
	if err := s.PutValue(ctx, "", []byte("x")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("PutValue with an empty key: %v, want ErrInvalid", err)
	}
	v := []byte("framework-1")
	if err := s.PutValue(ctx, "mesos/dc1/framework-id", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X' // the store must have kept its own copy
	got, err := s.GetValue(ctx, "mesos/dc1/framework-id")
	if err != nil || !bytes.Equal(got, []byte("framework-1")) {
		t.Fatalf("GetValue = %q, %v", got, err)
	}
	got[0] = 'Y'
	if err := s.PutValue(ctx, "mesos/dc1/framework-id", []byte("framework-2")); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetValue(ctx, "mesos/dc1/framework-id")
	if err != nil || !bytes.Equal(got, []byte("framework-2")) {
		t.Fatalf("after replace GetValue = %q, %v", got, err)
	}
	if _, err := s.GetValue(ctx, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetValue of another key: %v", err)
	}
}
