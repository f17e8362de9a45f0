package federation

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// brokenReplicas is a replica store that cannot be read.
type brokenReplicas struct{}

func (brokenReplicas) Load(context.Context, string, int) ([]*pb.Replica, error) {
	return nil, errors.New("replica store unreadable")
}
func (brokenReplicas) Save(context.Context, string, int, []*pb.Replica) error {
	return errors.New("replica store unwritable")
}

// Errors of the failover loop and of the global pass are counted by loop
// (the metric peloton_federation_background_errors_total reads them): a
// failback check that cannot reach a peer, replicas of a failed region
// that cannot be loaded, regions whose state the global pass cannot read.
func TestFailoverAndGlobalPassErrorsAreCounted(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	west := NewRouter(&unimplementedShard{}, NewStaticDirectory("west", []Region{{Name: "west"}, {Name: "east"}}), nil)
	west.SetReplicaStore(&memReplicas{reps: map[string][]*pb.Replica{}})
	g := grpc.NewServer()
	west.Register(g)
	served := make(chan struct{})
	go func() { defer close(served); _ = g.Serve(lis) }()
	defer func() { g.Stop(); <-served; west.Close() }()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	dir := NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "west", Addr: deadAddr}, {Name: "central", Health: "failed"}})
	east := NewRouter(&unimplementedShard{}, dir, nil)
	defer east.Close()
	east.SetReplicaStore(brokenReplicas{})
	f := NewFailover(east, func(bool) {}, slog.New(slog.DiscardHandler), time.Hour)
	f.SetShareSink(func(map[string]policy.RegionShare) {})
	count := func(loop string) uint64 {
		for _, le := range east.BackgroundErrors() {
			if le.Loop == loop {
				return le.Count
			}
		}
		return 0
	}
	ctx := context.Background()

	// West cannot be reached: the failback check fails and is counted.
	f.Tick(ctx)
	if n := count("failover"); n != 1 {
		t.Fatalf("failover errors after a failed failback check = %d, want 1 (%v)", n, east.BackgroundErrors())
	}
	if !f.fenced {
		t.Fatal("the region left its fence without a failback check")
	}

	// West answers: the region unfences, and central's replicas cannot
	// be loaded on every tick; every third tick runs the global pass, whose
	// shards here answer no state.
	dir.mu.Lock()
	for i := range dir.regions {
		if dir.regions[i].Name == "west" {
			dir.regions[i].Addr = lis.Addr().String()
		}
	}
	dir.mu.Unlock()
	for range 3 {
		f.Tick(ctx)
	}
	if f.fenced {
		t.Fatal("the region stayed fenced with west answering")
	}
	if n := count("failover"); n != 1+3 {
		t.Errorf("failover errors = %d, want 4: the failback check and 3 loads of central's replicas (%v)", n, east.BackgroundErrors())
	}
	if n := count("global"); n == 0 {
		t.Errorf("no global pass error counted, though no region answered its state (%v)", east.BackgroundErrors())
	}
}

// createShard answers CreateJob as a shard does for a request id: with
// the id derived from it, so a retry names the job the first attempt
// created; it records the request ids it was sent.
type createShard struct {
	unimplementedShard
	mu   sync.Mutex
	ids  []string
	jobs map[string]bool
}

func (s *createShard) CreateJob(_ context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, req.GetRequestId())
	id := "random-" + strconv.Itoa(len(s.ids))
	if req.GetRequestId() != "" {
		id = pb.RequestJobID(req.GetRequestId(), 0, req.GetSpec())
	}
	if s.jobs == nil {
		s.jobs = map[string]bool{}
	}
	s.jobs[id] = true
	return &pb.CreateJobResponse{Job: &pb.Job{Id: id, Spec: req.GetSpec()}}, nil
}

func (s *createShard) GetJob(_ context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.jobs[req.GetId()] {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetId())
	}
	return &pb.GetJobResponse{Job: &pb.Job{Id: req.GetId()}}, nil
}

func (s *createShard) DeleteJob(_ context.Context, req *pb.DeleteJobRequest) (*pb.DeleteJobResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.jobs[req.GetId()] {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetId())
	}
	delete(s.jobs, req.GetId())
	return &pb.DeleteJobResponse{}, nil
}

