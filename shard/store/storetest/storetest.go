package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// Opener returns a fresh, empty store. The suite closes it when the subtest
// ends; the opener may register its own cleanup (for example t.TempDir).
type Opener func(t *testing.T) store.Store

// Run runs the whole contract suite against stores made by open.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		test func(t *testing.T, s store.Store)
	}{
		{"CreateAndGetJob", testCreateAndGetJob},
		{"InvalidJobRejected", testInvalidJobRejected},
		{"CreateJobsEachOnItsOwn", testCreateJobsEachOnItsOwn},
		{"CreateJobsMany", testCreateJobsMany},
		{"CreateJobsCancelled", testCreateJobsCancelled},
		{"NotFound", testNotFound},
		{"UpdateJobCompareAndSet", testUpdateJobCompareAndSet},
		{"ListJobsOrderedByID", testListJobsOrderedByID},
		{"DeleteJobRemovesItsTasksOnly", testDeleteJobRemovesItsTasksOnly},
		{"NoAliasing", testNoAliasing},
		{"RoundTripEveryField", testRoundTripEveryField},
		{"TimesRoundTrip", testTimesRoundTrip},
		{"ConstraintNestingAndCycles", testConstraintNestingAndCycles},
		{"WriteTasksCompareAndSet", testWriteTasksCompareAndSet},
		{"BatchOfNewTasksIsAtomic", testBatchOfNewTasksIsAtomic},
		{"BatchOfUpdatesIsAtomic", testBatchOfUpdatesIsAtomic},
		{"BatchRejectsBadEntries", testBatchRejectsBadEntries},
		{"TaskTwiceInOneBatch", testTaskTwiceInOneBatch},
		{"BatchAcrossPartitionsWithStaleTask", testBatchAcrossPartitionsWithStaleTask},
		{"ConcurrentBatchesAcrossPartitions", testConcurrentBatchesAcrossPartitions},
		{"ListTasksOrderedByInstance", testListTasksOrderedByInstance},
		{"WritePass", testWritePass},
		{"CancelledContext", testCancelledContext},
		{"ClosedStoreUnavailable", testClosedStoreUnavailable},
		{"MatchesReferenceModel", testMatchesReferenceModel},
		{"HundredThousandInstanceJob", testHundredThousandInstanceJob},
		{"ConcurrentWritersToDifferentJobs", testConcurrentWritersToDifferentJobs},
		{"ConcurrentCompareAndSetOneWinner", testConcurrentCompareAndSetOneWinner},
		{"CreatePoolAndList", testCreatePoolAndList},
		{"InvalidPoolRejected", testInvalidPoolRejected},
		{"UpdatePoolCompareAndSet", testUpdatePoolCompareAndSet},
		{"DeletePool", testDeletePool},
		{"ListPoolsOrderedByPath", testListPoolsOrderedByPath},
		{"UnlimitedLimitsRoundTrip", testUnlimitedLimitsRoundTrip},
		{"PoolsMatchReferenceModel", testPoolsMatchReferenceModel},
		{"ConcurrentPoolCompareAndSetOneWinner", testConcurrentPoolCompareAndSetOneWinner},
		{"Values", testValues},
		{"RecordRules", testRecordRules},
		{"JobConfigVersions", testJobConfigVersions},
		{"JobConfigErrors", testJobConfigErrors},
		{"UpdateJobKeepsTheSpec", testUpdateJobKeepsTheSpec},
		{"DeleteJobCascades", testDeleteJobCascades},
		{"HundredThousandOverrides", testHundredThousandOverrides},
		{"UpdatesCompareAndSet", testUpdatesCompareAndSet},
		{"ListUpdatesOldestFirst", testListUpdatesOldestFirst},
		{"MigrationsCompareAndSet", testMigrationsCompareAndSet},
		{"ListMigrationsOldestFirst", testListMigrationsOldestFirst},
		{"Hosts", testHosts},
		{"EventsRoundTrip", testEventsRoundTrip},
		{"EventsOrderAfterLimit", testEventsOrderAfterLimit},
		{"EventsOfOneInstance", testEventsOfOneInstance},
		{"EventsExpire", testEventsExpire},
		{"EventsInvalid", testEventsInvalid},
		{"ManyEvents", testManyEvents},
	}
	for _, c := range cases {
		runCase(t, c.name, open, c.test)
	}
	for _, c := range leaseCases {
		runCase(t, c.name, open, onLeases(c.test))
	}
	for _, c := range auditCases {
		runCase(t, c.name, open, onAudit(c.test))
	}
	for _, c := range fenceCases {
		runCase(t, c.name, open, onFencer(c.test))
	}
}

