package cassandra

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gocql/gocql"
	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// oldJobRecord returns a job record as the builds before job configs
// wrote it (status plus spec, record version 1), taken from the embedded
// store's compatibility file, with the job it holds.
func oldJobRecord(t *testing.T) ([]byte, *model.Job) {
	t.Helper()
	dir := filepath.Join("..", "boltstore", "testdata")
	raw, err := os.ReadFile(filepath.Join(dir, "format1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Job *model.Job }
	if err := storetest.UnmarshalDecimalJSON(raw, &want); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, "format1.db"), 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var record []byte
	err = db.View(func(tx *bolt.Tx) error {
		record = append(record, tx.Bucket([]byte("jobs")).Get([]byte(want.Job.ID))...)
		return nil
	})
	if err != nil || len(record) == 0 {
		t.Fatalf("no record of job %s in format1.db: %v", want.Job.ID, err)
	}
	return record, want.Job
}

// A jobs row written before migration 2 (its record holding the spec)
// reads as the job at config version 1, takes updates without losing that
// spec, and moves to later configs.
func TestReadsJobsWrittenBeforeConfigs(t *testing.T) {
	ctx := context.Background()
	s, cfg := openFresh(t, "peloton_compat")
	record, want := oldJobRecord(t)
	err := s.query(ctx, fmt.Sprintf("INSERT INTO %s.jobs (id, incarnation, revision, record) VALUES (?, ?, ?, ?)", cfg.Keyspace),
		string(want.ID), gocql.TimeUUID(), int64(want.Revision), record).Exec()
	if err != nil {
		t.Fatal(err)
	}
	want.ConfigVersion = 1
	requireJob := func(what string, want *model.Job) {
		t.Helper()
		got, err := s.GetJob(ctx, want.ID)
		if err != nil || !reflect.DeepEqual(storetest.Normal(got), storetest.Normal(want)) {
			t.Fatalf("%s:\n got %+v, %v\nwant %+v", what, got, err, want)
		}
		jobs, err := s.ListJobs(ctx)
		if err != nil || len(jobs) != 1 || !reflect.DeepEqual(storetest.Normal(jobs[0]), storetest.Normal(want)) {
			t.Fatalf("%s, listed: %+v, %v", what, jobs, err)
		}
	}
	requireConfigs := func(what string, want map[uint64]*model.JobSpec) {
		t.Helper()
		versions, err := s.ListJobConfigVersions(ctx, "legacy")
		if err != nil || !slices.Equal(versions, slices.Sorted(maps.Keys(want))) {
			t.Fatalf("%s: config versions %v, %v", what, versions, err)
		}
		for v, spec := range want {
			got, err := s.GetJobConfig(ctx, "legacy", v)
			if err != nil || !reflect.DeepEqual(storetest.Normal(got), storetest.Normal(spec)) {
				t.Fatalf("%s: config %d: %+v, %v", what, v, got, err)
			}
		}
	}
	requireJob("old job", want)
	old := want.Spec
	requireConfigs("old job", map[uint64]*model.JobSpec{1: &old})
	if err := s.PutJobConfig(ctx, "legacy", 1, &model.JobSpec{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("PutJobConfig of version 1 of an old job: %v, want ErrExists", err)
	}

	want.Status.Message = "updated by this build"
	if err := s.UpdateJob(ctx, want); err != nil {
		t.Fatal(err)
	}
	requireJob("old job after an update", want)
	requireConfigs("old job after an update", map[uint64]*model.JobSpec{1: &old})

	next := old
	next.GangSize, next.Overrides = 4, storetest.OverrideSpec(3).Overrides
	if err := s.PutJobConfig(ctx, "legacy", 2, &next); err != nil {
		t.Fatal(err)
	}
	want.ConfigVersion, want.Spec = 2, next
	if err := s.UpdateJob(ctx, want); err != nil {
		t.Fatal(err)
	}
	requireJob("old job on config 2", want)
	requireConfigs("old job on config 2", map[uint64]*model.JobSpec{1: &old, 2: &next})

	if err := s.DeleteJob(ctx, "legacy"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(ctx, "legacy"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJob after delete: %v", err)
	}
}
