package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

func getTask(t testing.TB, s store.Store, id model.TaskID) *model.TaskRuntime {
	t.Helper()
	task, err := s.GetTask(context.Background(), id)
	mustNil(t, err, "GetTask "+id.String())
	return task
}

func listTasks(t testing.TB, s store.Store, job model.JobID) []*model.TaskRuntime {
	t.Helper()
	tasks, err := s.ListTasks(context.Background(), job)
	mustNil(t, err, "ListTasks "+string(job))
	return tasks
}

func testRoundTripEveryField(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("full")
	if zero := zeroFieldPaths(job); len(zero) > 0 {
		t.Fatalf("FullJob leaves fields zero, extend it: %v", zero)
	}
	task := FullTask(model.TaskID{Job: "full", Instance: 70_000})
	task.Revision = 0
	if zero := zeroFieldPaths(task); len(zero) != 1 || zero[0] != ".Revision" {
		t.Fatalf("FullTask leaves fields zero, extend it: %v", zero)
	}
	pool := FullPool("/full")
	if zero := zeroFieldPaths(pool); len(zero) != 1 || zero[0] != ".Revision" {
		t.Fatalf("FullPool leaves fields zero, extend it: %v", zero)
	}
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{task}), "WriteTasks")
	if zero := zeroFieldPaths(task); len(zero) != 0 {
		t.Fatalf("written task has zero fields: %v", zero)
	}
	mustNil(t, kinds.Pools.Create(ctx, s, pool), "CreatePool")
	if zero := zeroFieldPaths(pool); len(zero) != 0 {
		t.Fatalf("created pool has zero fields: %v", zero)
	}

	gotJob := getJob(t, s, "full")
	requireUTC(t, "job", gotJob)
	requireEqual(t, "job", gotJob, job)
	gotTask := getTask(t, s, task.ID)
	requireUTC(t, "task", gotTask)
	requireEqual(t, "task", gotTask, task)
	requireEqual(t, "listed task", listTasks(t, s, "full")[0], task)
	gotPool := poolAt(t, s, "/full")
	requireUTC(t, "pool", gotPool)
	requireEqual(t, "pool", gotPool, pool)

	// A job with nothing but an id, and a task with nothing but an id.
	bare := &model.Job{ID: "bare"}
	mustNil(t, s.CreateJob(ctx, bare), "CreateJob bare")
	requireEqual(t, "bare job", getJob(t, s, "bare"), bare)
	bareTask := &model.TaskRuntime{ID: model.TaskID{Job: "bare"}}
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{bareTask}), "WriteTasks bare")
	requireEqual(t, "bare task", getTask(t, s, bareTask.ID), bareTask)
	barePool := &model.Pool{Path: "/bare"}
	mustNil(t, kinds.Pools.Create(ctx, s, barePool), "CreatePool bare")
	requireEqual(t, "bare pool", poolAt(t, s, "/bare"), barePool)
}

func testTimesRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "times")
	times := []time.Time{
		{},
		time.Unix(0, 0),
		time.Unix(-1, 1),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1900, 2, 28, 23, 59, 59, 999_999_999, time.FixedZone("x", -3600)),
		time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC), // past int64 nanoseconds
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Now(), // carries a monotonic reading
	}
	var tasks []*model.TaskRuntime
	for i, tm := range times {
		tasks = append(tasks, &model.TaskRuntime{
			ID:        model.TaskID{Job: "times", Instance: uint32(i)},
			StartTime: tm, CompletionTime: tm, UpdateTime: tm, RetryAfter: tm,
		})
	}
	mustNil(t, s.WriteTasks(ctx, tasks), "WriteTasks")
	for i, got := range listTasks(t, s, "times") {
		requireUTC(t, "task", got)
		if !got.StartTime.Equal(times[i]) || got.StartTime.IsZero() != times[i].IsZero() {
			t.Fatalf("time %v came back as %v", times[i], got.StartTime)
		}
		requireEqual(t, fmt.Sprintf("task with time %v", times[i]), got, tasks[i])
	}
}

func nestedConstraint(depth int) model.Constraint {
	c := model.Constraint{Key: fmt.Sprintf("leaf-%d", depth), Op: model.OpExists}
	for d := range depth {
		inner := []model.Constraint{c, {Key: fmt.Sprint(d), Op: model.OpNotIn, Values: []string{"v"}}}
		if d%2 == 0 {
			c = model.Constraint{AllOf: inner}
		} else {
			c = model.Constraint{AnyOf: inner}
		}
	}
	return c
}