// runCase runs test as subtest name on a fresh backend from open, and
// closes it when the subtest ends.
func runCase[B interface{ Close() error }](t *testing.T, name string, open func(t *testing.T) B, test func(t *testing.T, b B)) {
	t.Run(name, func(t *testing.T) {
		b := open(t)
		defer func() {
			if err := b.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		test(t, b)
	})
}

// requireIs fails unless err wraps target and, when id is not empty,
// names id.
func requireIs(t testing.TB, err, target error, id string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %q", err, target)
	}
	if id != "" && !strings.Contains(err.Error(), id) {
		t.Fatalf("error %q does not name %q", err, id)
	}
}

func mustNil(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func createJob(t testing.TB, s store.Store, id model.JobID) *model.Job {
	t.Helper()
	j := &model.Job{ID: id, Spec: model.JobSpec{Name: string(id), Instances: 10}}
	mustNil(t, s.CreateJob(context.Background(), j), "CreateJob "+string(id))
	return j
}

func getJob(t testing.TB, s store.Store, id model.JobID) *model.Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), id)
	mustNil(t, err, "GetJob "+string(id))
	return j
}

func testCreateAndGetJob(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("job-1")
	job.Revision = 7 // ignored: a new job always starts at revision 1
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	if job.Revision != 1 {
		t.Fatalf("caller's Revision after create = %d, want 1", job.Revision)
	}
	requireEqual(t, "stored job", getJob(t, s, "job-1"), job)

	dup := FullJob("job-1")
	dup.Spec.Name = "impostor"
	requireIs(t, s.CreateJob(ctx, dup), store.ErrExists, "job-1")
	if dup.Revision != 41 {
		t.Fatalf("failed create changed caller's Revision to %d", dup.Revision)
	}
	requireEqual(t, "job after duplicate create", getJob(t, s, "job-1"), job)
}

func testInvalidJobRejected(t *testing.T, s store.Store) {
	ctx := context.Background()
	checks := map[string]error{
		"CreateJob(nil)":                     s.CreateJob(ctx, nil),
		"CreateJob with empty id":            s.CreateJob(ctx, &model.Job{}),
		"UpdateJob(nil)":                     s.UpdateJob(ctx, nil),
		"UpdateJob with empty id":            s.UpdateJob(ctx, &model.Job{Revision: 1, ConfigVersion: 1}),
		"UpdateJob without a config version": s.UpdateJob(ctx, &model.Job{ID: "j", Revision: 1}),
	}
	for call, err := range checks {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", call, err)
		}
	}
	jobs, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	if len(jobs) != 0 {
		t.Fatalf("invalid creates stored %d jobs", len(jobs))
	}
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	_, err := s.GetJob(ctx, "ghost")
	requireIs(t, err, store.ErrNotFound, "ghost")
	requireIs(t, s.UpdateJob(ctx, &model.Job{ID: "ghost", Revision: 1, ConfigVersion: 1}), store.ErrNotFound, "ghost")
	requireIs(t, s.DeleteJob(ctx, "ghost"), store.ErrNotFound, "ghost")
	_, err = s.ListTasks(ctx, "ghost")
	requireIs(t, err, store.ErrNotFound, "ghost")
	_, err = s.GetTask(ctx, model.TaskID{Job: "ghost", Instance: 3})
	requireIs(t, err, store.ErrNotFound, "ghost/3")

	createJob(t, s, "real")
	_, err = s.GetTask(ctx, model.TaskID{Job: "real", Instance: 3})
	requireIs(t, err, store.ErrNotFound, "real/3")
	tasks, err := s.ListTasks(ctx, "real")
	mustNil(t, err, "ListTasks of a job without tasks")
	if len(tasks) != 0 {
		t.Fatalf("job without tasks lists %d", len(tasks))
	}
	if _, err := s.GetJob(ctx, "rea"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJob of a prefix of an id: %v, want ErrNotFound", err)
	}
}

func testUpdateJobCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("svc")
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")

	next := FullJob("svc")
	next.Revision = 1
	next.Status.State = model.JobKilling
	next.Status.TaskStates = nil
	mustNil(t, s.UpdateJob(ctx, next), "UpdateJob at revision 1")
	if next.Revision != 2 {
		t.Fatalf("caller's Revision after update = %d, want 2", next.Revision)
	}
	requireEqual(t, "updated job", getJob(t, s, "svc"), next)

	for _, rev := range []uint64{0, 1, 3, 1 << 63} {
		stale := FullJob("svc")
		stale.Revision = rev
		stale.Status.Message = "stale write"
		requireIs(t, s.UpdateJob(ctx, stale), store.ErrConflict, "svc")
		if stale.Revision != rev {
			t.Fatalf("rejected update changed caller's Revision %d to %d", rev, stale.Revision)
		}
		requireEqual(t, fmt.Sprintf("job after stale update at %d", rev), getJob(t, s, "svc"), next)
	}

	// The revision handed back is the one to use next.
	got := getJob(t, s, "svc")
	got.Status.Message = "third"
	mustNil(t, s.UpdateJob(ctx, got), "UpdateJob with the read revision")
	if got.Revision != 3 || getJob(t, s, "svc").Status.Message != "third" {
		t.Fatalf("second update: revision %d", got.Revision)
	}
}

func testListJobsOrderedByID(t *testing.T, s store.Store) {
	ctx := context.Background()
	empty, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs on empty store")
	if len(empty) != 0 {
		t.Fatalf("empty store lists %d jobs", len(empty))
	}
	ids := []model.JobID{"b", "a/1", "c", "a", "a0", "B", "a-1"}
	want := map[model.JobID]*model.Job{}
	for i, id := range ids {
		j := FullJob(id)
		j.Spec.Priority = int32(i)
		mustNil(t, s.CreateJob(ctx, j), "CreateJob")
		want[id] = j
	}
	got, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	order := []model.JobID{"B", "a", "a-1", "a/1", "a0", "b", "c"}
	if len(got) != len(order) {
		t.Fatalf("ListJobs returned %d jobs, want %d", len(got), len(order))
	}
	for i, j := range got {
		if j.ID != order[i] {
			t.Fatalf("ListJobs[%d] = %q, want %q (byte order of ids)", i, j.ID, order[i])
		}
		requireEqual(t, "listed job "+string(j.ID), j, want[j.ID])
	}
}

