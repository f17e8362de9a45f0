package federation

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// countingShard is a shard with a few jobs that counts the reads the
// failover shell makes, and streams the events a test sends it.
type countingShard struct {
	unimplementedShard
	mu     sync.Mutex
	jobs   map[string]uint32 // job → succeeded instances
	reads  map[string]int    // method → calls
	events chan *pb.Event
}

func (s *countingShard) count(m string) {
	s.mu.Lock()
	s.reads[m]++
	s.mu.Unlock()
}

func (s *countingShard) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.reads
	s.reads = map[string]int{}
	return out
}

func (s *countingShard) ListJobs(context.Context, *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	s.count("ListJobs")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &pb.ListJobsResponse{}
	for id := range s.jobs {
		out.Jobs = append(out.Jobs, &pb.Job{Id: id})
	}
	return out, nil
}

func (s *countingShard) GetJob(_ context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	s.count("GetJob")
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.jobs[req.Id]
	if !ok {
		return nil, status.Error(codes.NotFound, req.Id)
	}
	return &pb.GetJobResponse{Job: &pb.Job{Id: req.Id, Spec: &pb.JobSpec{Instances: 10}, ConfigVersion: 1,
		Status: &pb.JobStatus{TaskStates: map[string]uint32{"SUCCEEDED": n}}}}, nil
}

func (s *countingShard) ListTasks(_ context.Context, req *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	s.count("ListTasks")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &pb.ListTasksResponse{}
	for i := uint32(0); i < s.jobs[req.JobId]; i++ {
		out.Tasks = append(out.Tasks, &pb.Task{Instance: i})
	}
	return out, nil
}

func (s *countingShard) Watch(_ *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.Event]) error {
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case ev := <-s.events:
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

// memReplicas is an in-memory ReplicaStore: each owner's replicas in one
// list, of which Load and Save read and replace one part.
type memReplicas struct {
	mu   sync.Mutex
	reps map[string][]*pb.Replica
	puts int
}

func (m *memReplicas) Load(_ context.Context, owner string, part int) ([]*pb.Replica, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// As a real store, it hands out copies: a caller's changes are not
	// kept until saved.
	var out []*pb.Replica
	for _, r := range m.reps[owner] {
		if ReplicaPart(r.GetJob().GetId()) == part {
			out = append(out, proto.Clone(r).(*pb.Replica))
		}
	}
	return out, nil
}

func (m *memReplicas) Save(_ context.Context, owner string, part int, reps []*pb.Replica) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := slices.DeleteFunc(slices.Clone(m.reps[owner]), func(r *pb.Replica) bool { return ReplicaPart(r.GetJob().GetId()) == part })
	for _, r := range reps {
		kept = append(kept, proto.Clone(r).(*pb.Replica))
	}
	m.reps[owner] = kept
	m.puts++
	return nil
}

func (m *memReplicas) saves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.puts
}

// Replication reads nothing while nothing changes or no region can hold
// replicas, and reads only the jobs that changed otherwise.
func TestProgressIsProportionalToChanges(t *testing.T) {
	shard := &countingShard{jobs: map[string]uint32{"a": 3, "b": 0, "c": 10}, reads: map[string]int{}, events: make(chan *pb.Event)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "west", Addr: lis.Addr().String()}})
	dir.SetHealth("west", "failed")
	east := NewRouter(shard, dir, nil)
	east.SetReplicaStore(&memReplicas{reps: map[string][]*pb.Replica{}})
	defer east.Close()
	west := NewRouter(&unimplementedShard{}, NewStaticDirectory("west", []Region{{Name: "west"}, {Name: "east"}}), nil)
	held := &memReplicas{reps: map[string][]*pb.Replica{}}
	west.SetReplicaStore(held)
	g := grpc.NewServer()
	west.Register(g)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()

	f := NewFailover(east, func(bool) {}, slog.New(slog.DiscardHandler), time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.followChanges(ctx) }()
	defer func() { cancel(); <-done }()

	// No region to push to: nothing is read, however often.
	for range 10 {
		f.syncProgress(ctx)
	}
	if got := shard.take(); len(got) != 0 {
		t.Fatalf("with no replica region, replication read %v", got)
	}

	// A replica region: every job is pushed once.
	dir.SetHealth("west", "alive")
	f.syncProgress(ctx)
	if got := shard.take(); got["ListJobs"] != 1 || got["GetJob"] != 3 || got["ListTasks"] != 3 {
		t.Fatalf("first push: %v, want one listing and each of 3 jobs read once", got)
	}
	if held.saves() != 3 {
		t.Fatalf("replicas saved %d times, want 3", held.saves())
	}
	for range 10 {
		f.syncProgress(ctx)
	}
	if got := shard.take(); len(got) != 0 {
		t.Fatalf("with nothing changed, replication read %v", got)
	}

	// One job changes: only it is read.
	shard.mu.Lock()
	shard.jobs["a"] = 4
	shard.mu.Unlock()
	shard.events <- &pb.Event{JobId: "a"}
	waitChanged(t, f, "a")
	f.syncProgress(ctx)
	if got := shard.take(); got["ListJobs"] != 0 || got["GetJob"] != 1 || got["ListTasks"] != 1 {
		t.Fatalf("after one job changed: %v, want that job read once", got)
	}
	reps, _ := held.Load(ctx, "east", ReplicaPart("a"))
	found := false
	for _, rep := range reps {
		if rep.GetJob().GetId() == "a" {
			found = true
			if len(rep.GetSucceeded()) != 4 {
				t.Fatalf("replica of a has %d succeeded instances, want 4", len(rep.GetSucceeded()))
			}
		}
	}
	if !found {
		t.Fatal("no replica of a held")
	}
	// An event that changed nothing the replica keeps: read, not pushed.
	shard.events <- &pb.Event{JobId: "b"}
	waitChanged(t, f, "b")
	saves := held.saves()
	f.syncProgress(ctx)
	if got := shard.take(); got["GetJob"] != 1 || got["ListTasks"] != 0 || held.saves() != saves {
		t.Fatalf("after an event of an unchanged job: %v, %d saves", got, held.saves()-saves)
	}
}

// waitChanged waits until the failover shell has seen an event of job.
func waitChanged(t *testing.T, f *Failover, job string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.progress.mu.Lock()
		seen := f.progress.dirty[job]
		f.progress.mu.Unlock()
		if seen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event of job %s seen", job)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
