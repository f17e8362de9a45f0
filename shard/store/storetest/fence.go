package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// The fence tests run against backends with the optional store.Fencer
// capability: a leader's writes carry its lease term, and a write from a
// term older than the newest recorded is refused and changes nothing.

// FencedBackend is a store with leases and fencing.
type FencedBackend interface {
	store.Store
	store.Fencer
	store.LeaseStore
}

var fenceCases = []struct {
	name string
	test func(t *testing.T, s FencedBackend)
}{
	{"FenceInvalid", testFenceInvalid},
	{"FencedWritesRefusedAfterNewerTerm", testFencedWritesRefusedAfterNewerTerm},
	{"PausedLeaderFencedAfterTakeover", testPausedLeaderFencedAfterTakeover},
}

// onFencer makes a fence test one of Run's: it skips stores without
// fencing.
func onFencer(test func(t *testing.T, s FencedBackend)) func(t *testing.T, s store.Store) {
	return func(t *testing.T, s store.Store) {
		fs, ok := s.(FencedBackend)
		if !ok {
			t.Skipf("%T has no fencing (store.Fencer with store.LeaseStore)", s)
		}
		test(t, fs)
	}
}

func testFenceInvalid(t *testing.T, s FencedBackend) {
	ctx := context.Background()
	_, err := s.Fence(ctx, "", 1)
	requireIs(t, err, store.ErrInvalid, "")
	_, err = s.Fence(ctx, "shard/r", 0)
	requireIs(t, err, store.ErrInvalid, "shard/r")
}

// fencedWrite is one write of each aggregate, against the state that
// seedFenced leaves.
type fencedWrite struct {
	name  string
	write func(ctx context.Context, s store.Store) error
}

func fencedWrites() []fencedWrite {
	return []fencedWrite{
		{"CreateJob", func(ctx context.Context, s store.Store) error {
			return s.CreateJob(ctx, &model.Job{ID: "stale-new", Spec: model.JobSpec{Name: "x", Instances: 1}})
		}},
		{"CreateJobs", func(ctx context.Context, s store.Store) error {
			return errors.Join(s.CreateJobs(ctx, []*model.Job{{ID: "stale-new", Spec: model.JobSpec{Name: "x", Instances: 1}}})...)
		}},
		{"UpdateJob", func(ctx context.Context, s store.Store) error {
			j, err := s.GetJob(ctx, "fenced")
			if err != nil {
				return err
			}
			j.Status.State = model.JobKilled
			return s.UpdateJob(ctx, j)
		}},
		{"PutJobConfig", func(ctx context.Context, s store.Store) error {
			return s.PutJobConfig(ctx, "fenced", 2, &model.JobSpec{Name: "x", Instances: 1})
		}},
		{"WriteTasks", func(ctx context.Context, s store.Store) error {
			task := FullTask(model.TaskID{Job: "fenced", Instance: 1})
			task.Revision = 0
			return s.WriteTasks(ctx, []*model.TaskRuntime{task})
		}},
		{"CreateUpdate", func(ctx context.Context, s store.Store) error {
			u := FullUpdate(model.MakeUpdateID("fenced", 2), "fenced")
			u.Revision = 0
			return s.CreateUpdate(ctx, u)
		}},
		{"CreatePool", func(ctx context.Context, s store.Store) error {
			return kinds.Pools.Create(ctx, s, FullPool("/stale"))
		}},
		{"PutHosts", func(ctx context.Context, s store.Store) error {
			return kinds.Hosts.Put(ctx, s, []*model.HostRecord{FullHost("stale-host")})
		}},
		{"PutValue", func(ctx context.Context, s store.Store) error {
			return kinds.PutValue(ctx, s, "stale", []byte("x"))
		}},
		{"AppendEvents", func(ctx context.Context, s store.Store) error {
			js := model.JobStatus{State: model.JobRunning}
			return s.AppendEvents(ctx, []model.Event{{Seq: 99, Time: time.Now(), Job: "fenced", JobStatus: &js}}, time.Hour)
		}},
		{"DeleteJob", func(ctx context.Context, s store.Store) error {
			return s.DeleteJob(ctx, "fenced")
		}},
	}
}

// seedFenced writes, through w, the job the fenced writes act on.
func seedFenced(t *testing.T, w store.Store) {
	t.Helper()
	mustNil(t, w.CreateJob(context.Background(), &model.Job{ID: "fenced", Spec: model.JobSpec{Name: "fenced", Instances: 2}}), "CreateJob through the fenced view")
}

