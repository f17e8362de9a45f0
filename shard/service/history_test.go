package service

import (
	"context"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestPoolDemandAndCounts: 40 non-preemptible tasks of 1 cpu in a pool
// with a reservation of 10 cpu. The pool shows its demand capped at the
// reservation, the 40 cpu its tasks ask for, and how many of them wait and
// run, as does its parent; the history serves the same figures, sample by
// sample.
func TestPoolDemandAndCounts(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	if _, err := ts.s.CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: "/team", Reservation: &pb.Resources{Cpu: 10, MemMb: 4096}}}); err != nil {
		t.Fatal(err)
	}
	spec := jobSpec(40)
	spec.Pool = "/team"
	if _, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	ts.until("10 tasks run and 30 wait", func() bool {
		resp, err := ts.s.GetPool(ctx, &pb.GetPoolRequest{Path: "/team"})
		return err == nil && resp.Pool.RunningTasks == 10 && resp.Pool.PendingTasks == 30
	})
	resp, err := ts.s.ListPools(ctx, &pb.ListPoolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Pools {
		cpu := p.Resources[0]
		if cpu.Name != "cpu" || cpu.UncappedDemand != 40 || cpu.Demand != 10 || p.PendingTasks != 30 || p.RunningTasks != 10 {
			t.Fatalf("pool %s cpu: demand %v, uncapped demand %v, %d pending, %d running; want 10, 40, 30, 10",
				p.Path, cpu.Demand, cpu.UncappedDemand, p.PendingTasks, p.RunningTasks)
		}
	}

	_, err = ts.s.GetPoolHistory(ctx, &pb.GetPoolHistoryRequest{Path: "/"})
	wantCode(t, "history without a PoolHistory", err, codes.FailedPrecondition)
	h := NewPoolHistory(time.Hour, 10*time.Second)
	ts.s.WithHistory(h)
	t0 := ts.clk.Now().Truncate(10 * time.Second)
	for i := range 3 {
		h.Sample(t0.Add(time.Duration(i)*10*time.Second), ts.e)
	}
	got, err := ts.s.GetPoolHistory(ctx, &pb.GetPoolHistoryRequest{Path: "/team"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Times) != 3 || got.Times[0] != float64(t0.Unix()) || got.StepSeconds[2] != 10 || got.Region != "east" {
		t.Fatalf("history: times %v, steps %v, region %q", got.Times, got.StepSeconds, got.Region)
	}
	hc := got.Resources[0]
	if hc.Name != "cpu" || hc.UncappedDemand[2] != 40 || hc.Demand[2] != 10 || hc.Reservation[0] != 10 || hc.Limit[0] != -1 ||
		got.PendingTasks[1] != 30 || got.RunningTasks[1] != 10 {
		t.Fatalf("history of cpu: %+v, pending %v, running %v", hc, got.PendingTasks, got.RunningTasks)
	}
	since, err := ts.s.GetPoolHistory(ctx, &pb.GetPoolHistoryRequest{Path: "/team", Since: timestamppb.New(t0.Add(15 * time.Second))})
	if err != nil || len(since.Times) != 2 {
		t.Fatalf("since: %v, %v", since.GetTimes(), err)
	}
	// The memory bound the README gives: 420,528 bytes a pool at the
	// default window (a day, every 10 s), whatever the samples.
	def := NewPoolHistory(0, 0)
	def.Sample(t0, ts.e)
	if def.Bytes() != 2*420_528 {
		t.Fatalf("two pools take at most %d bytes at the default window", def.Bytes())
	}
	_, err = ts.s.GetPoolHistory(ctx, &pb.GetPoolHistoryRequest{Path: "/nowhere"})
	wantCode(t, "unknown pool", err, codes.NotFound)
}
