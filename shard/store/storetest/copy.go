package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// RunCopy runs the contract of store.Copy against stores made by open:
// a reference store (reference, a fresh empty one each call: the
// memstore) is filled with a record of every kind, copied into the
// backend and back out into a second reference store, and the two must
// hold the same records: the backend is both the destination and the
// source of a copy. A second copy into the filled backend is refused,
// changing nothing. (The reference is passed in: this package cannot
// import a backend whose own tests import it.)
func RunCopy(t *testing.T, open Opener, reference func() store.Whole) {
	runCase(t, "CopyWhole", open, func(t *testing.T, s store.Store) { testCopyWhole(t, s, reference) })
}

func testCopyWhole(t *testing.T, s store.Store, reference func() store.Whole) {
	ctx := context.Background()
	backend, ok := s.(store.Whole)
	if !ok {
		t.Fatalf("%T cannot be copied whole (store.Whole)", s)
	}
	opts := store.CopyOptions{EventRetention: time.Hour, AuditRetention: time.Hour, TaskBatch: 3, Tables: kinds.Tables()}
	from := reference()
	fillWhole(t, from, time.Hour)
	n, err := store.Copy(ctx, backend, from, opts)
	mustNil(t, err, "Copy into the backend")
	want := store.CopyCounts{Jobs: 2, Configs: 3, Tasks: 7, Updates: 1, Events: 4, Audit: 2,
		Records: map[string]int{"pools": 2, "migrations": 1, "hosts": 2, "values": 2}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("Copy into the backend wrote %+v, want %+v", n, want)
	}
	back := reference()
	if n, err = store.Copy(ctx, back, backend, opts); err != nil || !reflect.DeepEqual(n, want) {
		t.Fatalf("Copy out of the backend: %+v, %v; want %+v", n, err, want)
	}
	requireEqual(t, "the store copied in and out", wholeOf(t, back), wholeOf(t, from))

	_, err = store.Copy(ctx, backend, from, opts)
	if !errors.Is(err, store.ErrNotEmpty) {
		t.Fatalf("Copy into a filled store: %v, want ErrNotEmpty", err)
	}
	requireEqual(t, "the backend after a refused copy", wholeOf(t, backend), wholeOf(t, from))
}

// fillWhole writes a record of every kind Copy copies; events and audit
// records are kept for ttl.
func fillWhole(t *testing.T, s store.Whole, ttl time.Duration) {
	ctx := context.Background()
	for _, p := range []string{"/a", "/a/b"} {
		mustNil(t, kinds.Pools.Create(ctx, s, FullPool(p)), "CreatePool")
	}
	mustNil(t, kinds.PutValue(ctx, s, "mesos/dc1/framework-id", []byte("fw-1")), "PutValue")
	mustNil(t, kinds.PutValue(ctx, s, "security/policies", []byte(`{"roles":[]}`)), "PutValue")
	for i, id := range []model.JobID{"job-1", "job-2"} {
		j := FullJob(id)
		j.ConfigVersion = 1
		mustNil(t, s.CreateJob(ctx, j), "CreateJob")
		var tasks []*model.TaskRuntime
		for in := range uint32(3 + i) {
			tasks = append(tasks, FullTask(model.TaskID{Job: id, Instance: in}))
		}
		mustNil(t, s.WriteTasks(ctx, tasks), "WriteTasks")
		mustNil(t, s.AppendEvents(ctx, jobEvents(id, 10, 2), ttl), "AppendEvents")
	}
	spec := FullJob("job-1").Spec
	spec.Name = "version 2"
	mustNil(t, s.PutJobConfig(ctx, "job-1", 2, &spec), "PutJobConfig")
	j, err := s.GetJob(ctx, "job-1")
	mustNil(t, err, "GetJob")
	j.ConfigVersion = 2
	mustNil(t, s.UpdateJob(ctx, j), "UpdateJob")
	mustNil(t, s.CreateUpdate(ctx, FullUpdate(model.MakeUpdateID("job-1", 2), "job-1")), "CreateUpdate")
	mustNil(t, kinds.Migrations.Create(ctx, s, FullMigration("m-1")), "CreateMigration")
	mustNil(t, kinds.Hosts.Put(ctx, s, []*model.HostRecord{FullHost("c/h1"), FullHost("c/h2")}), "PutHosts")
	base := auditBase()
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(base, "alice", "job j1"), auditRecord(base.Add(time.Millisecond), "bob", "job j2")}, ttl), "AppendAudit")
}

