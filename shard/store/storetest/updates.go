package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

func testUpdatesCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "job")
	u := FullUpdate("u1", "job")
	u.Revision = 9 // ignored: a new update starts at revision 1
	requireIs(t, s.CreateUpdate(ctx, FullUpdate("u0", "ghost")), store.ErrNotFound, "ghost")
	requireIs(t, s.CreateUpdate(ctx, nil), store.ErrInvalid, "")
	requireIs(t, s.CreateUpdate(ctx, FullUpdate("", "job")), store.ErrInvalid, "")
	requireIs(t, s.CreateUpdate(ctx, FullUpdate("u0", "")), store.ErrInvalid, "u0")
	mustNil(t, s.CreateUpdate(ctx, u), "CreateUpdate")
	if u.Revision != 1 {
		t.Fatalf("caller's Revision after create = %d, want 1", u.Revision)
	}
	got, err := s.GetUpdate(ctx, "u1")
	mustNil(t, err, "GetUpdate")
	requireUTC(t, "update", got)
	requireEqual(t, "stored update", got, u)
	if zero := zeroFieldPaths(got); len(zero) != 0 {
		t.Fatalf("FullUpdate leaves fields zero, extend it: %v", zero)
	}
	dup := FullUpdate("u1", "job")
	dup.Message = "impostor"
	requireIs(t, s.CreateUpdate(ctx, dup), store.ErrExists, "u1")

	u.InstancesDone, u.State = u.InstancesTotal, model.UpdateSucceeded
	mustNil(t, s.WriteUpdate(ctx, u), "WriteUpdate")
	if u.Revision != 2 {
		t.Fatalf("caller's Revision after write = %d, want 2", u.Revision)
	}
	for _, rev := range []uint64{0, 1, 3} {
		stale := *u
		stale.Revision, stale.Message = rev, "stale"
		requireIs(t, s.WriteUpdate(ctx, &stale), store.ErrConflict, "u1")
		if stale.Revision != rev {
			t.Fatalf("rejected write changed caller's Revision %d to %d", rev, stale.Revision)
		}
	}
	moved := *u
	moved.Job = "other"
	requireIs(t, s.WriteUpdate(ctx, &moved), store.ErrInvalid, "u1")
	requireIs(t, s.WriteUpdate(ctx, FullUpdate("ghost", "job")), store.ErrNotFound, "ghost")
	got, err = s.GetUpdate(ctx, "u1")
	mustNil(t, err, "GetUpdate")
	requireEqual(t, "update after rejected writes", got, u)
	_, err = s.GetUpdate(ctx, "u")
	requireIs(t, err, store.ErrNotFound, "u")
}

func testListUpdatesOldestFirst(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "a")
	createJob(t, s, "ab")
	_, err := s.ListUpdates(ctx, "ghost")
	requireIs(t, err, store.ErrNotFound, "ghost")
	if got, err := s.ListUpdates(ctx, "a"); err != nil || len(got) != 0 {
		t.Fatalf("ListUpdates of a job without updates: %d, %v", len(got), err)
	}
	// Created out of order; two share a create time and go by id.
	var want []*model.Update
	for i, sec := range []int64{50, 10, 30, 30, 0} {
		u := FullUpdate(model.UpdateID(fmt.Sprintf("u-%d", i)), "a")
		u.CreateTime = fixtureTime(sec, 0)
		mustNil(t, s.CreateUpdate(ctx, u), "CreateUpdate")
		want = append(want, u)
	}
	mustNil(t, s.CreateUpdate(ctx, FullUpdate("other", "ab")), "CreateUpdate of another job")
	want = []*model.Update{want[4], want[1], want[2], want[3], want[0]}
	got, err := s.ListUpdates(ctx, "a")
	mustNil(t, err, "ListUpdates")
	requireEqual(t, "updates oldest first", got, want)
}

func testHosts(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.ListHosts(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store lists %d hosts, %v", len(got), err)
	}
	_, err := s.GetHost(ctx, "c/none")
	requireIs(t, err, store.ErrNotFound, "c/none")
	requireIs(t, s.PutHosts(ctx, []*model.HostRecord{FullHost("c/a"), nil}), store.ErrInvalid, "")
	requireIs(t, s.PutHosts(ctx, []*model.HostRecord{{}}), store.ErrInvalid, "")
	mustNil(t, s.PutHosts(ctx, nil), "PutHosts of none")

	var batch []*model.HostRecord
	for _, id := range []model.HostID{"c/b", "c/a", "B/z", "c/a-1", "c/a/1"} {
		batch = append(batch, FullHost(id))
	}
	bare := &model.HostRecord{Host: model.Host{ID: "c/bare"}}
	mustNil(t, s.PutHosts(ctx, append(batch, bare)), "PutHosts")
	got, err := s.GetHost(ctx, "c/a")
	mustNil(t, err, "GetHost")
	requireUTC(t, "host", got)
	requireEqual(t, "host", got, batch[1])
	if zero := zeroFieldPaths(got); len(zero) != 0 {
		t.Fatalf("FullHost leaves fields zero, extend it: %v", zero)
	}
	bareGot, err := s.GetHost(ctx, "c/bare")
	mustNil(t, err, "GetHost bare")
	requireEqual(t, "bare host", bareGot, bare)

	// Replacing keeps one record per id; the caller's copy is not kept.
	batch[0].Draining = false
	batch[0].Host.Labels["rack"] = "r8"
	mustNil(t, s.PutHosts(ctx, batch[:1]), "PutHosts replace")
	batch[0].Host.Labels["rack"] = "changed"
	listed, err := s.ListHosts(ctx)
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

	mustNil(t, s.DeleteHost(ctx, "c/a"), "DeleteHost")
	mustNil(t, s.DeleteHost(ctx, "c/never"), "DeleteHost of an unknown host")
	_, err = s.GetHost(ctx, "c/a")
	requireIs(t, err, store.ErrNotFound, "c/a")
	if listed, err := s.ListHosts(ctx); err != nil || len(listed) != len(order)-1 {
		t.Fatalf("after delete ListHosts has %d hosts, %v", len(listed), err)
	}
}