func testConstraintNestingAndCycles(t *testing.T, s store.Store) {
	ctx := context.Background()
	deep := &model.Job{ID: "deep"}
	deep.Spec.Task.Constraints = []model.Constraint{nestedConstraint(12)}
	mustNil(t, s.CreateJob(ctx, deep), "CreateJob with 12 levels of constraints")
	requireEqual(t, "deep job", getJob(t, s, "deep"), deep)

	// Slice aliasing can make a constraint contain itself; storing it must
	// fail cleanly instead of recursing forever.
	cyclic := make([]model.Constraint, 1)
	cyclic[0] = model.Constraint{AnyOf: cyclic}
	loop := &model.Job{ID: "loop"}
	loop.Spec.Task.Constraints = cyclic
	requireIs(t, s.CreateJob(ctx, loop), store.ErrInvalid, "loop")
	if _, err := s.GetJob(ctx, "loop"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rejected job is readable: %v", err)
	}
	deep.Spec.Task.Constraints = nil
	deep.Spec.Overrides = []model.InstanceOverride{{Task: model.TaskSpec{Constraints: cyclic}}}
	requireIs(t, s.PutJobConfig(ctx, "deep", 2, &deep.Spec), store.ErrInvalid, "deep")
	if _, err := s.GetJobConfig(ctx, "deep", 2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rejected config is readable: %v", err)
	}
}

func testWriteTasksCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "cas")
	mustNil(t, s.WriteTasks(ctx, nil), "empty batch")
	batch := newTasks("cas", 0, 3)
	mustNil(t, s.WriteTasks(ctx, batch), "WriteTasks new")
	for _, task := range batch {
		if task.Revision != 1 {
			t.Fatalf("%s revision after create %d, want 1", task.ID, task.Revision)
		}
		requireEqual(t, "written task", getTask(t, s, task.ID), task)
	}

	again := FullTask(model.TaskID{Job: "cas", Instance: 1})
	requireIs(t, s.WriteTasks(ctx, []*model.TaskRuntime{again}), store.ErrConflict, "cas/1")
	if again.Revision != 0 {
		t.Fatalf("rejected write changed caller's revision to %d", again.Revision)
	}

	update := *batch[1]
	update.State = model.TaskSucceeded
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{&update}), "WriteTasks update")
	if update.Revision != 2 {
		t.Fatalf("revision after update %d, want 2", update.Revision)
	}
	for _, rev := range []uint64{1, 3, 1 << 40} {
		stale := update
		stale.Revision = rev
		stale.State = model.TaskLost
		requireIs(t, s.WriteTasks(ctx, []*model.TaskRuntime{&stale}), store.ErrConflict, "cas/1")
		requireEqual(t, "task after stale write", getTask(t, s, update.ID), &update)
	}
}

func testBatchOfNewTasksIsAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "atomic")
	existing := FullTask(model.TaskID{Job: "atomic", Instance: 57})
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{existing}), "WriteTasks")

	batch := newTasks("atomic", 0, 100)
	requireIs(t, s.WriteTasks(ctx, batch), store.ErrConflict, "atomic/57")
	for _, task := range batch {
		if task.Revision != 0 {
			t.Fatalf("%s: revision %d after rejected batch", task.ID, task.Revision)
		}
	}
	got := listTasks(t, s, "atomic")
	if len(got) != 1 || got[0].ID.Instance != 57 || got[0].Revision != 1 {
		t.Fatalf("rejected batch left %d tasks stored", len(got))
	}
}

func testBatchOfUpdatesIsAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "atomic")
	stored := newTasks("atomic", 0, 100)
	mustNil(t, s.WriteTasks(ctx, stored), "WriteTasks")
	want := Normal(stored)

	for _, bad := range []int{0, 42, 99} {
		batch := Normal(stored)
		for _, task := range batch {
			task.State = model.TaskKilled
		}
		batch[bad].Revision = 2 // stale in the other direction: from the future
		requireIs(t, s.WriteTasks(ctx, batch), store.ErrConflict, batch[bad].ID.String())
		for i, task := range batch {
			wantRev := uint64(1)
			if i == bad {
				wantRev = 2
			}
			if task.Revision != wantRev {
				t.Fatalf("%s: caller's revision %d after rejected batch", task.ID, task.Revision)
			}
		}
		requireEqual(t, fmt.Sprintf("tasks after batch with bad task %d", bad), listTasks(t, s, "atomic"), want)
	}
}

