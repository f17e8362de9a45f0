package boltstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

const crashPathEnv = "BOLTSTORE_CRASH_WRITER_PATH"

const crashBatch = 100

// TestCrashWriterProcess is the child of TestAcknowledgedWritesSurviveKill:
// it rewrites the same 100 tasks in batches forever, printing the number of
// each batch once WriteTasks has returned nil.
func TestCrashWriterProcess(t *testing.T) {
	path := os.Getenv(crashPathEnv)
	if path == "" {
		t.Skip("runs only as the child of TestAcknowledgedWritesSurviveKill")
	}
	ctx := context.Background()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &model.Job{ID: "crash"}); err != nil {
		t.Fatal(err)
	}
	tasks := make([]*model.TaskRuntime, crashBatch)
	for i := range tasks {
		tasks[i] = storetest.FullTask(model.TaskID{Job: "crash", Instance: uint32(i)})
	}
	for batch := 0; batch < 1_000_000; batch++ {
		for _, task := range tasks {
			task.Message = strconv.Itoa(batch)
		}
		if err := s.WriteTasks(ctx, tasks); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("acked %d\n", batch)
	}
}

// TestAcknowledgedWritesSurviveKill kills a writing process with SIGKILL
// and checks that every batch it acknowledged is in the file, whole.
func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashPathEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lastAcked := -1
	lines := bufio.NewScanner(out)
	for lastAcked < 30 && lines.Scan() {
		if n, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			if lastAcked, err = strconv.Atoi(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if lastAcked < 30 {
		t.Fatalf("writer acknowledged only %d batches before exiting", lastAcked+1)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	tasks, err := s.ListTasks(context.Background(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != crashBatch {
		t.Fatalf("%d tasks after kill, want %d", len(tasks), crashBatch)
	}
	batch, err := strconv.Atoi(tasks[0].Message)
	if err != nil {
		t.Fatal(err)
	}
	if batch < lastAcked {
		t.Fatalf("file holds batch %d, but batch %d was acknowledged", batch, lastAcked)
	}
	for _, task := range tasks {
		if task.Message != tasks[0].Message || task.Revision != uint64(batch)+1 {
			t.Fatalf("%s holds message %q revision %d; batch %d is not whole", task.ID, task.Message, task.Revision, batch)
		}
	}
}
