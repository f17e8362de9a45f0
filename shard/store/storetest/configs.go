package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

func getJobConfig(t testing.TB, s store.Store, id model.JobID, version uint64) *model.JobSpec {
	t.Helper()
	spec, err := s.GetJobConfig(context.Background(), id, version)
	mustNil(t, err, fmt.Sprintf("GetJobConfig %s %d", id, version))
	return spec
}

func requireVersions(t testing.TB, s store.Store, id model.JobID, want ...uint64) {
	t.Helper()
	got, err := s.ListJobConfigVersions(context.Background(), id)
	mustNil(t, err, "ListJobConfigVersions "+string(id))
	if !slices.Equal(got, want) {
		t.Fatalf("config versions of %s: %v, want %v", id, got, want)
	}
}

// testJobConfigVersions stores configs out of order and moves a job from
// one to another: GetJob returns the spec its record names.
func testJobConfigVersions(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("cfg")
	job.ConfigVersion = 0
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	if job.ConfigVersion != 1 {
		t.Fatalf("caller's ConfigVersion after create = %d, want 1", job.ConfigVersion)
	}
	requireVersions(t, s, "cfg", 1)
	requireEqual(t, "config 1", getJobConfig(t, s, "cfg", 1), &job.Spec)

	specs := map[uint64]*model.JobSpec{1: &job.Spec}
	for _, v := range []uint64{3, 2, 1 << 40} {
		spec := FullJob("cfg").Spec
		spec.Name = fmt.Sprint("version ", v)
		spec.Overrides = spec.Overrides[:1]
		mustNil(t, s.PutJobConfig(ctx, "cfg", v, &spec), fmt.Sprint("PutJobConfig ", v))
		specs[v] = &spec
	}
	requireVersions(t, s, "cfg", 1, 2, 3, 1<<40)
	for v, spec := range specs {
		requireEqual(t, fmt.Sprint("config ", v), getJobConfig(t, s, "cfg", v), spec)
	}
	// The job still runs version 1 until its record names another.
	requireEqual(t, "job before it moves", getJob(t, s, "cfg"), job)
	for _, v := range []uint64{3, 1 << 40, 1} {
		job.ConfigVersion = v
		job.Status.Message = fmt.Sprint("on ", v)
		mustNil(t, s.UpdateJob(ctx, job), fmt.Sprint("UpdateJob to ", v))
		want := Normal(job)
		want.Spec = *specs[v]
		requireEqual(t, fmt.Sprint("job on config ", v), getJob(t, s, "cfg"), want)
		jobs, err := s.ListJobs(ctx)
		mustNil(t, err, "ListJobs")
		requireEqual(t, fmt.Sprint("listed job on config ", v), jobs, []*model.Job{want})
	}

	// A job created at a version of its own.
	other := FullJob("cfg-7")
	other.ConfigVersion = 7
	mustNil(t, s.CreateJob(ctx, other), "CreateJob at version 7")
	requireVersions(t, s, "cfg-7", 7)
	requireEqual(t, "job created at version 7", getJob(t, s, "cfg-7"), other)
}

func testJobConfigErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := createJob(t, s, "cfg")
	spec := &model.JobSpec{Name: "two"}
	requireIs(t, s.PutJobConfig(ctx, "ghost", 2, spec), store.ErrNotFound, "ghost")
	requireIs(t, s.PutJobConfig(ctx, "cfg", 0, spec), store.ErrInvalid, "cfg")
	requireIs(t, s.PutJobConfig(ctx, "cfg", 2, nil), store.ErrInvalid, "cfg")
	requireIs(t, s.PutJobConfig(ctx, "", 2, spec), store.ErrInvalid, "")
	requireIs(t, s.PutJobConfig(ctx, "cfg", 1, spec), store.ErrExists, "cfg")
	mustNil(t, s.PutJobConfig(ctx, "cfg", 2, spec), "PutJobConfig 2")
	changed := &model.JobSpec{Name: "impostor"}
	requireIs(t, s.PutJobConfig(ctx, "cfg", 2, changed), store.ErrExists, "cfg")
	requireEqual(t, "config 2 after a second put", getJobConfig(t, s, "cfg", 2), spec)
	requireEqual(t, "config 1 after a put of 1", getJobConfig(t, s, "cfg", 1), &job.Spec)

	_, err := s.GetJobConfig(ctx, "cfg", 3)
	requireIs(t, err, store.ErrNotFound, "cfg")
	_, err = s.GetJobConfig(ctx, "ghost", 1)
	requireIs(t, err, store.ErrNotFound, "ghost")
	_, err = s.ListJobConfigVersions(ctx, "ghost")
	requireIs(t, err, store.ErrNotFound, "ghost")
	// A prefix of an id is another job.
	_, err = s.ListJobConfigVersions(ctx, "cf")
	requireIs(t, err, store.ErrNotFound, "cf")
}

// testUpdateJobKeepsTheSpec checks that UpdateJob writes the record only:
// a spec the caller changed is not stored, the stored config stays.
func testUpdateJobKeepsTheSpec(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("keep")
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	want := Normal(job)

	job.Spec.Name = "not stored"
	job.Spec.Overrides = nil
	job.Status.Message = "stored"
	mustNil(t, s.UpdateJob(ctx, job), "UpdateJob")
	want.Status.Message, want.Revision = "stored", 2
	requireEqual(t, "job after an update with another spec", getJob(t, s, "keep"), want)
	requireVersions(t, s, "keep", job.ConfigVersion)

	// A failed update writes nothing either.
	job.Revision = 1
	job.Status.Message = "stale"
	requireIs(t, s.UpdateJob(ctx, job), store.ErrConflict, "keep")
	requireEqual(t, "job after a stale update", getJob(t, s, "keep"), want)
}