func testBatchRejectsBadEntries(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "real")
	withGhost := newTasks("real", 0, 10)
	withGhost[5] = FullTask(model.TaskID{Job: "ghost", Instance: 5})
	requireIs(t, s.WriteTasks(ctx, withGhost), store.ErrNotFound, "ghost")

	withNil := newTasks("real", 0, 10)
	withNil[9] = nil
	requireIs(t, s.WriteTasks(ctx, withNil), store.ErrInvalid, "")
	if got := listTasks(t, s, "real"); len(got) != 0 {
		t.Fatalf("rejected batches stored %d tasks", len(got))
	}
	for _, task := range withGhost[:5] {
		if task.Revision != 0 {
			t.Fatalf("rejected batch changed %s revision to %d", task.ID, task.Revision)
		}
	}
}

func testTaskTwiceInOneBatch(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "twice")
	id := model.TaskID{Job: "twice", Instance: 3}
	first, second := FullTask(id), FullTask(id)
	requireIs(t, s.WriteTasks(ctx, []*model.TaskRuntime{first, second}), store.ErrConflict, "twice/3")
	if got := listTasks(t, s, "twice"); len(got) != 0 {
		t.Fatalf("rejected batch stored %d tasks", len(got))
	}

	// The second write of a task in a batch sees the first one's revision.
	second.Revision = 1
	second.State = model.TaskSucceeded
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{first, second}), "chained writes")
	if first.Revision != 1 || second.Revision != 2 {
		t.Fatalf("revisions %d, %d; want 1, 2", first.Revision, second.Revision)
	}
	requireEqual(t, "task written twice", getTask(t, s, id), second)
}

func testListTasksOrderedByInstance(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "order")
	createJob(t, s, "order2")
	const n = 1001
	instances := rand.New(rand.NewPCG(1, 2)).Perm(n)
	instances = append(instances, 1<<32-1, 1<<24)
	for len(instances) > 0 {
		k := min(len(instances), 97)
		var batch []*model.TaskRuntime
		for _, i := range instances[:k] {
			batch = append(batch, FullTask(model.TaskID{Job: "order", Instance: uint32(i)}))
		}
		instances = instances[k:]
		mustNil(t, s.WriteTasks(ctx, batch), "WriteTasks")
	}
	mustNil(t, s.WriteTasks(ctx, newTasks("order2", 0, 3)), "WriteTasks order2")
	got := listTasks(t, s, "order")
	if len(got) != n+2 {
		t.Fatalf("ListTasks returned %d tasks, want %d", len(got), n+2)
	}
	for i := range n {
		if got[i].ID.Instance != uint32(i) {
			t.Fatalf("ListTasks[%d] is instance %d", i, got[i].ID.Instance)
		}
	}
	if got[n].ID.Instance != 1<<24 || got[n+1].ID.Instance != 1<<32-1 {
		t.Fatalf("largest instances out of order: %d, %d", got[n].ID.Instance, got[n+1].ID.Instance)
	}
	if !(got[2].ID.Instance < got[10].ID.Instance && got[10].ID.Instance < got[100].ID.Instance) {
		t.Fatal("instances 2, 10, 100 are not in numeric order")
	}
	for _, task := range got {
		if task.ID.Job != "order" {
			t.Fatalf("ListTasks(order) returned a task of %q", task.ID.Job)
		}
	}
	want := FullTask(model.TaskID{Job: "order", Instance: 500})
	want.Revision = 1
	requireEqual(t, "instance 500", got[500], want)
}

