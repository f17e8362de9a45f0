package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// updateKind is the updates of s to job, for the contract of a revisioned
// record kind.
func updateKind(s store.Store, job model.JobID) revisioned[model.Update] {
	return revisioned[model.Update]{
		name:   "Update",
		full:   func(id string) *model.Update { return FullUpdate(model.UpdateID(id), job) },
		create: s.CreateUpdate,
		write:  s.WriteUpdate,
		get: func(ctx context.Context, id string) (*model.Update, error) {
			return s.GetUpdate(ctx, model.UpdateID(id))
		},
		list:     func(ctx context.Context) ([]*model.Update, error) { return s.ListUpdates(ctx, job) },
		revision: func(u *model.Update) *uint64 { return &u.Revision },
		message:  func(u *model.Update) *string { return &u.Message },
		created:  func(u *model.Update) *time.Time { return &u.CreateTime },
		change:   func(u *model.Update) { u.InstancesDone, u.State = u.InstancesTotal, model.UpdateSucceeded },
	}
}

func testUpdatesCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "job")
	requireIs(t, s.CreateUpdate(ctx, FullUpdate("u0", "ghost")), store.ErrNotFound, "ghost")
	requireIs(t, s.CreateUpdate(ctx, FullUpdate("u0", "")), store.ErrInvalid, "u0")
	u := testCompareAndSet(t, updateKind(s, "job"))
	moved := *u
	moved.Job = "other"
	requireIs(t, s.WriteUpdate(ctx, &moved), store.ErrInvalid, string(u.ID))
	got, err := s.GetUpdate(ctx, u.ID)
	mustNil(t, err, "GetUpdate")
	requireEqual(t, "update after a write that moves it", got, u)
}

func testListUpdatesOldestFirst(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "a")
	createJob(t, s, "ab")
	_, err := s.ListUpdates(ctx, "ghost")
	requireIs(t, err, store.ErrNotFound, "ghost")
	mustNil(t, s.CreateUpdate(ctx, FullUpdate("other", "ab")), "CreateUpdate of another job")
	testListOldestFirst(t, updateKind(s, "a"))
}

func testHosts(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := kinds.Hosts.List(ctx, s); err != nil || len(got) != 0 {
		t.Fatalf("empty store lists %d hosts, %v", len(got), err)
	}
	_, err := kinds.Hosts.Get(ctx, s, "c/none")
	requireIs(t, err, store.ErrNotFound, "c/none")
	requireIs(t, kinds.Hosts.Put(ctx, s, []*model.HostRecord{FullHost("c/a"), nil}), store.ErrInvalid, "")
	requireIs(t, kinds.Hosts.Put(ctx, s, []*model.HostRecord{{}}), store.ErrInvalid, "")
	mustNil(t, kinds.Hosts.Put(ctx, s, nil), "PutHosts of none")

	var batch []*model.HostRecord
	for _, id := range []model.HostID{"c/b", "c/a", "B/z", "c/a-1", "c/a/1"} {
		batch = append(batch, FullHost(id))
	}
	bare := &model.HostRecord{Host: model.Host{ID: "c/bare"}}
	mustNil(t, kinds.Hosts.Put(ctx, s, append(batch, bare)), "PutHosts")
	got, err := kinds.Hosts.Get(ctx, s, "c/a")
	mustNil(t, err, "GetHost")
	requireUTC(t, "host", got)
	requireEqual(t, "host", got, batch[1])
	if zero := zeroFieldPaths(got); len(zero) != 0 {
		t.Fatalf("FullHost leaves fields zero, extend it: %v", zero)
	}
	bareGot, err := kinds.Hosts.Get(ctx, s, "c/bare")
	mustNil(t, err, "GetHost bare")
	requireEqual(t, "bare host", bareGot, bare)

	// Replacing keeps one record per id; the caller's copy is not kept.
	batch[0].Draining = false
	batch[0].Host.Labels["rack"] = "r8"
	mustNil(t, kinds.Hosts.Put(ctx, s, batch[:1]), "PutHosts replace")
	batch[0].Host.Labels["rack"] = "changed"
	listed, err := kinds.Hosts.List(ctx, s)
	mustNil(t, err, "ListHosts")
	order := []model.HostID{"B/z", "c/a", "c/a-1", "c/a/1", "c/b", "c/bare"}
	if len(listed) != len(order) {
		t.Fatalf("ListHosts returned %d hosts, want %d", len(listed), len(order))
	}
	for i, h := range listed {
		if h.Host.ID != order[i] {
			t.Fatalf("ListHosts[%d] = %s, want %s (byte order of ids)", i, h.Host.ID, order[i])
		}
	}
	if h := listed[4]; h.Draining || h.Host.Labels["rack"] != "r8" {
		t.Fatalf("replaced host reads as %+v", h)
	}

	mustNil(t, kinds.Hosts.Delete(ctx, s, "c/a"), "DeleteHost")
	mustNil(t, kinds.Hosts.Delete(ctx, s, "c/never"), "DeleteHost of an unknown host")
	_, err = kinds.Hosts.Get(ctx, s, "c/a")
	requireIs(t, err, store.ErrNotFound, "c/a")
	if listed, err := kinds.Hosts.List(ctx, s); err != nil || len(listed) != len(order)-1 {
		t.Fatalf("after delete ListHosts has %d hosts, %v", len(listed), err)
	}
}
