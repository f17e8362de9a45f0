package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "nested", "dir", "shard.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	open := func(t *testing.T) store.Store { return openTemp(t) }
	storetest.Run(t, open)
	storetest.RunCopy(t, open, func() store.Whole { return memstore.New() })
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a", "b", "shard.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	job := storetest.FullJob("kept")
	if err := s.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	tasks := make([]*model.TaskRuntime, 300)
	for i := range tasks {
		tasks[i] = storetest.FullTask(model.TaskID{Job: "kept", Instance: uint32(i)})
	}
	if err := s.WriteTasks(ctx, tasks); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &model.Job{ID: "gone"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJob(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetJob(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if !equal(got, job) {
		t.Fatalf("job after reopen: %+v", got)
	}
	listed, err := s.ListTasks(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if !equal(listed, tasks) {
		t.Fatalf("tasks after reopen differ")
	}
	if _, err := s.GetJob(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted job after reopen: %v", err)
	}
	// Revisions carry on from where they were.
	tasks[7].State = model.TaskKilled
	if err := s.WriteTasks(ctx, tasks[7:8]); err != nil || tasks[7].Revision != 2 {
		t.Fatalf("write after reopen: %v, revision %d", err, tasks[7].Revision)
	}
}

func equal[T any](a, b T) bool {
	return reflect.DeepEqual(storetest.Normal(a), storetest.Normal(b))
}

func TestOpenRejectsAFileInUse(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	if _, err := Open(s.Path()); err == nil {
		t.Fatal("second Open of a file held open succeeded")
	}
}

func TestOpenRejectsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte("this is not a bbolt file, not at all, no"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(garbage); err == nil {
		t.Fatal("Open of a garbage file succeeded")
	}

	newer := filepath.Join(dir, "newer.db")
	db, err := bolt.Open(newer, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		return b.Put(formatKey, []byte{fileFormat + 1})
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(newer); !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), fmt.Sprintf("format %d, this build reads format %d", fileFormat+1, fileFormat)) {
		t.Fatalf("Open of a file in a newer format: %v, want ErrNewerFormat naming both formats", err)
	}
	// The failed Open released the file.
	db, err = bolt.Open(newer, 0o600, &bolt.Options{Timeout: 1})
	if err != nil {
		t.Fatalf("file still locked after failed Open: %v", err)
	}
	db.Close()
}

func TestOpenFailsWhereNoDirectoryCanBeMade(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "sub", "shard.db")); err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
}

// A value that does not decode is reported as ErrCorrupt, not a panic.
func TestCorruptValuesAreErrors(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	defer s.Close()
	if err := s.CreateJob(ctx, storetest.FullJob("j")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTasks(ctx, []*model.TaskRuntime{storetest.FullTask(model.TaskID{Job: "j"})}); err != nil {
		t.Fatal(err)
	}
	if err := kinds.Pools.Create(ctx, s, storetest.FullPool("/p")); err != nil {
		t.Fatal(err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(jobsBucket).Put([]byte("j"), []byte{jobRecordVersion, 1, 2}); err != nil {
			return err
		}
		if err := tx.Bucket(poolsBucket).Put([]byte("/p"), []byte{poolRecordVersion, 1, 0}); err != nil {
			return err
		}
		b, err := jobBucketFor(tx, "j")
		if err != nil {
			return err
		}
		return b.Put(taskKey(0), []byte{taskRecordVersion, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(ctx, "j"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("GetJob of corrupt value: %v", err)
	}
	if _, err := s.ListJobs(ctx); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ListJobs with corrupt value: %v", err)
	}
	if _, err := s.GetTask(ctx, model.TaskID{Job: "j"}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("GetTask of corrupt value: %v", err)
	}
	if _, err := s.ListTasks(ctx, "j"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ListTasks with corrupt value: %v", err)
	}
	if _, err := kinds.Pools.List(ctx, s); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ListPools with corrupt value: %v", err)
	}

	// A record from a newer build is reported as corrupt, naming its version.
	err = s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(poolsBucket).Put([]byte("/p"), []byte{poolRecordVersion + 1, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = kinds.Pools.Write(ctx, s, &model.Pool{Path: "/p", Revision: 1})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("record version %d", poolRecordVersion+1)) {
		t.Fatalf("UpdatePool over a newer record: %v", err)
	}
}