// requireUnchanged checks that none of the refused writes left a trace.
func requireUnchanged(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	j, err := s.GetJob(ctx, "fenced")
	mustNil(t, err, "GetJob after refused writes")
	if j.Revision != 1 || j.Status.State == model.JobKilled {
		t.Errorf("job rewritten by a fenced writer: revision %d, state %v", j.Revision, j.Status.State)
	}
	if _, err := s.GetJob(ctx, "stale-new"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job created by a fenced writer: %v", err)
	}
	if v, err := s.ListJobConfigVersions(ctx, "fenced"); err != nil || len(v) != 1 {
		t.Errorf("configs after a fenced PutJobConfig: %v %v", v, err)
	}
	if tasks, err := s.ListTasks(ctx, "fenced"); err != nil || len(tasks) != 0 {
		t.Errorf("tasks after a fenced WriteTasks: %d %v", len(tasks), err)
	}
	if us, err := s.ListUpdates(ctx, "fenced"); err != nil || len(us) != 0 {
		t.Errorf("updates after a fenced CreateUpdate: %d %v", len(us), err)
	}
	if pools, err := kinds.Pools.List(ctx, s); err != nil || len(pools) != 0 {
		t.Errorf("pools after a fenced CreatePool: %d %v", len(pools), err)
	}
	if _, err := kinds.Hosts.Get(ctx, s, "stale-host"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("host after a fenced PutHosts: %v", err)
	}
	if _, err := kinds.GetValue(ctx, s, "stale"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("value after a fenced PutValue: %v", err)
	}
	if evs, err := s.ListEvents(ctx, store.EventQuery{Job: "fenced"}); err != nil || len(evs) != 0 {
		t.Errorf("events after a fenced AppendEvents: %d %v", len(evs), err)
	}
}

// requireFenced checks that every write through old is refused with
// ErrFenced, then that none changed anything.
func requireFenced(t *testing.T, s, old store.Store) {
	t.Helper()
	ctx := context.Background()
	for _, w := range fencedWrites() {
		if err := w.write(ctx, old); !errors.Is(err, store.ErrFenced) {
			t.Errorf("%s by the old term: %v, want ErrFenced", w.name, err)
		}
	}
	requireUnchanged(t, s)
}

// testFencedWritesRefusedAfterNewerTerm: fences recorded by Fence alone
// (a lease kept elsewhere, such as in Kubernetes).
func testFencedWritesRefusedAfterNewerTerm(t *testing.T, s FencedBackend) {
	ctx := context.Background()
	old, err := s.Fence(ctx, "shard/r", 4)
	mustNil(t, err, "Fence at term 4")
	seedFenced(t, old)
	again, err := s.Fence(ctx, "shard/r", 4)
	mustNil(t, err, "Fence again at the same term")
	mustNil(t, kinds.PutValue(ctx, again, "same-term", []byte("ok")), "PutValue at the same term")

	newer, err := s.Fence(ctx, "shard/r", 5)
	mustNil(t, err, "Fence at term 5")
	requireFenced(t, s, old)
	_, err = s.Fence(ctx, "shard/r", 4)
	requireIs(t, err, store.ErrFenced, "shard/r")

	// The newer term writes; other fences and the store itself are apart.
	mustNil(t, kinds.PutValue(ctx, newer, "newer", []byte("ok")), "PutValue at term 5")
	other, err := s.Fence(ctx, "shard/other", 1)
	mustNil(t, err, "Fence of another name at term 1")
	mustNil(t, kinds.PutValue(ctx, other, "other", []byte("ok")), "PutValue under another fence")
	mustNil(t, kinds.PutValue(ctx, s, "unfenced", []byte("ok")), "PutValue through the store itself")
	got, err := kinds.GetValue(ctx, old, "newer")
	if err != nil || string(got) != "ok" {
		t.Fatalf("reads through a fenced view: %q %v", got, err)
	}
}

// testPausedLeaderFencedAfterTakeover is a leader paused past its lease:
// its lease expires, a standby takes it at a newer term, and the old
// leader, resuming, writes with the term it had.
func testPausedLeaderFencedAfterTakeover(t *testing.T, s FencedBackend) {
	ctx := context.Background()
	const name = "shard/paused"
	termA, err := s.AcquireLease(ctx, name, "a", time.Second)
	mustNil(t, err, "AcquireLease by a")
	old, err := s.Fence(ctx, name, termA)
	mustNil(t, err, "Fence at a's term")
	seedFenced(t, old)

	// a pauses here: it does not renew. b takes over once the lease ends.
	start := time.Now()
	var termB uint64
	for poll := time.NewTicker(50 * time.Millisecond); ; <-poll.C {
		termB, err = s.AcquireLease(ctx, name, "b", longTTL)
		if err == nil {
			poll.Stop()
			break
		}
		if !errors.Is(err, store.ErrConflict) || time.Since(start) > 30*time.Second {
			t.Fatalf("b could not take the lease %v after a stopped renewing: %v", time.Since(start), err)
		}
	}
	if termB <= termA {
		t.Fatalf("b's term %d is not after a's %d", termB, termA)
	}
	// Taking the lease is enough to fence a, before b fences itself.
	requireFenced(t, s, old)
	newer, err := s.Fence(ctx, name, termB)
	mustNil(t, err, "Fence at b's term")
	requireFenced(t, s, old)
	mustNil(t, kinds.PutValue(ctx, newer, "b", []byte("leads")), "PutValue by b")
	_, err = s.Fence(ctx, name, termA)
	requireIs(t, err, store.ErrFenced, name)
}
