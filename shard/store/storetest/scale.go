package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// testHundredThousandInstanceJob stores a job of 100,000 instances and all
// its task runtimes in batches, reads them back, then updates them all.
func testHundredThousandInstanceJob(t *testing.T, s store.Store) {
	ctx := context.Background()
	n, batchSize := uint32(100_000), uint32(10_000)
	if testing.Short() {
		n, batchSize = 10_000, 1_000
	}
	job := FullJob("big")
	job.Spec.Instances = n
	for i := range 200 {
		job.Spec.Task.Env[fmt.Sprintf("VAR_%03d", i)] = fmt.Sprintf("value number %d of a large spec", i)
	}
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	requireEqual(t, "big job", getJob(t, s, "big"), job)

	all := make([]*model.TaskRuntime, 0, n)
	for first := uint32(0); first < n; first += batchSize {
		batch := newTasks("big", first, batchSize)
		mustNil(t, s.WriteTasks(ctx, batch), fmt.Sprintf("WriteTasks from %d", first))
		all = append(all, batch...)
	}
	got := listTasks(t, s, "big")
	if uint32(len(got)) != n {
		t.Fatalf("ListTasks returned %d tasks, want %d", len(got), n)
	}
	requireEqual(t, "all tasks", got, all)

	for first := uint32(0); first < n; first += batchSize {
		batch := got[first : first+batchSize]
		for _, task := range batch {
			task.State = model.TaskSucceeded
		}
		mustNil(t, s.WriteTasks(ctx, batch), fmt.Sprintf("update WriteTasks from %d", first))
	}
	for _, i := range []uint32{0, 1, n / 2, n - 1} {
		task := getTask(t, s, model.TaskID{Job: "big", Instance: i})
		if task.State != model.TaskSucceeded || task.Revision != 2 {
			t.Fatalf("instance %d: state %v revision %d after update", i, task.State, task.Revision)
		}
	}
}

// testConcurrentWritersToDifferentJobs runs one writer per job, each
// creating then repeatedly updating its tasks, with a reader alongside.
func testConcurrentWritersToDifferentJobs(t *testing.T, s store.Store) {
	ctx := context.Background()
	const writers, tasksPerJob, rounds = 4, 50, 20
	for w := range writers {
		createJob(t, s, model.JobID(fmt.Sprint("w", w)))
	}
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := model.JobID(fmt.Sprint("w", w))
			tasks := newTasks(job, 0, tasksPerJob)
			for round := range rounds {
				for _, task := range tasks {
					task.Message = fmt.Sprint("round ", round)
				}
				if err := s.WriteTasks(ctx, tasks); err != nil {
					errs <- fmt.Errorf("writer %d round %d: %w", w, round, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.ListTasks(ctx, "w0"); err != nil {
				errs <- fmt.Errorf("reader: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	<-readerDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		got := listTasks(t, s, model.JobID(fmt.Sprint("w", w)))
		if len(got) != tasksPerJob {
			t.Fatalf("writer %d: %d tasks stored", w, len(got))
		}
		for _, task := range got {
			if task.Revision != rounds || task.Message != fmt.Sprint("round ", rounds-1) {
				t.Fatalf("%s: revision %d message %q", task.ID, task.Revision, task.Message)
			}
		}
	}
}

// testConcurrentCompareAndSetOneWinner races writers holding the same
// revision of one task: exactly one may win.
func testConcurrentCompareAndSetOneWinner(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "race")
	mustNil(t, s.WriteTasks(ctx, newTasks("race", 0, 1)), "WriteTasks")
	const racers = 8
	start := make(chan struct{})
	results := make(chan error, racers)
	for r := range racers {
		go func() {
			<-start
			task := FullTask(model.TaskID{Job: "race"})
			task.Revision = 1
			task.Message = fmt.Sprint("racer ", r)
			results <- s.WriteTasks(ctx, []*model.TaskRuntime{task})
		}()
	}
	close(start)
	wins := 0
	for range racers {
		switch err := <-results; {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("losing racer got %v, want ErrConflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d racers won, want exactly 1", wins)
	}
	if task := getTask(t, s, model.TaskID{Job: "race"}); task.Revision != 2 {
		t.Fatalf("revision after race %d, want 2", task.Revision)
	}
}
