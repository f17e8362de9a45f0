package boltstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// rssFileKB reads the file-backed part of this process's resident set.
func rssFileKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// Pages of the data file read by transactions stay in the resident set
// until ReleaseMemory drops them; what is stored reads back the same.
func TestReleaseMemoryDropsMappedPages(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CreateJob(ctx, storetest.FullJob("j")); err != nil {
		t.Fatal(err)
	}
	const n = 100000
	for i := 0; i < n; i += 10000 {
		batch := make([]*model.TaskRuntime, 10000)
		for k := range batch {
			batch[k] = storetest.FullTask(model.TaskID{Job: "j", Instance: uint32(i + k)})
		}
		if err := s.WriteTasks(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		tasks, err := s.ListTasks(ctx, "j")
		if err != nil || len(tasks) != n {
			t.Fatalf("ListTasks: %d tasks, %v", len(tasks), err)
		}
	}
	read() // every page of the tasks is mapped in
	before := rssFileKB(t)
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	t.Logf("file-backed resident set: %d KiB before, %d KiB after", before, after)
	if before-after < 1024 {
		t.Errorf("ReleaseMemory dropped %d KiB of mapped pages, want at least 1 MiB", before-after)
	}
	read()
}