func testCancelledContext(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CreateJob(ctx, FullJob("c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateJob with cancelled context: %v", err)
	}
	createJob(t, s, "c")
	if err := s.WriteTasks(ctx, newTasks("c", 0, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteTasks with cancelled context: %v", err)
	}
	if got := listTasks(t, s, "c"); len(got) != 0 {
		t.Fatalf("cancelled WriteTasks stored %d tasks", len(got))
	}
	if _, err := s.GetJob(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetJob with cancelled context: %v", err)
	}

	if err := kinds.Pools.Create(ctx, s, FullPool("/c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreatePool with cancelled context: %v", err)
	}
	createPool(t, s, "/c")
	if err := kinds.Pools.Write(ctx, s, FullPool("/c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("UpdatePool with cancelled context: %v", err)
	}
	if err := kinds.Pools.Delete(ctx, s, "/c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("DeletePool with cancelled context: %v", err)
	}
	if _, err := kinds.Pools.List(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("ListPools with cancelled context: %v", err)
	}
	if got := listPools(t, s); len(got) != 1 || got[0].Revision != 1 {
		t.Fatalf("cancelled pool calls changed the pools: %+v", got)
	}

	cancelled := map[string]error{
		"PutJobConfig": s.PutJobConfig(ctx, "c", 2, &model.JobSpec{}),
		"CreateUpdate": s.CreateUpdate(ctx, FullUpdate("u", "c")),
		"PutHosts":     kinds.Hosts.Put(ctx, s, []*model.HostRecord{FullHost("c/h")}),
		"AppendEvents": s.AppendEvents(ctx, jobEvents("c", 1, 1), time.Hour),
	}
	_, cancelled["GetJobConfig"] = s.GetJobConfig(ctx, "c", 1)
	_, cancelled["ListUpdates"] = s.ListUpdates(ctx, "c")
	_, cancelled["ListHosts"] = kinds.Hosts.List(ctx, s)
	_, cancelled["ListEvents"] = s.ListEvents(ctx, store.EventQuery{Job: "c"})
	for call, err := range cancelled {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with cancelled context: %v", call, err)
		}
	}
	if versions, err := s.ListJobConfigVersions(context.Background(), "c"); err != nil || len(versions) != 1 {
		t.Fatalf("cancelled PutJobConfig changed the configs: %v, %v", versions, err)
	}
	if hosts, err := kinds.Hosts.List(context.Background(), s); err != nil || len(hosts) != 0 {
		t.Fatalf("cancelled PutHosts stored %d hosts, %v", len(hosts), err)
	}
}

func testClosedStoreUnavailable(t *testing.T, s store.Store) {
	ctx := context.Background()
	createJob(t, s, "j")
	createPool(t, s, "/p")
	mustNil(t, s.Close(), "Close")
	checks := map[string]error{
		"CreateJob":    s.CreateJob(ctx, FullJob("k")),
		"UpdateJob":    s.UpdateJob(ctx, &model.Job{ID: "j", Revision: 1, ConfigVersion: 1}),
		"DeleteJob":    s.DeleteJob(ctx, "j"),
		"PutJobConfig": s.PutJobConfig(ctx, "j", 2, &model.JobSpec{}),
		"WriteTasks":   s.WriteTasks(ctx, newTasks("j", 0, 1)),
		"CreatePool":   kinds.Pools.Create(ctx, s, FullPool("/q")),
		"UpdatePool":   kinds.Pools.Write(ctx, s, &model.Pool{Path: "/p", Revision: 1}),
		"DeletePool":   kinds.Pools.Delete(ctx, s, "/p"),
		"CreateUpdate": s.CreateUpdate(ctx, FullUpdate("u", "j")),
		"WriteUpdate":  s.WriteUpdate(ctx, FullUpdate("u", "j")),
		"PutHosts":     kinds.Hosts.Put(ctx, s, []*model.HostRecord{FullHost("c/h")}),
		"DeleteHost":   kinds.Hosts.Delete(ctx, s, "c/h"),
		"AppendEvents": s.AppendEvents(ctx, jobEvents("j", 1, 1), time.Hour),
	}
	_, checks["GetJobConfig"] = s.GetJobConfig(ctx, "j", 1)
	_, checks["ListJobConfigVersions"] = s.ListJobConfigVersions(ctx, "j")
	_, checks["GetUpdate"] = s.GetUpdate(ctx, "u")
	_, checks["ListUpdates"] = s.ListUpdates(ctx, "j")
	_, checks["GetHost"] = kinds.Hosts.Get(ctx, s, "c/h")
	_, checks["ListHosts"] = kinds.Hosts.List(ctx, s)
	_, checks["ListEvents"] = s.ListEvents(ctx, store.EventQuery{Job: "j"})
	_, checks["ListPools"] = kinds.Pools.List(ctx, s)
	_, checks["GetJob"] = s.GetJob(ctx, "j")
	_, checks["ListJobs"] = s.ListJobs(ctx)
	_, checks["GetTask"] = s.GetTask(ctx, model.TaskID{Job: "j"})
	_, checks["ListTasks"] = s.ListTasks(ctx, "j")
	for call, err := range checks {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on a closed store: %v, want ErrUnavailable", call, err)
		}
	}
	// The suite closes again when the test ends: that must be harmless.
}
