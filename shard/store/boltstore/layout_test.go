package boltstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/storetest"
	bolt "go.etcd.io/bbolt"
)

// fixtureTTL keeps the events and audit records of a layout fixture for
// longer than the fixture will live.
const fixtureTTL = 100 * 365 * 24 * time.Hour

// TestWriteLayoutFixture writes a file of this build's layout, and what it
// holds, for a later build's test: PELOTON_WRITE_BOLT_FIXTURE=DIR/NAME
// writes DIR/NAME.db and DIR/NAME.json. Without it the test writes into a
// temporary directory and checks only that the file reads back.
func TestWriteLayoutFixture(t *testing.T) {
	base := os.Getenv("PELOTON_WRITE_BOLT_FIXTURE")
	if base == "" {
		base = filepath.Join(t.TempDir(), "layout")
	}
	s, err := Open(base + ".db")
	if err != nil {
		t.Fatal(err)
	}
	storetest.FillLayout(t, s, fixtureTTL)
	contents := storetest.ContentsOf(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(contents, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".json", raw, 0o644); err != nil {
		t.Fatal(err)
	}
	requireFixture(t, base)
}

// requireFixture opens a copy of base.db and requires it to hold what
// base.json says.
func requireFixture(t *testing.T, base string) *Store {
	t.Helper()
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var want storetest.Contents
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	copyFile(t, base+".db", path)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	storetest.RequireContents(t, "the file "+filepath.Base(base)+".db", storetest.ContentsOf(t, s), want)
	return s
}

// testdata/format1-nested.db was written by the build whose file format 1
// kept each job's tasks, configs and events in nested buckets of their
// own (TestWriteLayoutFixture wrote it); format1-nested.json holds what
// it stored. This build reads it whole.
func TestReadsTheNestedLayout(t *testing.T) {
	s := requireFixture(t, filepath.Join("testdata", "format1-nested"))
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(formatKey); len(v) != 1 || v[0] != fileFormat {
			t.Errorf("format after opening: %v, want %d", v, fileFormat)
		}
		for _, b := range [][]byte{nestedTasksBucket, nestedConfigsBucket, nestedEventsBucket} {
			if tx.Bucket(b) != nil {
				t.Errorf("bucket %q of format 1 is still there", b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A moved job is deleted whole, and its id taken again starts empty.
	ctx := context.Background()
	if err := s.DeleteJob(ctx, "job-1"); err != nil {
		t.Fatal(err)
	}
	j := storetest.FullJob("job-1")
	j.ConfigVersion = 1
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	tasks, err := s.ListTasks(ctx, "job-1")
	if err != nil || len(tasks) != 0 {
		t.Fatalf("tasks of the new job-1: %d, %v", len(tasks), err)
	}
	if events, err := s.ListEvents(ctx, store.EventQuery{Job: "job-1"}); err != nil || len(events) != 0 {
		t.Fatalf("events of the new job-1: %d, %v", len(events), err)
	}
	if versions, err := s.ListJobConfigVersions(ctx, "job-1"); err != nil || len(versions) != 1 {
		t.Fatalf("config versions of the new job-1: %v, %v", versions, err)
	}
}

// Ids where one is the start of another keep their records apart: each
// has a bucket of its own, and its configs' keys carry its length.
func TestJobIDsThatArePrefixesOfOthers(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := []model.JobID{"a", "a\x00", "ab", "a\x00\x00\x00\x00\x01"}
	for n, id := range ids {
		j := storetest.FullJob(id)
		j.ConfigVersion = 1
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		var tasks []*model.TaskRuntime
		for i := range uint32(n + 1) {
			tasks = append(tasks, storetest.FullTask(model.TaskID{Job: id, Instance: i}))
		}
		if err := s.WriteTasks(ctx, tasks); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteJob(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for n, id := range ids[1:] {
		tasks, err := s.ListTasks(ctx, id)
		if err != nil || len(tasks) != n+2 {
			t.Fatalf("tasks of %q: %d, %v; want %d", id, len(tasks), err, n+2)
		}
		for _, tk := range tasks {
			if tk.ID.Job != id {
				t.Fatalf("a task of %q listed under %q", tk.ID.Job, id)
			}
		}
	}
}
