package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

var errBroken = errors.New("broken")

// brokenWhole is a memstore one of whose calls fails.
type brokenWhole struct {
	store.Whole
	broken string
}

func (b brokenWhole) fail(call string) error {
	if b.broken == call {
		return errBroken
	}
	return nil
}

func (b brokenWhole) ListRecords(ctx context.Context, t *store.Table) ([]store.Record, error) {
	if err := b.fail("ListRecords"); err != nil {
		return nil, err
	}
	return b.Whole.ListRecords(ctx, t)
}

func (b brokenWhole) ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error) {
	if err := b.fail("ListTasks"); err != nil {
		return nil, err
	}
	return b.Whole.ListTasks(ctx, job)
}

func (b brokenWhole) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	if err := b.fail("ListEvents"); err != nil {
		return nil, err
	}
	return b.Whole.ListEvents(ctx, q)
}

func (b brokenWhole) PutRecords(ctx context.Context, t *store.Table, recs []store.Record) error {
	if err := b.fail("PutRecords"); err != nil {
		return err
	}
	return b.Whole.PutRecords(ctx, t, recs)
}

// Copy names the step that failed, and what it wrote before stays
// counted.
func TestCopyErrorsNameTheStep(t *testing.T) {
	ctx := context.Background()
	opts := store.CopyOptions{EventRetention: time.Hour, AuditRetention: time.Hour, Tables: kinds.Tables()}
	cases := []struct {
		name                 string
		brokenSrc, brokenDst string
		want                 string
		jobs                 int
	}{
		{"pools not listed", "ListRecords", "", "copy: pools: broken", 0},
		{"a job's tasks not listed", "ListTasks", "", "copy: job job-1: broken", 1},
		{"events not listed", "ListEvents", "", "copy: job job-1: broken", 1},
		{"hosts not written", "", "PutRecords", "copy: hosts: broken", 0},
	}
	for _, c := range cases {
		src := memstore.New()
		if err := src.CreateJob(ctx, storetest.FullJob("job-1")); err != nil {
			t.Fatal(err)
		}
		if err := kinds.Hosts.Put(ctx, src, []*model.HostRecord{storetest.FullHost("dc1/h1")}); err != nil {
			t.Fatal(err)
		}
		n, err := store.Copy(ctx, brokenWhole{memstore.New(), c.brokenDst}, brokenWhole{src, c.brokenSrc}, opts)
		if !errors.Is(err, errBroken) || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if n.Jobs != c.jobs {
			t.Errorf("%s: %d jobs counted, want %d", c.name, n.Jobs, c.jobs)
		}
	}
	empty := brokenWhole{memstore.New(), "ListEvents"}
	if _, err := store.Copy(ctx, memstore.New(), empty, opts); err == nil || err.Error() != "copy: host pool events: broken" {
		t.Errorf("host pool events not listed: %v", err)
	}
	if _, err := store.Copy(ctx, memstore.New(), memstore.New(), store.CopyOptions{EventRetention: time.Hour}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("no audit retention: %v, want ErrInvalid", err)
	}
}

func TestPrepareStopsAtTheFirstRefusal(t *testing.T) {
	check := func(n int) error {
		if n < 0 {
			return store.ErrInvalid
		}
		return nil
	}
	double := func(n int) int { return 2 * n }
	got, err := store.Prepare([]int{1, 2, 3}, check, double)
	if err != nil || len(got) != 3 || got[2] != 6 {
		t.Errorf("Prepare = %v, %v; want [2 4 6]", got, err)
	}
	prepared := 0
	_, err = store.Prepare([]int{1, -1, 2}, check, func(n int) int { prepared++; return n })
	if !errors.Is(err, store.ErrInvalid) || err.Error() != "write pass: "+store.ErrInvalid.Error() || prepared != 1 {
		t.Errorf("Prepare of a bad record: %v after %d prepared; want write pass: ErrInvalid after 1", err, prepared)
	}
}
