package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// testCreateJobsEachOnItsOwn creates a batch that mixes new jobs, a job
// whose id is stored already, two jobs of one id and malformed jobs:
// every new job is stored whole with revision 1, the others are refused
// one by one, changing nothing.
func testCreateJobsEachOnItsOwn(t *testing.T, s store.Store) {
	ctx := context.Background()
	old := createJob(t, s, "old")
	full := FullJob("full")
	full.Revision = 9 // ignored, as by CreateJob
	twinA := &model.Job{ID: "twin", Spec: model.JobSpec{Name: "twin-a", Instances: 1}}
	twinB := &model.Job{ID: "twin", Spec: model.JobSpec{Name: "twin-b", Instances: 1}}
	impostor := &model.Job{ID: "old", Spec: model.JobSpec{Name: "impostor", Instances: 3}}
	jobs := []*model.Job{
		{ID: "a", Spec: model.JobSpec{Name: "a", Instances: 1}},
		impostor,
		nil,
		full,
		twinA,
		{},
		twinB,
		{ID: "b", Spec: model.JobSpec{Name: "b", Instances: 2}, ConfigVersion: 3},
	}
	errs := s.CreateJobs(ctx, jobs)
	if len(errs) != len(jobs) {
		t.Fatalf("%d errors for %d jobs", len(errs), len(jobs))
	}
	for _, i := range []int{0, 3, 7} {
		mustNil(t, errs[i], fmt.Sprintf("jobs[%d]", i))
		if jobs[i].Revision != 1 {
			t.Errorf("jobs[%d]: caller's revision %d after create, want 1", i, jobs[i].Revision)
		}
	}
	requireIs(t, errs[1], store.ErrExists, "old")
	requireIs(t, errs[2], store.ErrInvalid, "")
	requireIs(t, errs[5], store.ErrInvalid, "")
	// Of the two jobs of one id, one is stored and the other refused.
	if (errs[4] == nil) == (errs[6] == nil) {
		t.Fatalf("two jobs of one id: errors %v and %v, want exactly one ErrExists", errs[4], errs[6])
	}
	winner := twinA
	if errs[4] != nil {
		requireIs(t, errs[4], store.ErrExists, "twin")
		winner = twinB
	} else {
		requireIs(t, errs[6], store.ErrExists, "twin")
	}
	requireEqual(t, "stored twin", getJob(t, s, "twin"), winner)
	requireEqual(t, "stored full job", getJob(t, s, "full"), full)
	requireEqual(t, "job whose id was taken", getJob(t, s, "old"), old)
	if impostor.Revision != 0 {
		t.Errorf("refused create changed caller's revision to %d", impostor.Revision)
	}
	if b := getJob(t, s, "b"); b.ConfigVersion != 3 || b.Revision != 1 {
		t.Errorf("job b: config version %d, revision %d; want 3 and 1", b.ConfigVersion, b.Revision)
	}
	requireVersions(t, s, "b", 3)
	listed, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	if len(listed) != 5 {
		t.Fatalf("%d jobs stored, want old, a, full, twin and b", len(listed))
	}
	// A created job takes tasks like any other.
	task := FullTask(model.TaskID{Job: "a", Instance: 0})
	task.Revision = 0
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{task}), "WriteTasks of a job from CreateJobs")
	// An empty batch is no error.
	if errs := s.CreateJobs(ctx, nil); len(errs) != 0 {
		t.Fatalf("empty batch: %v", errs)
	}
}

// testCreateJobsMany stores a thousand jobs in one call, then the same
// thousand again: the second call finds every id taken and stores nothing.
func testCreateJobsMany(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 1000
	batch := func() []*model.Job {
		jobs := make([]*model.Job, n)
		for i := range jobs {
			jobs[i] = &model.Job{ID: model.JobID(fmt.Sprintf("many-%04d", i)), Spec: model.JobSpec{Name: fmt.Sprintf("many-%d", i), Instances: 1}}
		}
		return jobs
	}
	for i, err := range s.CreateJobs(ctx, batch()) {
		mustNil(t, err, fmt.Sprintf("jobs[%d]", i))
	}
	for i, err := range s.CreateJobs(ctx, batch()) {
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("jobs[%d] again: %v, want ErrExists", i, err)
		}
	}
	listed, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	if len(listed) != n {
		t.Fatalf("%d jobs stored, want %d", len(listed), n)
	}
	if j := getJob(t, s, "many-0999"); j.Spec.Name != "many-999" || j.Revision != 1 || j.ConfigVersion != 1 {
		t.Fatalf("last job stored as %+v", j)
	}
}

// testCreateJobsCancelled refuses every job of a batch whose context has
// ended, storing none.
func testCreateJobsCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs := s.CreateJobs(ctx, []*model.Job{{ID: "c1", Spec: model.JobSpec{Name: "c1", Instances: 1}}, {ID: "c2", Spec: model.JobSpec{Name: "c2", Instances: 1}}})
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("jobs[%d]: %v, want context.Canceled", i, err)
		}
	}
	listed, err := s.ListJobs(context.Background())
	mustNil(t, err, "ListJobs")
	if len(listed) != 0 {
		t.Fatalf("a cancelled batch stored %d jobs", len(listed))
	}
}
