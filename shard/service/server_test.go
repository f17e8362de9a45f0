package service

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// testShard is the API of a shard on the in-memory store and two simulated
// hosts, with a fake clock that the test advances.
type testShard struct {
	t   *testing.T
	s   *Server
	e   *jobmgr.Engine
	clk *clock.Fake
}

func newTestShard(t *testing.T) *testShard {
	t.Helper()
	return newTestShardWith(t, jobmgr.Limits{})
}

// newTestShardWith is newTestShard with the given limits.
func newTestShardWith(t *testing.T, limits jobmgr.Limits) *testShard {
	t.Helper()
	// The fake clock starts at the real time: memstore expires stored
	// events by the real clock.
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	p, err := sim.New(sim.Config{Cluster: "sim", Clock: clk, DefaultDuration: time.Hour, Hosts: []sim.HostSpec{
		{Name: "h1", Capacity: model.Resources{MilliCPU: 8000, MemMB: 8192}},
		{Name: "h2", Capacity: model.Resources{MilliCPU: 8000, MemMB: 8192}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := jobmgr.New(jobmgr.Config{Region: "east", Store: memstore.New(), Plugins: []hostmgr.Plugin{p}, Clock: clk, Limits: limits})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	})
	<-e.Ready()
	return &testShard{t: t, s: New(e, "test", ""), e: e, clk: clk}
}

// until advances the clock a loop interval at a time until cond holds.
func (ts *testShard) until(what string, cond func() bool) {
	ts.t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		ts.clk.Advance(100 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	ts.t.Fatalf("never reached: %s", what)
}

// running waits until n tasks of a job run.
func (ts *testShard) running(id string, n int) {
	ts.t.Helper()
	ts.until(fmt.Sprintf("%d tasks of %s run", n, id), func() bool {
		resp, err := ts.s.ListTasks(context.Background(), &pb.ListTasksRequest{JobId: id, States: []pb.TaskState{pb.TaskState_TASK_STATE_RUNNING}})
		return err == nil && len(resp.GetTasks()) == n
	})
}

// create creates a job of n instances and returns its id.
func (ts *testShard) create(n uint32) string {
	ts.t.Helper()
	created, err := ts.s.CreateJob(context.Background(), &pb.CreateJobRequest{Spec: jobSpec(n)})
	if err != nil {
		ts.t.Fatal(err)
	}
	if created.GetJob().GetConfigVersion() != 1 {
		ts.t.Fatalf("a new job is at config version %d", created.GetJob().GetConfigVersion())
	}
	return created.GetJob().GetId()
}

func jobSpec(instances uint32) *pb.JobSpec {
	return &pb.JobSpec{Name: "svc", Instances: instances, Task: &pb.TaskSpec{Command: "run", Resources: &pb.Resources{Cpu: 1, MemMb: 64}}}
}

func wantCode(t *testing.T, what string, err error, code codes.Code, fragments ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
	for _, f := range fragments {
		if !strings.Contains(status.Convert(err).Message(), f) {
			t.Fatalf("%s: %q lacks %q", what, status.Convert(err).Message(), f)
		}
	}
}

func TestUpdateJobThroughTheAPI(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	id := ts.create(4)
	ts.running(id, 4)

	next := jobSpec(4)
	next.Overrides = []*pb.InstanceOverride{{Instances: "0-1", Task: &pb.TaskSpec{Env: map[string]string{"SHARD": "low"}}}}
	up, err := ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Spec: next, BatchSize: proto.Uint32(2)})
	if err != nil {
		t.Fatal(err)
	}
	u := up.GetUpdate()
	if u.GetId() != id+".2" || u.GetFromVersion() != 1 || u.GetToVersion() != 2 || u.GetBatchSize() != 2 || u.GetJobId() != id {
		t.Fatalf("update %v", u)
	}
	ts.until("the update succeeds", func() bool {
		got, err := ts.s.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: u.GetId()})
		return err == nil && got.GetUpdate().GetState() == pb.UpdateState_UPDATE_STATE_SUCCEEDED
	})
	job, err := ts.s.GetJob(ctx, &pb.GetJobRequest{Id: id})
	if err != nil || job.GetJob().GetConfigVersion() != 2 || job.GetJob().GetStatus().GetUpdateId() != u.GetId() {
		t.Fatalf("job after the update: %v %v", job, err)
	}
	tasks, err := ts.s.ListTasks(ctx, &pb.ListTasksRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks.GetTasks() {
		if task.GetConfigVersion() != 2 {
			t.Errorf("task %d on config version %d", task.GetInstance(), task.GetConfigVersion())
		}
	}

	cfg, err := ts.s.GetJobConfig(ctx, &pb.GetJobConfigRequest{JobId: id})
	if err != nil || cfg.GetVersion() != 2 || len(cfg.GetVersions()) != 2 || cfg.GetSpec().GetOverrides()[0].GetInstances() != "0-1" {
		t.Fatalf("current config: %v %v", cfg, err)
	}
	cfg, err = ts.s.GetJobConfig(ctx, &pb.GetJobConfigRequest{JobId: id, Version: 1})
	if err != nil || cfg.GetVersion() != 1 || len(cfg.GetSpec().GetOverrides()) != 0 {
		t.Fatalf("config version 1: %v %v", cfg, err)
	}
	_, err = ts.s.GetJobConfig(ctx, &pb.GetJobConfigRequest{JobId: id, Version: 9})
	wantCode(t, "a config version never stored", err, codes.NotFound)

	list, err := ts.s.ListUpdates(ctx, &pb.ListUpdatesRequest{JobId: id})
	if err != nil || len(list.GetUpdates()) != 1 || list.GetUpdates()[0].GetId() != u.GetId() {
		t.Fatalf("updates: %v %v", list, err)
	}
}

