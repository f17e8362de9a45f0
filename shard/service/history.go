package service

import (
	"context"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/internal/timeseries"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Default history settings: figures every 10 s, kept for a day.
const (
	DefaultHistoryWindow   = 24 * time.Hour
	DefaultHistoryInterval = 10 * time.Second
)

// The columns of a pool's table: per resource kind its figures, in the
// order of poolFields, then the task counts.
const (
	fieldReservation = iota
	fieldLimit
	fieldDemand
	fieldUncapped
	fieldAllocation
	fieldEntitlement
	poolFields
)

var (
	colPending = len(model.ResourceKinds) * poolFields
	colRunning = colPending + 1
	poolCols   = colRunning + 1
)

// PoolHistory keeps every pool's figures over time for a window, at the
// resolutions of timeseries.Tiers: it outlives the engines of successive
// leadership terms and samples whichever leads. Its memory is bounded by
// the window and the number of pools (Bytes); a deleted pool's history
// goes with it.
type PoolHistory struct {
	set *timeseries.Set
}

// NewPoolHistory keeps figures sampled every interval for window (the
// defaults for zero values).
func NewPoolHistory(window, interval time.Duration) *PoolHistory {
	if window <= 0 {
		window = DefaultHistoryWindow
	}
	if interval <= 0 {
		interval = DefaultHistoryInterval
	}
	return &PoolHistory{set: timeseries.NewSet(poolCols, window, interval)}
}

// Window and Interval are how long the history keeps figures and how
// often it samples them.
func (h *PoolHistory) Window() time.Duration   { return h.set.Window() }
func (h *PoolHistory) Interval() time.Duration { return h.set.Interval() }

// Bytes is the most memory the history takes for its pools now.
func (h *PoolHistory) Bytes() int { return h.set.Bytes() }

// Run samples the engine engine returns (nil: none leads here now) every
// interval until ctx ends.
func (h *PoolHistory) Run(ctx context.Context, clk clock.Clock, engine func() *jobmgr.Engine) {
	h.set.Run(ctx, clk, func(time.Time) map[string][]int64 {
		if e := engine(); e != nil {
			return poolRows(e)
		}
		return nil
	})
}

// Sample records every pool's figures as the engine has them now.
func (h *PoolHistory) Sample(now time.Time, e *jobmgr.Engine) { h.set.Record(now, poolRows(e)) }

// poolRows are every pool's figures now, as rows of the pool columns.
func poolRows(e *jobmgr.Engine) map[string][]int64 {
	views := e.Reads().ListPools(false)
	rows := make(map[string][]int64, len(views))
	for _, v := range views {
		row := make([]int64, poolCols)
		for i := range model.ResourceKinds {
			base := i * poolFields
			row[base+fieldReservation] = v.Reservation.Get(i)
			row[base+fieldLimit] = v.Limit.Get(i)
			if row[base+fieldLimit] == model.Unlimited {
				row[base+fieldLimit] = -1
			}
			row[base+fieldDemand] = v.Demand.Get(i)
			row[base+fieldUncapped] = v.UncappedDemand.Get(i)
			row[base+fieldAllocation] = v.Allocation.Get(i)
			row[base+fieldEntitlement] = v.Entitlement.Get(i)
		}
		row[colPending], row[colRunning] = int64(v.Pending), int64(v.Running)
		rows[v.Pool.Path] = row
	}
	return rows
}

// response is a pool's history after since as the API gives it (a pool
// not sampled yet has none).
func (h *PoolHistory) response(path string, since time.Time) *pb.GetPoolHistoryResponse {
	pts, _ := h.set.Points(path, since)
	out := &pb.GetPoolHistoryResponse{Path: path, Window: durationpb.New(h.Window()), Interval: durationpb.New(h.Interval())}
	for i, name := range model.ResourceKinds {
		r := &pb.PoolResourceHistory{Name: name}
		cols := []*[]float64{&r.Reservation, &r.Limit, &r.Demand, &r.UncappedDemand, &r.Allocation, &r.Entitlement}
		for f, col := range cols {
			*col = make([]float64, len(pts))
			for j, p := range pts {
				v := p.V[i*poolFields+f]
				if f == fieldLimit && v < 0 {
					(*col)[j] = -1
					continue
				}
				(*col)[j] = model.DecimalOf(i, v)
			}
		}
		out.Resources = append(out.Resources, r)
	}
	for _, p := range pts {
		out.Times = append(out.Times, float64(p.T.Unix()))
		out.StepSeconds = append(out.StepSeconds, uint32(p.Step/time.Second))
		out.PendingTasks = append(out.PendingTasks, uint32(p.V[colPending]))
		out.RunningTasks = append(out.RunningTasks, uint32(p.V[colRunning]))
	}
	return out
}

// GetPoolHistory serves a pool's history from the region's PoolHistory.
func (s *poolService) GetPoolHistory(ctx context.Context, req *pb.GetPoolHistoryRequest) (*pb.GetPoolHistoryResponse, error) {
	path := pb.NormalizePoolPath(req.GetPath())
	if _, err := s.engine.Reads().GetPool(path); err != nil {
		return nil, toStatus(err)
	}
	h := s.history
	if h == nil {
		return nil, status.Error(codes.FailedPrecondition, "this server keeps no pool history")
	}
	var since time.Time
	if req.GetSince() != nil {
		since = req.GetSince().AsTime()
	}
	out := h.response(path, since)
	out.Region = s.engine.Region()
	return out, nil
}