func testDeleteJobRemovesItsTasksOnly(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Ids that share prefixes catch backends that delete by key prefix.
	ids := []model.JobID{"job", "job-2", "job/x", "jo"}
	for _, id := range ids {
		createJob(t, s, id)
		mustNil(t, s.WriteTasks(ctx, newTasks(id, 0, 5)), "WriteTasks "+string(id))
	}
	mustNil(t, s.DeleteJob(ctx, "job"), "DeleteJob")

	_, err := s.GetJob(ctx, "job")
	requireIs(t, err, store.ErrNotFound, "job")
	_, err = s.GetTask(ctx, model.TaskID{Job: "job", Instance: 1})
	requireIs(t, err, store.ErrNotFound, "job/1")
	_, err = s.ListTasks(ctx, "job")
	requireIs(t, err, store.ErrNotFound, "job")
	requireIs(t, s.DeleteJob(ctx, "job"), store.ErrNotFound, "job")
	for _, id := range ids[1:] {
		tasks, err := s.ListTasks(ctx, id)
		mustNil(t, err, "ListTasks "+string(id))
		if len(tasks) != 5 {
			t.Fatalf("deleting %q left %d of %q's 5 tasks", "job", len(tasks), id)
		}
	}
	jobs, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	if len(jobs) != 3 {
		t.Fatalf("after delete ListJobs has %d jobs, want 3", len(jobs))
	}

	// A job created again under the same id starts with no tasks.
	again := createJob(t, s, "job")
	if again.Revision != 1 {
		t.Fatalf("recreated job revision %d", again.Revision)
	}
	tasks, err := s.ListTasks(ctx, "job")
	mustNil(t, err, "ListTasks of recreated job")
	if len(tasks) != 0 {
		t.Fatalf("recreated job inherited %d tasks", len(tasks))
	}
	mustNil(t, s.WriteTasks(ctx, newTasks("job", 0, 1)), "WriteTasks with revision 0 after recreate")
}

// newTasks returns n new tasks of job starting at instance first.
func newTasks(job model.JobID, first, n uint32) []*model.TaskRuntime {
	out := make([]*model.TaskRuntime, n)
	for i := range n {
		out[i] = FullTask(model.TaskID{Job: job, Instance: first + i})
	}
	return out
}

func testNoAliasing(t *testing.T, s store.Store) {
	ctx := context.Background()
	job := FullJob("alias")
	mustNil(t, s.CreateJob(ctx, job), "CreateJob")
	want := Normal(job)

	job.Spec.Labels["team"] = "changed"
	job.Spec.Task.Env["HOME"] = "changed"
	job.Spec.Task.Args[0] = "changed"
	job.Spec.Task.Constraints[0].AllOf[0].Values[0] = "changed"
	job.Spec.Overrides[0].Task.Env["CANARY"] = "changed"
	job.Spec.Overrides[0].Instances[0].To = 1
	job.Status.TaskStates[model.TaskRunning] = 1
	requireEqual(t, "job after caller mutated its copy", getJob(t, s, "alias"), want)

	// Twice: a backend may hand out a cached spec the second time.
	for range 2 {
		got := getJob(t, s, "alias")
		got.Spec.Labels["team"] = "changed"
		got.Spec.Task.Constraints[0].AnyOf[0].Values[1] = "changed"
		got.Spec.Overrides[0].Task.Args[0] = "changed"
		got.Spec.Overrides[1].Instances[0].From = 1
		got.Status.TaskStates[model.TaskFailed] = 77
		requireEqual(t, "job after reader mutated its copy", getJob(t, s, "alias"), want)
		spec, err := s.GetJobConfig(ctx, "alias", want.ConfigVersion)
		mustNil(t, err, "GetJobConfig")
		spec.Overrides[0].Task.Env["CANARY"] = "changed"
		requireEqual(t, "job after a config reader mutated its copy", getJob(t, s, "alias"), want)
	}

	task := FullTask(model.TaskID{Job: "alias", Instance: 4})
	mustNil(t, s.WriteTasks(ctx, []*model.TaskRuntime{task}), "WriteTasks")
	wantTask := Normal(task)
	task.Message = "changed"
	read, err := s.GetTask(ctx, task.ID)
	mustNil(t, err, "GetTask")
	requireEqual(t, "task after caller mutated its copy", read, wantTask)
	read.Host = "changed"
	listed, err := s.ListTasks(ctx, "alias")
	mustNil(t, err, "ListTasks")
	requireEqual(t, "task after reader mutated its copy", listed[0], wantTask)
}