// whole is every record of a store as Copy sees it, revisions left out
// (they start again in a copy).
type whole struct {
	Jobs       []*model.Job
	Configs    map[model.JobID][]*model.JobSpec
	Tasks      map[model.JobID][]*model.TaskRuntime
	Updates    map[model.JobID][]*model.Update
	Events     map[model.JobID][]model.Event
	Pools      []*model.Pool
	Values     map[string][]byte
	Migrations []*model.Migration
	Hosts      []*model.HostRecord
	Audit      []model.AuditRecord
}

func wholeOf(t *testing.T, s store.Whole) whole {
	t.Helper()
	ctx := context.Background()
	w := whole{Configs: map[model.JobID][]*model.JobSpec{}, Tasks: map[model.JobID][]*model.TaskRuntime{},
		Updates: map[model.JobID][]*model.Update{}, Events: map[model.JobID][]model.Event{}}
	var err error
	w.Jobs, err = s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	for _, j := range w.Jobs {
		j.Revision = 0
		versions, err := s.ListJobConfigVersions(ctx, j.ID)
		mustNil(t, err, "ListJobConfigVersions")
		for _, v := range versions {
			spec, err := s.GetJobConfig(ctx, j.ID, v)
			mustNil(t, err, "GetJobConfig")
			w.Configs[j.ID] = append(w.Configs[j.ID], spec)
		}
		tasks, err := s.ListTasks(ctx, j.ID)
		mustNil(t, err, "ListTasks")
		for _, task := range tasks {
			task.Revision = 0
		}
		w.Tasks[j.ID] = tasks
		updates, err := s.ListUpdates(ctx, j.ID)
		mustNil(t, err, "ListUpdates")
		for _, u := range updates {
			u.Revision = 0
		}
		w.Updates[j.ID] = updates
		w.Events[j.ID] = listEvents(t, s, store.EventQuery{Job: j.ID})
	}
	w.Pools, err = kinds.Pools.List(ctx, s)
	mustNil(t, err, "ListPools")
	for _, p := range w.Pools {
		p.Revision = 0
	}
	values, err := kinds.Values.List(ctx, s)
	mustNil(t, err, "list values")
	w.Values = map[string][]byte{}
	for _, v := range values {
		w.Values[v.Name] = v.Data
	}
	w.Migrations, err = kinds.Migrations.List(ctx, s)
	mustNil(t, err, "ListMigrations")
	for _, m := range w.Migrations {
		m.Revision = 0
	}
	w.Hosts, err = kinds.Hosts.List(ctx, s)
	mustNil(t, err, "ListHosts")
	w.Audit, err = s.ListAudit(ctx, store.AuditQuery{})
	mustNil(t, err, "ListAudit")
	return w
}

// Contents is every record of a store, revisions left out, for a test that
// compares a store with what an earlier build wrote (see FillLayout).
type Contents struct {
	whole
	// TaskEvents are each job's events of each of its tasks, by instance.
	TaskEvents map[model.JobID]map[uint32][]model.Event
}

// FillLayout writes a record of every kind, events and audit records kept
// for ttl, with events of tasks beside those of jobs: what a file written
// by one build holds, for the next build to read (a layout change's test).
func FillLayout(t *testing.T, s store.Whole, ttl time.Duration) {
	t.Helper()
	fillWhole(t, s, ttl)
	for _, id := range []model.JobID{"job-1", "job-2"} {
		mustNil(t, s.AppendEvents(context.Background(), taskEvents(id, 20, 3, 2), ttl), "AppendEvents")
	}
}

// ContentsOf reads every record of s.
func ContentsOf(t *testing.T, s store.Whole) Contents {
	t.Helper()
	c := Contents{whole: wholeOf(t, s), TaskEvents: map[model.JobID]map[uint32][]model.Event{}}
	for _, j := range c.Jobs {
		c.TaskEvents[j.ID] = map[uint32][]model.Event{}
		for _, task := range c.Tasks[j.ID] {
			in := task.ID.Instance
			c.TaskEvents[j.ID][in] = listEvents(t, s, store.EventQuery{Job: j.ID, Instance: &in})
		}
	}
	return c
}

// RequireContents fails unless got and want hold the same records.
func RequireContents(t *testing.T, what string, got, want Contents) {
	t.Helper()
	requireEqual(t, what, got, want)
}