// testDeleteJobCascades deletes a job with configs, tasks, updates and
// events beside jobs whose ids share its prefix; a job created again under
// its id starts with none of them.
func testDeleteJobCascades(t *testing.T, s store.Store) {
	ctx := context.Background()
	ids := []model.JobID{"job", "job-2", "jo"}
	for _, id := range ids {
		createJob(t, s, id)
		mustNil(t, s.PutJobConfig(ctx, id, 2, &model.JobSpec{Name: "two of " + string(id)}), "PutJobConfig")
		mustNil(t, s.WriteTasks(ctx, newTasks(id, 0, 3)), "WriteTasks")
		mustNil(t, s.CreateUpdate(ctx, FullUpdate(model.UpdateID("u-"+id), id)), "CreateUpdate")
		events := append(jobEvents(id, 1, 5), taskEvents(id, 10, 20, 3)...)
		mustNil(t, s.AppendEvents(ctx, events, time.Hour), "AppendEvents")
	}
	mustNil(t, s.DeleteJob(ctx, "job"), "DeleteJob")

	_, err := s.GetJobConfig(ctx, "job", 2)
	requireIs(t, err, store.ErrNotFound, "job")
	_, err = s.GetUpdate(ctx, "u-job")
	requireIs(t, err, store.ErrNotFound, "u-job")
	_, err = s.ListUpdates(ctx, "job")
	requireIs(t, err, store.ErrNotFound, "job")
	if events := listEvents(t, s, store.EventQuery{Job: "job"}); len(events) != 0 {
		t.Fatalf("deleted job keeps %d events", len(events))
	}
	for _, id := range ids[1:] {
		requireVersions(t, s, id, 1, 2)
		if updates, err := s.ListUpdates(ctx, id); err != nil || len(updates) != 1 {
			t.Fatalf("deleting %q left %d updates of %q, %v", "job", len(updates), id, err)
		}
		if events := listEvents(t, s, store.EventQuery{Job: id}); len(events) != 5+20*3 {
			t.Fatalf("deleting %q left %d events of %q, want %d", "job", len(events), id, 5+20*3)
		}
	}

	again := createJob(t, s, "job")
	requireVersions(t, s, "job", 1)
	requireEqual(t, "recreated job", getJob(t, s, "job"), again)
	if updates, err := s.ListUpdates(ctx, "job"); err != nil || len(updates) != 0 {
		t.Fatalf("recreated job has %d updates, %v", len(updates), err)
	}
	if events := listEvents(t, s, store.EventQuery{Job: "job"}); len(events) != 0 {
		t.Fatalf("recreated job has %d events", len(events))
	}
	// A config version the deleted job had is free again.
	mustNil(t, s.PutJobConfig(ctx, "job", 2, &model.JobSpec{Name: "new two"}), "PutJobConfig 2 after recreate")
	if got := getJobConfig(t, s, "job", 2); got.Name != "new two" {
		t.Fatalf("recreated job's config 2 is %q", got.Name)
	}
}

// OverrideSpec returns a spec of n instances with an override per
// instance, each setting the instance's shard number in its environment
// and arguments: a spec that encodes to megabytes.
func OverrideSpec(n uint32) *model.JobSpec {
	spec := FullJob("overrides").Spec
	spec.Instances = n
	spec.Overrides = make([]model.InstanceOverride, n)
	for i := range n {
		spec.Overrides[i] = model.InstanceOverride{
			Instances: []model.InstanceRange{{From: i, To: i}},
			Task: model.TaskSpec{
				Args: []string{"--shard", fmt.Sprint(i), "--of", fmt.Sprint(n), fmt.Sprintf("--seed=%08x", i*2654435761)},
				Env:  map[string]string{"SHARD": fmt.Sprint(i), "SHARD_DIR": fmt.Sprintf("/data/shards/%06d", i)},
			},
		}
	}
	return &spec
}

// testHundredThousandOverrides stores a job of 100,000 instances with an
// override each, as its first config and as a later one, and reads both
// back whole.
func testHundredThousandOverrides(t *testing.T, s store.Store) {
	ctx := context.Background()
	n := uint32(100_000)
	if testing.Short() {
		n = 10_000
	}
	job := &model.Job{ID: "overrides", Spec: *OverrideSpec(n)}
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	requireEqual(t, "job with an override per instance", getJob(t, s, "overrides"), job)

	next := OverrideSpec(n)
	next.Overrides[n-1].Task.Command = "/bin/last"
	mustNil(t, s.PutJobConfig(ctx, "overrides", 2, next), "PutJobConfig 2")
	requireEqual(t, "config 2", getJobConfig(t, s, "overrides", 2), next)
	job.ConfigVersion = 2
	mustNil(t, s.UpdateJob(ctx, job), "UpdateJob to config 2")
	got := getJob(t, s, "overrides")
	requireEqual(t, "job on config 2", &got.Spec, next)
	// Read again: a backend that caches decoded configs answers from it.
	requireEqual(t, "config 1 read again", getJobConfig(t, s, "overrides", 1), &job.Spec)
	mustNil(t, s.DeleteJob(ctx, "overrides"), "DeleteJob")
	_, err := s.GetJobConfig(ctx, "overrides", 2)
	requireIs(t, err, store.ErrNotFound, "overrides")
}
