package federation

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"google.golang.org/grpc"
)

// brokenReplicas is a replica store that cannot be read.
type brokenReplicas struct{}

func (brokenReplicas) Load(context.Context, string) ([]*pb.Replica, error) {
	return nil, errors.New("replica store unreadable")
}
func (brokenReplicas) Save(context.Context, string, []*pb.Replica) error {
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
