package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
)

// revisioned is a record kind kept by id with a revision that every write
// compares and sets (updates, migrations): what the kind's contract test
// needs of it.
type revisioned[T any] struct {
	name   string             // the kind's name in its methods: "Migration"
	full   func(id string) *T // a record whose every field but Revision is set
	create func(context.Context, *T) error
	write  func(context.Context, *T) error
	get    func(context.Context, string) (*T, error)
	list   func(context.Context) ([]*T, error) // the records testListOldestFirst makes
	// revision, message and created are the record's Revision, Message and
	// CreateTime fields.
	revision func(*T) *uint64
	message  func(*T) *string
	created  func(*T) *time.Time
	change   func(*T) // a change a write stores
}

// testCompareAndSet checks the contract of k's Create, Write and Get on a
// record of id "rec-1", and returns it as stored at revision 2.
func testCompareAndSet[T any](t *testing.T, k revisioned[T]) *T {
	t.Helper()
	ctx := context.Background()
	kind := strings.ToLower(k.name)
	r := k.full("rec-1")
	*k.revision(r) = 9 // ignored: a new record starts at revision 1
	requireIs(t, k.create(ctx, nil), store.ErrInvalid, "")
	requireIs(t, k.create(ctx, k.full("")), store.ErrInvalid, "")
	mustNil(t, k.create(ctx, r), "Create"+k.name)
	if *k.revision(r) != 1 {
		t.Fatalf("caller's Revision after create = %d, want 1", *k.revision(r))
	}
	got, err := k.get(ctx, "rec-1")
	mustNil(t, err, "Get"+k.name)
	requireUTC(t, kind, got)
	requireEqual(t, "stored "+kind, got, r)
	if zero := zeroFieldPaths(got); len(zero) != 0 {
		t.Fatalf("Full%s leaves fields zero, extend it: %v", k.name, zero)
	}
	dup := k.full("rec-1")
	*k.message(dup) = "impostor"
	requireIs(t, k.create(ctx, dup), store.ErrExists, "rec-1")

	k.change(r)
	mustNil(t, k.write(ctx, r), "Write"+k.name)
	if *k.revision(r) != 2 {
		t.Fatalf("caller's Revision after write = %d, want 2", *k.revision(r))
	}
	for _, rev := range []uint64{0, 1, 3} {
		stale := *r
		*k.revision(&stale), *k.message(&stale) = rev, "stale"
		requireIs(t, k.write(ctx, &stale), store.ErrConflict, "rec-1")
		if *k.revision(&stale) != rev {
			t.Fatalf("rejected write changed caller's Revision %d to %d", rev, *k.revision(&stale))
		}
	}
	requireIs(t, k.write(ctx, k.full("ghost")), store.ErrNotFound, "ghost")
	got, err = k.get(ctx, "rec-1")
	mustNil(t, err, "Get"+k.name)
	requireEqual(t, kind+" after rejected writes", got, r)
	_, err = k.get(ctx, "rec")
	requireIs(t, err, store.ErrNotFound, "rec")
	return r
}

// testListOldestFirst checks that k's list holds none, then the records it
// is given oldest first, and by id when two share a create time.
func testListOldestFirst[T any](t *testing.T, k revisioned[T]) {
	t.Helper()
	ctx := context.Background()
	got, err := k.list(ctx)
	mustNil(t, err, "List"+k.name+"s")
	if len(got) != 0 {
		t.Fatalf("List%ss with none stored: %d", k.name, len(got))
	}
	// Created out of order; two share a create time and go by id.
	var made []*T
	for i, sec := range []int64{50, 10, 30, 30, 0} {
		r := k.full(fmt.Sprintf("rec-%d", i))
		*k.created(r) = fixtureTime(sec, 0)
		mustNil(t, k.create(ctx, r), "Create"+k.name)
		made = append(made, r)
	}
	got, err = k.list(ctx)
	mustNil(t, err, "List"+k.name+"s")
	want := []*T{made[4], made[1], made[2], made[3], made[0]}
	requireEqual(t, strings.ToLower(k.name)+"s oldest first", got, want)
}
