package cassandra

import (
	"context"
	"errors"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// A leader paused between a create's fence check and its write lands the
// job after another took over. The view must not answer it created, and
// the new leader's create of the same id must find it stored.
func TestCreateAfterTakeoverIsNotAnsweredCreated(t *testing.T) {
	cfg := testConfig(t, uniqueKeyspace("peloton_fence"))
	cfg.Migrate = true
	dropKeyspace(t, cfg)
	ctx := context.Background()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, err := s.Fence(ctx, "shard/r", 1)
	if err != nil {
		t.Fatal(err)
	}
	var takeover error
	old.(*Store).afterCreate = func() {
		_, takeover = s.Fence(ctx, "shard/r", 2)
	}
	jobs := []*model.Job{
		{ID: "late-a", Spec: model.JobSpec{Name: "a", Instances: 1}},
		{ID: "late-b", Spec: model.JobSpec{Name: "b", Instances: 2}},
	}
	errs := old.CreateJobs(ctx, jobs)
	if takeover != nil {
		t.Fatalf("the takeover's fence: %v", takeover)
	}
	for i, err := range errs {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s written after the takeover: %v, want ErrUnavailable", jobs[i].ID, err)
		}
	}
	next, err := s.Fence(ctx, "shard/r", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		again := &model.Job{ID: j.ID, Spec: j.Spec}
		if err := next.CreateJob(ctx, again); !errors.Is(err, store.ErrExists) {
			t.Errorf("the new leader's create of %s: %v, want ErrExists", j.ID, err)
		}
		if _, err := next.GetJob(ctx, j.ID); err != nil {
			t.Errorf("get %s: %v", j.ID, err)
		}
	}
	// Without a takeover, a view's creates are answered created.
	ok := &model.Job{ID: "in-time", Spec: model.JobSpec{Name: "c", Instances: 1}}
	if err := next.CreateJob(ctx, ok); err != nil {
		t.Errorf("create under the current term: %v", err)
	}
}
