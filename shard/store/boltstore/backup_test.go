package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// A backup taken while jobs are being written restores to a store that
// holds every job written before it began, each with all of its tasks
// (the job and its tasks are one write here, so a copy that held a job
// without them would be torn).
func TestBackupBesideWrites(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	defer s.Close()
	write := func(id string) error {
		job := storetest.FullJob(model.JobID(id))
		tasks := make([]*model.TaskRuntime, 20)
		for i := range tasks {
			tasks[i] = storetest.FullTask(model.TaskID{Job: model.JobID(id), Instance: uint32(i)})
		}
		if err := s.CreateJob(ctx, job); err != nil {
			return err
		}
		return s.WriteTasks(ctx, tasks)
	}
	for i := range 50 {
		if err := write(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := write(fmt.Sprintf("during-%d", i)); err != nil {
				writeErr = err
				return
			}
		}
	}()
	var buf bytes.Buffer
	n, err := s.Backup(ctx, &buf)
	close(stop)
	wg.Wait()
	if err != nil || writeErr != nil {
		t.Fatalf("backup: %v; writes beside it: %v", err, writeErr)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("backup says %d bytes, wrote %d", n, buf.Len())
	}
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := Restore(&buf, path); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	jobs, err := r.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) < 50 {
		t.Fatalf("%d jobs in the backup, 50 written before it", len(jobs))
	}
	for _, j := range jobs {
		tasks, err := r.ListTasks(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The last job of the writer may be in the copy without its
		// tasks (two writes); every other one has all of them.
		if len(tasks) != 20 && len(tasks) != 0 {
			t.Errorf("job %s has %d of its 20 tasks in the backup", j.ID, len(tasks))
		}
	}
}

// cancelAfter accepts writes and cancels its context at the n-th.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return len(p), nil
}

// Cancelling a backup ends it, and its read transaction, at the next
// write: the store is writable at once and the error says why.
func TestBackupStopsWhenCancelled(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	for i := range 20 {
		if err := s.CreateJob(context.Background(), storetest.FullJob(model.JobID(fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := s.Backup(ctx, &cancelAfter{n: 2, cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup: %v, want context.Canceled", err)
	}
	if err := s.CreateJob(context.Background(), storetest.FullJob("after")); err != nil {
		t.Fatalf("write after a cancelled backup: %v", err)
	}
	if _, err := s.Backup(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("backup with a cancelled context: %v", err)
	}
}
