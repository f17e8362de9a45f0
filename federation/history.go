package federation

import (
	"context"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/internal/timeseries"
	"github.com/peloton-federated/peloton/shard/clock"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The columns of a region's table: 1000 when a sample found the region
// alive, suspect or failed (so a step's mean is in thousandths), and its
// reachable members in thousandths.
const (
	colAlive = iota
	colSuspect
	colFailed
	colReachable
	regionCols
)

// RegionHistory keeps the health of every region, as this member's
// directory sees it, over a window at the resolutions of
// timeseries.Tiers. Its memory is bounded by the window and the number of
// regions; a region that leaves the directory loses its history.
type RegionHistory struct {
	set *timeseries.Set
}

// NewRegionHistory keeps health sampled every interval for window.
func NewRegionHistory(window, interval time.Duration) *RegionHistory {
	return &RegionHistory{set: timeseries.NewSet(regionCols, window, interval)}
}

// Run samples the directory every interval until ctx ends.
func (h *RegionHistory) Run(ctx context.Context, clk clock.Clock, dir Directory) {
	h.set.Run(ctx, clk, func(time.Time) map[string][]int64 { return healthRows(dir.Regions()) })
}

// Sample records each region's health now.
func (h *RegionHistory) Sample(now time.Time, regions []Region) {
	h.set.Record(now, healthRows(regions))
}

// healthRows are the regions' health as rows of the region columns.
func healthRows(regions []Region) map[string][]int64 {
	rows := make(map[string][]int64, len(regions))
	for _, reg := range regions {
		row := make([]int64, regionCols)
		switch reg.Health {
		case "suspect":
			row[colSuspect] = 1000
		case "failed":
			row[colFailed] = 1000
		default:
			row[colAlive] = 1000
		}
		for _, m := range reg.Members {
			if m.Status == "alive" || m.Status == "suspect" {
				row[colReachable] += 1000
			}
		}
		rows[reg.Name] = row
	}
	return rows
}

// response is every region's history after since, by region name.
func (h *RegionHistory) response(since time.Time) *pb.GetRegionHistoryResponse {
	out := &pb.GetRegionHistoryResponse{Window: durationpb.New(h.set.Window()), Interval: durationpb.New(h.set.Interval())}
	for _, name := range h.set.Keys() {
		rh := &pb.RegionHistory{Name: name}
		pts, _ := h.set.Points(name, since)
		for _, p := range pts {
			rh.Times = append(rh.Times, float64(p.T.Unix()))
			rh.StepSeconds = append(rh.StepSeconds, uint32(p.Step/time.Second))
			rh.Alive = append(rh.Alive, float64(p.V[colAlive])/1000)
			rh.Suspect = append(rh.Suspect, float64(p.V[colSuspect])/1000)
			rh.Failed = append(rh.Failed, float64(p.V[colFailed])/1000)
			rh.ReachableMembers = append(rh.ReachableMembers, float64(p.V[colReachable])/1000)
		}
		out.Regions = append(out.Regions, rh)
	}
	return out
}

// SetRegionHistory has the router answer GetRegionHistory from h.
func (r *Router) SetRegionHistory(h *RegionHistory) { r.history.Store(h) }

// getRegionHistory is this member's own record: a region's history is
// how this member saw the others, so it is never forwarded.
func (r *Router) getRegionHistory(_ context.Context, req *pb.GetRegionHistoryRequest) (*pb.GetRegionHistoryResponse, error) {
	h := r.history.Load()
	if h == nil {
		return nil, status.Error(codes.FailedPrecondition, "this server keeps no region history")
	}
	var since time.Time
	if req.GetSince() != nil {
		since = req.GetSince().AsTime()
	}
	return h.response(since), nil
}
