package federation

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
)

// flakyDrills keeps drill reports in memory; saves fail once failing is set.
type flakyDrills struct {
	mu      sync.Mutex
	list    []*pb.Drill
	failing bool
}

func (s *flakyDrills) LoadDrills(context.Context) ([]*pb.Drill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*pb.Drill(nil), s.list...), nil
}

func (s *flakyDrills) SaveDrills(_ context.Context, l []*pb.Drill) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing {
		return errors.New("disk full")
	}
	s.list = l
	return nil
}

func (s *flakyDrills) setFailing(v bool) {
	s.mu.Lock()
	s.failing = v
	s.mu.Unlock()
}

func (s *flakyDrills) state(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.list {
		if d.Id == id {
			return d.State + ": " + d.Message
		}
	}
	return ""
}

// isolationLog records what a drill asked of the region.
type isolationLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *isolationLog) Isolate(context.Context) error { l.add("isolate"); return nil }
func (l *isolationLog) Heal(context.Context) error    { l.add("heal"); return nil }
func (l *isolationLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}
func (l *isolationLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == 0 {
		return ""
	}
	return l.calls[len(l.calls)-1]
}

// serveWest serves region west's router over gRPC, isolating itself
// with iso, until the test ends, and returns its address.
func serveWest(t *testing.T, iso Isolation) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	west := NewRouter(&unimplementedShard{}, NewStaticDirectory("west", []Region{{Name: "west"}, {Name: "east"}}), nil)
	west.SetDrills(&flakyDrills{}, iso)
	g := grpc.NewServer()
	west.Register(g)
	served := make(chan struct{})
	go func() { defer close(served); _ = g.Serve(lis) }()
	t.Cleanup(func() { g.Stop(); <-served; west.Close() })
	return lis.Addr().String()
}

// A drill runs under the router's context: Close stops it, heals the
// region and records it as cut short; a report that cannot be saved is
// counted, not dropped.
func TestDrillStopsWithRouterAndReportsSaveErrors(t *testing.T) {
	iso := &isolationLog{}
	dir := NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "west", Addr: serveWest(t, iso)}})
	east := NewRouter(&unimplementedShard{}, dir, nil)
	reports := &flakyDrills{}
	east.SetDrills(reports, nil)
	resp, err := east.StartDrill(context.Background(), &pb.StartDrillRequest{Region: "west", DurationSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetDrill().GetId()
	deadline := time.Now().Add(10 * time.Second)
	for iso.last() != "isolate" {
		if time.Now().After(deadline) {
			t.Fatal("the drill never isolated west")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The region is never declared failed here: the drill waits. Stop the
	// router under it.
	closed := make(chan struct{})
	go func() { defer close(closed); east.Close() }()
	select {
	case <-closed:
	case <-time.After(drillCleanup + 5*time.Second):
		t.Fatal("Close did not wait for the drill to stop")
	}
	if got := iso.last(); got != "heal" {
		t.Errorf("after a drill cut short, west's last isolation call = %q, want heal", got)
	}
	if got, want := reports.state(id), "failed: the server stopped during the drill"; got != want {
		t.Errorf("report = %q, want %q", got, want)
	}
	if n := east.BackgroundErrors(); len(n) != 0 {
		t.Errorf("background errors = %v, want none", n)
	}

	// A second drill whose report cannot be saved: the error is counted.
	east2 := NewRouter(&unimplementedShard{}, dir, nil)
	reports2 := &flakyDrills{}
	east2.SetDrills(reports2, nil)
	if _, err := east2.StartDrill(context.Background(), &pb.StartDrillRequest{Region: "west", DurationSeconds: 600}); err != nil {
		t.Fatal(err)
	}
	reports2.setFailing(true)
	east2.Close()
	got := east2.BackgroundErrors()
	if len(got) != 1 || got[0].Loop != "drill" || got[0].Count == 0 {
		t.Errorf("background errors = %v, want the drill's failed save", got)
	}
}

// slowIsolation isolates, then holds the answer until the caller gives
// up: the isolation landed but its answer is lost.
type slowIsolation struct {
	isolationLog
	isolated chan struct{}
}

func (l *slowIsolation) Isolate(ctx context.Context) error {
	l.add("isolate")
	close(l.isolated)
	<-ctx.Done()
	return ctx.Err()
}

// A drill stopped while its isolating call is in flight, the isolation
// landed but its answer not back, heals the region and reports that the
// server stopped: the region is never left cut off.
func TestDrillStoppedDuringIsolationHeals(t *testing.T) {
	iso := &slowIsolation{isolated: make(chan struct{})}
	east := NewRouter(&unimplementedShard{}, NewStaticDirectory("east", []Region{{Name: "east"}, {Name: "west", Addr: serveWest(t, iso)}}), nil)
	reports := &flakyDrills{}
	east.SetDrills(reports, nil)
	resp, err := east.StartDrill(context.Background(), &pb.StartDrillRequest{Region: "west", DurationSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-iso.isolated:
	case <-time.After(10 * time.Second):
		t.Fatal("the drill never isolated west")
	}
	east.Close()
	if got := iso.last(); got != "heal" {
		t.Errorf("west's last isolation call = %q, want heal", got)
	}
	if got, want := reports.state(resp.GetDrill().GetId()), "failed: the server stopped during the drill"; got != want {
		t.Errorf("report = %q, want %q", got, want)
	}
}