// saveFailsOnce is a replica store whose first save of central's list
// fails.
type saveFailsOnce struct {
	*memReplicas
	failed bool
}

func (s *saveFailsOnce) Save(ctx context.Context, owner string, part int, reps []*pb.Replica) error {
	if owner == "central" && !s.failed {
		s.failed = true
		return errors.New("replica store unwritable")
	}
	return s.memReplicas.Save(ctx, owner, part, reps)
}

// A relocation whose record could not be saved is tried again on the next
// tick with the same request id, so it names the job the first attempt
// created rather than a second copy; once recorded, it is not tried again.
func TestRelocationIsSafeToRepeat(t *testing.T) {
	shard := &createShard{}
	dir := NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "central", Health: "failed"}})
	east := NewRouter(shard, dir, nil)
	defer east.Close()
	st := &saveFailsOnce{memReplicas: &memReplicas{reps: map[string][]*pb.Replica{"central": {{
		OwnerRegion: "central",
		Job: &pb.Job{Id: "0190a0b2-5d2c-7000-8000-000000000001", Spec: &pb.JobSpec{Name: "web", Instances: 2,
			Failover: &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_ANY},
			Task:     &pb.TaskSpec{Command: "x", Resources: &pb.Resources{Cpu: 1}}}},
	}}}}}
	east.SetReplicaStore(st)
	f := NewFailover(east, func(bool) {}, slog.New(slog.DiscardHandler), time.Hour)
	ctx := context.Background()
	for range 3 {
		f.relocate(ctx, "central")
	}
	if len(shard.ids) != 2 || shard.ids[0] == "" || shard.ids[0] != shard.ids[1] {
		t.Fatalf("creates sent with request ids %q, want two with the same id (the first relocation was not recorded)", shard.ids)
	}
	reps, _ := east.replicas.list(ctx, "central")
	want := pb.RequestJobID(shard.ids[0], 0, nil)
	if got := reps[0].GetRelocatedJobId(); got == "" || got[:8] != want[:8] || reps[0].GetRelocatedRegion() != "east" {
		t.Errorf("relocation recorded as %q in %q, want the job derived from the request id in east", got, reps[0].GetRelocatedRegion())
	}
}

// Deleting a job has its replica region forget the replica, unless the
// replica records a relocation, which the owner's failback needs.
func TestDeletedJobsLeaveNoReplica(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	west := NewRouter(&unimplementedShard{}, NewStaticDirectory("west", []Region{{Name: "west"}, {Name: "east"}}), nil)
	held := &memReplicas{reps: map[string][]*pb.Replica{"east": {
		{OwnerRegion: "east", RelocatedRegion: "west", RelocatedJobId: "copy", Job: &pb.Job{Id: "moved"}},
	}}}
	west.SetReplicaStore(held)
	g := grpc.NewServer()
	west.Register(g)
	served := make(chan struct{})
	go func() { defer close(served); _ = g.Serve(lis) }()
	defer func() { g.Stop(); <-served; west.Close() }()

	shard := &createShard{jobs: map[string]bool{"moved": true}}
	east := NewRouter(shard, NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "west", Addr: lis.Addr().String()}}), nil)
	defer east.Close()
	east.SetReplicaStore(&memReplicas{reps: map[string][]*pb.Replica{}})
	ctx := context.Background()
	resp, err := east.Jobs().CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "web", Region: "east", Instances: 1,
		Task: &pb.TaskSpec{Command: "x", Resources: &pb.Resources{Cpu: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	heldIDs := func() []string {
		list, err := west.replicas.list(ctx, "east")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range list {
			ids = append(ids, r.GetJob().GetId())
		}
		return ids
	}
	if got := heldIDs(); !slices.Contains(got, id) {
		t.Fatalf("west holds %v, want the replica of %s", got, id)
	}
	for _, job := range []string{id, "moved"} {
		if _, err := east.Jobs().DeleteJob(ctx, &pb.DeleteJobRequest{Id: job}); err != nil {
			t.Fatal(err)
		}
	}
	if got := heldIDs(); !slices.Equal(got, []string{"moved"}) {
		t.Fatalf("after both jobs were deleted west holds %v, want only the relocated one", got)
	}
	if errs := east.BackgroundErrors(); len(errs) != 0 {
		t.Errorf("errors reported: %v", errs)
	}
}
