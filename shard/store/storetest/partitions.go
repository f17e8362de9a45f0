package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// PartitionedBatches is an optional capability of a store.Store whose
// WriteTasks is all or nothing only within a partition of its tasks (such
// as one job's range of instances), not across partitions when writers
// race. Such a store still writes nothing when a batch's conflict is
// already in the store before the batch starts; only a concurrent writer
// can leave a batch that spans partitions partly applied, and then the
// batch still fails with store.ErrConflict. A store that does not
// implement it, or returns true, must pass every atomicity test.
type PartitionedBatches interface {
	AtomicAcrossPartitions() bool
}

func atomicAcrossPartitions(s store.Store) bool {
	p, ok := s.(PartitionedBatches)
	return !ok || p.AtomicAcrossPartitions()
}

// spreadTasks returns new tasks of jobs x and y at instances far apart,
// so that any partitioning by job or by instance range splits the batch.
func spreadTasks() []*model.TaskRuntime {
	var out []*model.TaskRuntime
	for _, job := range []model.JobID{"x", "y"} {
		for _, i := range []uint32{0, 1, 9_999, 10_000, 123_456, 1<<32 - 1} {
			out = append(out, FullTask(model.TaskID{Job: job, Instance: i}))
		}
	}
	return out
}

// testBatchAcrossPartitionsWithStaleTask checks that a batch spanning
// jobs and instance ranges writes nothing when one task is stale, wherever
// that task is: every backend must pass this one.
func testBatchAcrossPartitionsWithStaleTask(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "x")
	createJob(t, s, "y")
	stored := spreadTasks()
	mustNil(t, s.WriteTasks(ctx, stored), "WriteTasks")
	want := Normal(stored)
	for bad := range stored {
		batch := Normal(stored)
		for _, task := range batch {
			task.Message = "rejected batch"
		}
		batch[bad].Revision = 0
		requireIs(t, s.WriteTasks(ctx, batch), store.ErrConflict, batch[bad].ID.String())
		got := append(listTasks(t, s, "x"), listTasks(t, s, "y")...)
		requireEqual(t, fmt.Sprintf("tasks after batch with stale %s", batch[bad].ID), got, want)
	}
	// And a batch of new tasks with one that already exists.
	fresh := spreadTasks()
	for _, task := range fresh {
		task.ID.Instance -= 1 << 31
	}
	fresh = append(fresh, FullTask(stored[len(stored)-1].ID))
	requireIs(t, s.WriteTasks(ctx, fresh), store.ErrConflict, stored[len(stored)-1].ID.String())
	if got := append(listTasks(t, s, "x"), listTasks(t, s, "y")...); len(got) != len(stored) {
		t.Fatalf("rejected batch of new tasks left %d tasks, want %d", len(got), len(stored))
	}
}

// testConcurrentBatchesAcrossPartitions races writers holding the same
// revisions of tasks in different jobs and instance ranges. Each writes
// two of three tasks, and every two racers share a task, so exactly one
// batch may win; no task may carry a loser's write.
func testConcurrentBatchesAcrossPartitions(t *testing.T, s store.Store) {
	if !atomicAcrossPartitions(s) {
		t.Skip("the store declares WriteTasks all or nothing only within a partition (PartitionedBatches)")
	}
	ctx := context.Background()
	createJob(t, s, "x")
	createJob(t, s, "y")
	ids := []model.TaskID{{Job: "x", Instance: 0}, {Job: "y", Instance: 50_000}, {Job: "x", Instance: 70_000}}
	pairs := [][2]int{{0, 1}, {1, 2}, {2, 0}, {1, 0}, {2, 1}, {0, 2}}
	for round := range 5 {
		var first []*model.TaskRuntime
		for _, id := range ids {
			first = append(first, FullTask(id))
			first[len(first)-1].Message = fmt.Sprint("round ", round)
		}
		mustNil(t, s.DeleteJob(ctx, "x"), "DeleteJob")
		mustNil(t, s.DeleteJob(ctx, "y"), "DeleteJob")
		createJob(t, s, "x")
		createJob(t, s, "y")
		mustNil(t, s.WriteTasks(ctx, first), "WriteTasks")
		start := make(chan struct{})
		type result struct {
			racer int
			err   error
		}
		results := make(chan result, len(pairs))
		for r, pair := range pairs {
			go func() {
				<-start
				var batch []*model.TaskRuntime
				for _, i := range pair {
					task := FullTask(ids[i])
					task.Revision = 1
					task.Message = fmt.Sprint("racer ", r)
					batch = append(batch, task)
				}
				results <- result{r, s.WriteTasks(ctx, batch)}
			}()
		}
		close(start)
		winner := -1
		for range pairs {
			switch res := <-results; {
			case res.err == nil && winner >= 0:
				t.Fatalf("round %d: racers %d and %d both won", round, winner, res.racer)
			case res.err == nil:
				winner = res.racer
			case !errors.Is(res.err, store.ErrConflict):
				t.Fatalf("round %d: losing racer got %v, want ErrConflict", round, res.err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no racer won", round)
		}
		for i, id := range ids {
			got := getTask(t, s, id)
			wantRev, wantMsg := uint64(1), fmt.Sprint("round ", round)
			if i == pairs[winner][0] || i == pairs[winner][1] {
				wantRev, wantMsg = 2, fmt.Sprint("racer ", winner)
			}
			if got.Revision != wantRev || got.Message != wantMsg {
				t.Fatalf("round %d, winner %d: %s has revision %d message %q, want %d and %q",
					round, winner, id, got.Revision, got.Message, wantRev, wantMsg)
			}
		}
	}
}
