package storetest

import (
	"context"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// testWritePass: a pass's tasks, job record, update and migration are
// written together, or none of them when any record is stale.
func testWritePass(t *testing.T, s store.Store) {
	w, ok := s.(store.PassWriter)
	if !ok {
		t.Skip("this store has no PassWriter: the job manager writes its passes record kind by record kind")
	}
	ctx := context.Background()
	job := createJob(t, s, "job")
	u := FullUpdate("job.2", "job")
	mustNil(t, s.CreateUpdate(ctx, u), "CreateUpdate")
	m := FullMigration("mig")
	mustNil(t, kinds.Migrations.Create(ctx, s, m), "CreateMigration")
	mustNil(t, w.WritePass(ctx, store.Pass{}), "empty pass")

	tasks := newTasks("job", 0, 3)
	job.Status.State = model.JobRunning
	u.InstancesDone = 1
	m.Message = "moved two"
	fresh, taken := FullJob("fresh"), FullJob("job")
	version := max(fresh.ConfigVersion, 1)
	pass := store.Pass{NewJobs: []*model.Job{fresh, taken}, NewJobErrs: make([]error, 2),
		Tasks: tasks, Jobs: []*model.Job{job}, Updates: []*model.Update{u}, Records: []store.PassRecord{kinds.Migrations.Record(m)}}
	mustNil(t, w.WritePass(ctx, pass), "WritePass")
	mustNil(t, pass.NewJobErrs[0], "the new job's outcome")
	requireIs(t, pass.NewJobErrs[1], store.ErrExists, "job")
	if fresh.Revision != 1 || fresh.ConfigVersion != version {
		t.Fatalf("new job after the pass: revision %d, config version %d; want 1, %d", fresh.Revision, fresh.ConfigVersion, version)
	}
	gotFresh, err := s.GetJob(ctx, "fresh")
	mustNil(t, err, "GetJob of the new job")
	requireEqual(t, "new job", gotFresh, fresh)
	if tasks[0].Revision != 1 || job.Revision != 2 || u.Revision != 2 || m.Revision != 2 {
		t.Fatalf("revisions after the pass: task %d, job %d, update %d, migration %d; want 1, 2, 2, 2",
			tasks[0].Revision, job.Revision, u.Revision, m.Revision)
	}
	gotTask, err := s.GetTask(ctx, tasks[2].ID)
	mustNil(t, err, "GetTask")
	requireEqual(t, "task", gotTask, tasks[2])
	gotJob, err := s.GetJob(ctx, "job")
	mustNil(t, err, "GetJob")
	if gotJob.Status.State != model.JobRunning || gotJob.Revision != 2 {
		t.Fatalf("job after the pass: state %s, revision %d", gotJob.Status.State, gotJob.Revision)
	}
	gotUpdate, err := s.GetUpdate(ctx, u.ID)
	mustNil(t, err, "GetUpdate")
	requireEqual(t, "update", gotUpdate, u)
	gotMigration, err := kinds.Migrations.Get(ctx, s, string(m.ID))
	mustNil(t, err, "GetMigration")
	requireEqual(t, "migration", gotMigration, m)

	// One stale record of any kind: nothing of the pass is written and no
	// caller's revision moves.
	for _, stale := range []string{"task", "job", "update", "migration"} {
		more := newTasks("job", 3, 2)
		j, uu, mm := *job, *u, *m
		j.Status.State, uu.InstancesDone, mm.Message = model.JobSucceeded, 5, "moved seven"
		p := store.Pass{NewJobs: []*model.Job{FullJob("late-" + model.JobID(stale))}, NewJobErrs: make([]error, 1),
			Tasks: more, Jobs: []*model.Job{&j}, Updates: []*model.Update{&uu}, Records: []store.PassRecord{kinds.Migrations.Record(&mm)}}
		switch stale {
		case "task":
			old := *tasks[1]
			old.Revision = 0
			p.Tasks = append(p.Tasks, &old)
		case "job":
			j.Revision--
		case "update":
			uu.Revision--
		case "migration":
			mm.Revision++
		}
		want := []uint64{j.Revision, uu.Revision, mm.Revision}
		requireIs(t, w.WritePass(ctx, p), store.ErrConflict, "")
		if got := []uint64{j.Revision, uu.Revision, mm.Revision}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || more[0].Revision != 0 {
			t.Fatalf("stale %s: a refused pass moved revisions %v to %v", stale, want, got)
		}
		_, err := s.GetTask(ctx, more[0].ID)
		requireIs(t, err, store.ErrNotFound, "")
		requireIs(t, p.NewJobErrs[0], store.ErrConflict, "")
		_, err = s.GetJob(ctx, p.NewJobs[0].ID)
		requireIs(t, err, store.ErrNotFound, "late")
		if got, _ := s.GetJob(ctx, "job"); got.Status.State != model.JobRunning {
			t.Fatalf("stale %s: the job's record was written (%s)", stale, got.Status.State)
		}
		if got, _ := s.GetUpdate(ctx, u.ID); got.InstancesDone != 1 {
			t.Fatalf("stale %s: the update was written (%d done)", stale, got.InstancesDone)
		}
		if got, _ := kinds.Migrations.Get(ctx, s, string(m.ID)); got.Message != "moved two" {
			t.Fatalf("stale %s: the migration was written (%q)", stale, got.Message)
		}
	}
	requireIs(t, w.WritePass(ctx, store.Pass{Tasks: []*model.TaskRuntime{nil}}), store.ErrInvalid, "")
	requireIs(t, w.WritePass(ctx, store.Pass{NewJobs: []*model.Job{FullJob("no-room")}}), store.ErrInvalid, "")
	ghost := FullTask(model.TaskID{Job: "ghost"})
	requireIs(t, w.WritePass(ctx, store.Pass{Tasks: []*model.TaskRuntime{ghost}}), store.ErrNotFound, "ghost")
}
