package service

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestTaskLargerThanAnyHostIsRefused(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	ts.until("the hosts are known", func() bool { return len(ts.e.Hosts().Shapes()) > 0 })

	big := jobSpec(1)
	big.Task.Resources.Cpu = 9
	_, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: big})
	wantCode(t, "9 cores on 8-core hosts", err, codes.InvalidArgument, "task.resources.cpu", "larger than any host: the largest has 8 cores")

	over := jobSpec(2)
	over.Overrides = []*pb.InstanceOverride{{Instances: "1", Task: &pb.TaskSpec{Resources: &pb.Resources{MemMb: 9000}}}}
	_, err = ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: over})
	wantCode(t, "an override asking for more memory than any host", err, codes.InvalidArgument,
		"overrides[0].task.resources.mem_mb", "the largest has 8192 MiB")

	huge := jobSpec(1)
	huge.Task.Resources.Cpu = 1e308
	_, err = ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: huge})
	wantCode(t, "cpu 1e308", err, codes.InvalidArgument, "task.resources.cpu", "at most")

	id := ts.create(1)
	up := jobSpec(1)
	up.Task.Resources.Cpu = 16
	_, err = ts.s.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Spec: up})
	wantCode(t, "an update to 16 cores", err, codes.InvalidArgument, "task.resources.cpu", "larger than any host")
}

func TestPendingTasksPerPoolAreCapped(t *testing.T) {
	ts := newTestShardWith(t, jobmgr.Limits{PendingTasksPerPool: 100, InstancesPerJob: 500})
	ctx := context.Background()

	_, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: jobSpec(501)})
	wantCode(t, "more instances than the region allows", err, codes.InvalidArgument, "instances", "limit of 500 per job")

	// Two 8-core hosts run 16 one-core tasks; the other 44 wait.
	id := ts.create(60)
	ts.running(id, 16)
	// The count of waiting tasks is redone once it is a second old: by the
	// loop at the end of a pass, or by a create that finds the loop idle
	// (one that finds it in a pass answers from the count before). A
	// refused create changes nothing, so it is asked again until the
	// count is the new one.
	ts.clk.Advance(time.Second)
	for range 2000 {
		_, err = ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: jobSpec(57)})
		if strings.Contains(status.Convert(err).Message(), "44 tasks wait") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wantCode(t, "a job past the pool's pending limit", err, codes.ResourceExhausted, "pool /", "44 tasks wait", "limit of 100")
	ts.create(56)
	_, err = ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: jobSpec(1)})
	wantCode(t, "one more task", err, codes.ResourceExhausted, "limit of 100")
}