func TestAbortUpdate(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	id := ts.create(4)
	// Instances that do not run yet take a new config at once: the update
	// would be over in the pass that stores it, before UpdateJob answers.
	// Running and paused, it still rolls when it is aborted.
	ts.running(id, 4)
	next := jobSpec(4)
	next.Task.Args = []string{"-v"}
	up, err := ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Spec: next, BatchSize: proto.Uint32(1), StartPaused: true})
	if err != nil {
		t.Fatal(err)
	}
	ab, err := ts.s.AbortUpdate(ctx, &pb.AbortUpdateRequest{UpdateId: up.GetUpdate().GetId()})
	if err != nil || ab.GetUpdate().GetState() != pb.UpdateState_UPDATE_STATE_ABORTED {
		t.Fatalf("abort: %v %v", ab, err)
	}
}

func TestUpdateRequestsRejected(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	id := ts.create(4)

	bad := jobSpec(4)
	bad.Overrides = []*pb.InstanceOverride{
		{Instances: "0-2", Task: &pb.TaskSpec{Args: []string{"a"}}},
		{Instances: "2", Task: &pb.TaskSpec{Args: []string{"b"}}},
	}
	_, err := ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Spec: bad})
	wantCode(t, "overlapping overrides", err, codes.InvalidArgument, "overrides[0].instances: instance 2 also named by overrides[1]",
		"overrides[1].instances: instance 2 also named by overrides[0]")
	_, err = ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: "nope", Spec: jobSpec(1)})
	wantCode(t, "unknown job", err, codes.NotFound)
	_, err = ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{Spec: jobSpec(1)})
	wantCode(t, "no job id", err, codes.InvalidArgument, "job_id")
	_, err = ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id})
	wantCode(t, "no spec", err, codes.InvalidArgument, "spec")
	_, err = ts.s.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: "no-version"})
	wantCode(t, "malformed update id", err, codes.InvalidArgument, "update_id")
	_, err = ts.s.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: id + ".7"})
	wantCode(t, "unknown update", err, codes.NotFound)
	_, err = ts.s.AbortUpdate(ctx, &pb.AbortUpdateRequest{UpdateId: "nope.2"})
	wantCode(t, "abort of an unknown update", err, codes.NotFound)
	_, err = ts.s.ListEvents(ctx, &pb.ListEventsRequest{JobId: "nope"})
	wantCode(t, "events of an unknown job", err, codes.NotFound)
}

