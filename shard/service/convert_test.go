package service

import (
	"fmt"
	"slices"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/protobuf/proto"
)

func TestSpecWithOverridesRoundTrips(t *testing.T) {
	in := &pb.JobSpec{
		Name: "o", Type: pb.JobType_JOB_TYPE_BATCH, Pool: "/", Instances: 30, MaxAttempts: 3,
		Task: &pb.TaskSpec{Command: "run", Env: map[string]string{"A": "1"}, Resources: &pb.Resources{Cpu: 1, MemMb: 64}, KillGracePeriodSeconds: 10},
		Overrides: []*pb.InstanceOverride{
			{Instances: "0-9,15", Task: &pb.TaskSpec{Env: map[string]string{"SHARD": "low"}, Resources: &pb.Resources{MemMb: 512}}},
			{Instances: "29", Task: &pb.TaskSpec{Command: "other", Args: []string{"-v"},
				Constraints: []*pb.Constraint{{Key: "zone", Op: pb.ConstraintOp_CONSTRAINT_OP_EQUALS, Values: []string{"a"}}}}},
		},
	}
	m := specToModel(in)
	want := [][]model.InstanceRange{{{From: 0, To: 9}, {From: 15, To: 15}}, {{From: 29, To: 29}}}
	for i, o := range m.Overrides {
		if !slices.Equal(o.Instances, want[i]) {
			t.Fatalf("override %d instances %v, want %v", i, o.Instances, want[i])
		}
	}
	// The model's merge sees what the API said.
	x := model.NewOverrideIndex(&m)
	if got := x.TaskFor(&m, 15); got.Resources.MemMB != 512 || got.Resources.MilliCPU != 1000 || got.Env["SHARD"] != "low" || got.Env["A"] != "1" {
		t.Fatalf("instance 15 runs %+v", got)
	}
	if got := x.TaskFor(&m, 29); got.Command != "other" || len(got.Constraints) != 1 || got.KillGrace != 10*time.Second {
		t.Fatalf("instance 29 runs %+v", got)
	}
	if got := x.TaskFor(&m, 20); got.Command != "run" || got.Resources.MemMB != 64 {
		t.Fatalf("instance 20 runs %+v", got)
	}
	if out := specToProto(&m); !proto.Equal(out, in) {
		t.Fatalf("round trip\n%v\nwant\n%v", out, in)
	}
}

func TestUpdateAndEventToProto(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	u := updateToProto(&model.Update{ID: "j.2", Job: "j", FromVersion: 1, ToVersion: 2, BatchSize: 5, State: model.UpdateAborted,
		InstancesTotal: 10, InstancesDone: 4, CreateTime: now, Message: "replaced by j.3"})
	if u.GetState() != pb.UpdateState_UPDATE_STATE_ABORTED || pb.ShortEnumName(u.GetState()) != "ABORTED" ||
		u.GetInstancesDone() != 4 || u.GetCompletionTime() != nil || !u.GetCreateTime().AsTime().Equal(now) {
		t.Fatalf("update %v", u)
	}
	ev := eventToProto(model.Event{Seq: 7, Time: now, Job: "j", Task: &model.TaskRuntime{ID: model.TaskID{Job: "j", Instance: 3}, ConfigVersion: 2}})
	if ev.GetTask().GetInstance() != 3 || ev.GetTask().GetConfigVersion() != 2 || ev.GetSeq() != 7 {
		t.Fatalf("event %v", ev)
	}
	ev = eventToProto(model.Event{Seq: 8, Job: "j", JobStatus: &model.JobStatus{State: model.JobRunning, Update: "j.2"}})
	if ev.GetJob().GetUpdateId() != "j.2" {
		t.Fatalf("event %v", ev)
	}
}

func TestHostToProtoMergesLiveAndRemembered(t *testing.T) {
	s := New(jobmgr.New(jobmgr.Config{Region: "east"}), "test", "")
	seen := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	host := model.Host{ID: "sim/h1", Hostname: "h1", Cluster: "sim", Kind: "sim", State: model.HostUp, Capacity: model.Resources{MilliCPU: 8000}}
	live := &hostmgr.HostView{Host: host, Allocated: model.Resources{MilliCPU: 2000}, Tasks: 2}
	cases := []struct {
		name  string
		live  *hostmgr.HostView
		rec   *model.HostRecord
		state pb.HostState
		tasks uint32
	}{
		{"reported, never stored", live, nil, pb.HostState_HOST_STATE_UP, 2},
		{"reported and drained", live, &model.HostRecord{Host: host, Draining: true, DrainReason: "disk", LastSeen: seen}, pb.HostState_HOST_STATE_DRAINING, 2},
		{"remembered only", nil, &model.HostRecord{Host: host, LastSeen: seen}, pb.HostState_HOST_STATE_DOWN, 0},
		{"remembered and drained, not reported", nil, &model.HostRecord{Host: host, Draining: true, LastSeen: seen}, pb.HostState_HOST_STATE_DOWN, 0},
		{"an allocation on a host not reported", &hostmgr.HostView{Host: model.Host{ID: "sim/h1", State: model.HostDown}, Tasks: 1},
			&model.HostRecord{Host: host, LastSeen: seen}, pb.HostState_HOST_STATE_DOWN, 1},
	}
	for _, tc := range cases {
		h := s.api.hostToProto(tc.live, tc.rec)
		if h.GetState() != tc.state || h.GetTasks() != tc.tasks || h.GetHostname() != "h1" || h.GetRegion() != "east" {
			t.Errorf("%s: %v", tc.name, h)
		}
		if tc.rec != nil && (h.GetDraining() != tc.rec.Draining || !h.GetLastSeen().AsTime().Equal(seen)) {
			t.Errorf("%s: drain and last seen not kept: %v", tc.name, h)
		}
	}
}

// BenchmarkSpecToModelOverrides converts a spec with an override per
// instance; the baseline is one override.
func BenchmarkSpecToModelOverrides(b *testing.B) {
	for _, n := range []int{1, 100_000} {
		spec := &pb.JobSpec{Name: "big", Instances: uint32(n), Task: &pb.TaskSpec{Command: "run", Resources: &pb.Resources{Cpu: 1, MemMb: 1}}}
		for i := range n {
			spec.Overrides = append(spec.Overrides, &pb.InstanceOverride{Instances: fmt.Sprint(i),
				Task: &pb.TaskSpec{Env: map[string]string{"SHARD": fmt.Sprint(i)}}})
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if problems := pb.ValidateJobSpec(spec); len(problems) > 0 {
					b.Fatal(problems)
				}
				m := specToModel(spec)
				model.NewOverrideIndex(&m)
			}
		})
	}
}
