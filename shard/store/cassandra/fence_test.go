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
	s, _ := openFresh(t, "peloton_fence")
	ctx := context.Background()
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

// Check rounds are shared: a writer before its write joins the round in
// flight; writers after their writes share the next round to start, never
// one that started before they came.
func TestFenceCheckRoundsAreShared(t *testing.T) {
	var c fenceChecks
	release := make(chan error)
	started := make(chan int, 10)
	rounds := 0
	check := func(context.Context) error {
		rounds++
		started <- rounds
		return <-release
	}
	ctx := context.Background()
	first := c.joinBefore(check)
	if n := <-started; n != 1 {
		t.Fatalf("round %d started, want 1", n)
	}
	joined := c.joinBefore(check)
	var queued []*fenceRound
	for range 3 {
		queued = append(queued, c.joinAfter(check))
	}
	if joined != first {
		t.Fatal("a writer before its write did not join the round in flight")
	}
	for _, r := range queued {
		if r == first || r != queued[0] {
			t.Fatal("writers after their writes are not all in the one round queued behind the one in flight")
		}
	}
	release <- nil // round 1 succeeds
	if n := <-started; n != 2 {
		t.Fatalf("round %d started, want 2", n)
	}
	release <- store.ErrFenced // round 2 fails
	if err := first.wait(ctx); err != nil {
		t.Fatalf("round 1: %v", err)
	}
	if err := queued[0].wait(ctx); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("round 2: %v, want ErrFenced", err)
	}
	if rounds != 2 {
		t.Fatalf("%d rounds, want 2", rounds)
	}
	// With no round in flight, a writer after its write starts one; a
	// caller whose context ends stops waiting while the round runs on.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	done := make(chan error)
	go func() { done <- c.after(cctx, check) }()
	<-started
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	release <- nil
}
