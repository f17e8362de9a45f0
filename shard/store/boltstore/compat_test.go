package boltstore

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// testdata/format1.db was written by the build before pools and the gang
// and revocable job fields existed: file format 1, job records of version
// 1. testdata/format1.json holds what that build stored in it, resources as
// that build had them: decimal amounts, cpu in cores (see
// storetest.UnmarshalDecimalJSON).
type format1Contents struct {
	Job   *model.Job
	Tasks []*model.TaskRuntime
}

func readFormat1(t *testing.T) format1Contents {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "format1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want format1Contents
	if err := storetest.UnmarshalDecimalJSON(raw, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpensAFileWrittenBeforePools(t *testing.T) {
	ctx := context.Background()
	want := readFormat1(t)
	if want.Job == nil || len(want.Tasks) == 0 {
		t.Fatal("testdata/format1.json holds no job or no tasks")
	}
	if s := want.Job.Spec; s.GangSize != 0 || s.GangRestart || s.Revocable || want.Job.ConfigVersion != 0 {
		t.Fatal("testdata/format1.json sets fields the old build did not have")
	}
	// The spec an old job record holds is its config version 1.
	want.Job.ConfigVersion = 1
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "format1.db"), path)

	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a format 1 file: %v", err)
	}
	got, err := s.GetJob(ctx, want.Job.ID)
	if err != nil {
		t.Fatalf("GetJob of a version 1 job record: %v", err)
	}
	if !equal(got, want.Job) {
		t.Fatalf("old job decodes as\n%+v\nwant\n%+v", got, want.Job)
	}
	tasks, err := s.ListTasks(ctx, want.Job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(tasks, want.Tasks) {
		t.Fatalf("old tasks decode differently")
	}
	if pools, err := kinds.Pools.List(ctx, s); err != nil || len(pools) != 0 {
		t.Fatalf("ListPools of an old file: %d pools, %v", len(pools), err)
	}

	requireConfigs(t, s, want.Job.ID, map[uint64]*model.JobSpec{1: &want.Job.Spec})
	if err := s.PutJobConfig(ctx, want.Job.ID, 1, &model.JobSpec{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("PutJobConfig of version 1 of an old job: %v, want ErrExists", err)
	}

	// The old records take compare-and-set writes, now in the new version:
	// the spec moves out of the record and stays config version 1.
	got.Status.Message = "updated by this build"
	if err := s.UpdateJob(ctx, got); err != nil {
		t.Fatalf("UpdateJob over a version 1 record: %v", err)
	}
	requireConfigs(t, s, want.Job.ID, map[uint64]*model.JobSpec{1: &want.Job.Spec})
	next := want.Job.Spec
	next.GangSize, next.GangRestart, next.Revocable = 5, true, true
	if err := s.PutJobConfig(ctx, want.Job.ID, 2, &next); err != nil {
		t.Fatal(err)
	}
	got.ConfigVersion, got.Spec = 2, next
	if err := s.UpdateJob(ctx, got); err != nil {
		t.Fatalf("UpdateJob to config 2: %v", err)
	}
	pool := storetest.FullPool("/")
	if err := kinds.Pools.Create(ctx, s, pool); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	again, err := s.GetJob(ctx, want.Job.ID)
	if err != nil || !equal(again, got) {
		t.Fatalf("updated old job after reopen: %+v, %v", again, err)
	}
	requireConfigs(t, s, want.Job.ID, map[uint64]*model.JobSpec{1: &want.Job.Spec, 2: &next})
	pools, err := kinds.Pools.List(ctx, s)
	if err != nil || len(pools) != 1 || !equal(pools[0], pool) {
		t.Fatalf("pools after reopen: %+v, %v", pools, err)
	}
}

// requireConfigs fails unless job's stored configs are exactly want.
func requireConfigs(t *testing.T, s *Store, job model.JobID, want map[uint64]*model.JobSpec) {
	t.Helper()
	ctx := context.Background()
	versions, err := s.ListJobConfigVersions(ctx, job)
	if err != nil || !slices.Equal(versions, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("config versions of %s: %v, %v; want %v", job, versions, err, slices.Sorted(maps.Keys(want)))
	}
	for v, spec := range want {
		got, err := s.GetJobConfig(ctx, job, v)
		if err != nil || !equal(got, spec) {
			t.Fatalf("config %d of %s: %+v, %v", v, job, got, err)
		}
	}
}
