package federation

import (
	"context"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Regions' last_seen: the membership's last contact when it has one,
// else (regions of one process) the time a region answered; a region that
// did not answer and has no membership is left blank.
func TestListRegionsLastSeen(t *testing.T) {
	east := &stateShard{region: "east"}
	west := &stateShard{region: "west", down: true}
	routers, dirs := serveStateRegions(t, east, west)
	before := time.Now().Add(-time.Second)
	resp, err := routers["east"].listRegions(context.Background(), &pb.ListRegionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]*timestamppb.Timestamp{}
	for _, r := range resp.Regions {
		seen[r.Name] = r.LastSeen
	}
	if seen["east"] == nil || seen["east"].AsTime().Before(before) || seen["west"] != nil {
		t.Fatalf("last seen %v", seen)
	}

	contact := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := dirs["east"]
	d.mu.Lock()
	for i := range d.regions {
		d.regions[i].LastSeen = contact
	}
	d.mu.Unlock()
	resp, err = routers["east"].listRegions(context.Background(), &pb.ListRegionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Regions {
		if !r.GetLastSeen().AsTime().Equal(contact) {
			t.Errorf("%s last seen %v, want the membership's %v", r.Name, r.GetLastSeen().AsTime(), contact)
		}
	}
}

// The router serves the regions' health as its history sampled it.
func TestRegionHistory(t *testing.T) {
	routers, dirs := serveStateRegions(t, &stateShard{region: "east"}, &stateShard{region: "west"})
	r := routers["east"]
	if _, err := r.getRegionHistory(context.Background(), &pb.GetRegionHistoryRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("without a history: %v", err)
	}
	h := NewRegionHistory(time.Hour, 10*time.Second)
	r.SetRegionHistory(h)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Every 10 s for two minutes; west is suspect for 30 s, failed for 30 s.
	for i := range 12 {
		switch i {
		case 3:
			dirs["east"].SetHealth("west", "suspect")
		case 6:
			dirs["east"].SetHealth("west", "failed")
		case 9:
			dirs["east"].SetHealth("west", "alive")
		}
		h.Sample(t0.Add(time.Duration(i)*10*time.Second), dirs["east"].Regions())
	}
	resp, err := r.getRegionHistory(context.Background(), &pb.GetRegionHistoryRequest{Since: timestamppb.New(t0.Add(55 * time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Regions) != 2 || resp.Regions[1].Name != "west" || resp.Window.AsDuration() != time.Hour {
		t.Fatalf("regions %v", resp.Regions)
	}
	w := resp.Regions[1]
	// Samples 5..11: suspect, failed ×3, alive ×3.
	want := []string{"suspect", "failed", "failed", "failed", "alive", "alive", "alive"}
	if len(w.Times) != len(want) {
		t.Fatalf("west: %d samples since 55 s, want %d", len(w.Times), len(want))
	}
	for i, h := range want {
		got := map[string]float64{"alive": w.Alive[i], "suspect": w.Suspect[i], "failed": w.Failed[i]}
		if got[h] != 1 || w.Alive[i]+w.Suspect[i]+w.Failed[i] != 1 || w.StepSeconds[i] != 10 {
			t.Fatalf("west sample %d: %v, want %s", i, got, h)
		}
	}
}