func TestListEvents(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	id := ts.create(2)
	var all []*pb.Event
	ts.until("both tasks' RUNNING events are stored", func() bool {
		resp, err := ts.s.ListEvents(ctx, &pb.ListEventsRequest{JobId: id})
		if err != nil {
			t.Fatal(err)
		}
		all = resp.GetEvents()
		running := 0
		for _, ev := range all {
			if ev.GetTask().GetState() == pb.TaskState_TASK_STATE_RUNNING {
				running++
			}
		}
		return running == 2
	})
	jobEvents := 0
	for i, ev := range all {
		if i > 0 && ev.GetSeq() <= all[i-1].GetSeq() {
			t.Fatalf("events out of order: %v", all)
		}
		if ev.GetJob() != nil {
			jobEvents++
		}
	}
	if jobEvents == 0 {
		t.Fatalf("no job events among %v", all)
	}
	one := uint32(1)
	resp, err := ts.s.ListEvents(ctx, &pb.ListEventsRequest{JobId: id, Instance: &one})
	if err != nil || len(resp.GetEvents()) == 0 {
		t.Fatalf("instance 1: %v %v", resp, err)
	}
	for _, ev := range resp.GetEvents() {
		if ev.GetTask().GetInstance() != 1 || ev.GetJob() != nil {
			t.Fatalf("instance 1's events hold %v", ev)
		}
	}
	page, err := ts.s.ListEvents(ctx, &pb.ListEventsRequest{JobId: id, Limit: 2})
	if err != nil || len(page.GetEvents()) != 2 || !page.GetMore() {
		t.Fatalf("first page: %v %v", page, err)
	}
	rest, err := ts.s.ListEvents(ctx, &pb.ListEventsRequest{JobId: id, AfterSeq: page.GetEvents()[1].GetSeq()})
	if err != nil || len(rest.GetEvents()) != len(all)-2 || rest.GetMore() {
		t.Fatalf("the rest after %d: %d events, want %d (%v)", page.GetEvents()[1].GetSeq(), len(rest.GetEvents()), len(all)-2, err)
	}
}

func TestDrainHosts(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	ts.until("both hosts are reported", func() bool {
		resp, err := ts.s.ListHosts(ctx, &pb.ListHostsRequest{})
		return err == nil && len(resp.GetHosts()) == 2
	})
	d, err := ts.s.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/h1", Reason: "disk swap"})
	if err != nil {
		t.Fatal(err)
	}
	h := d.GetHost()
	// Nothing runs there, so the drain is over at once: DRAINED.
	if h.GetId() != "sim/h1" || !h.GetDraining() || h.GetDrainReason() != "disk swap" || h.GetState() != pb.HostState_HOST_STATE_DRAINED ||
		h.GetRegion() != "east" || h.GetDrainTime() == nil {
		t.Fatalf("drained host %v", h)
	}
	resp, err := ts.s.ListHosts(ctx, &pb.ListHostsRequest{HostId: "sim/h1"})
	if err != nil || len(resp.GetHosts()) != 1 || resp.GetHosts()[0].GetState() != pb.HostState_HOST_STATE_DRAINED || resp.GetHosts()[0].GetLastSeen() == nil {
		t.Fatalf("host list after the drain: %v %v", resp, err)
	}
	// A drained host takes no new work.
	id := ts.create(4)
	ts.running(id, 4)
	tasks, _ := ts.s.ListTasks(ctx, &pb.ListTasksRequest{JobId: id})
	for _, task := range tasks.GetTasks() {
		if task.GetHost() != "h2" {
			t.Errorf("task %d placed on %s, a drained host", task.GetInstance(), task.GetHost())
		}
	}
	u, err := ts.s.UndrainHost(ctx, &pb.UndrainHostRequest{HostId: "sim/h1"})
	if err != nil || u.GetHost().GetDraining() || u.GetHost().GetState() != pb.HostState_HOST_STATE_UP || u.GetHost().GetDrainReason() != "" {
		t.Fatalf("undrain: %v %v", u, err)
	}

	_, err = ts.s.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/nope"})
	wantCode(t, "unknown host", err, codes.NotFound)
	_, err = ts.s.DrainHost(ctx, &pb.DrainHostRequest{HostId: "h1"})
	wantCode(t, "a hostname for an id", err, codes.InvalidArgument, "host_id", "<cluster>/<name>")
	_, err = ts.s.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/h1", Region: "west"})
	wantCode(t, "another region", err, codes.InvalidArgument, "region")
	_, err = ts.s.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/h1", Reason: strings.Repeat("x", MaxDrainReason+1)})
	wantCode(t, "a long reason", err, codes.InvalidArgument, "reason")
}
