package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// MaxDrainReason bounds the reason an operator gives for a drain.
const MaxDrainReason = 512

// hostToProto renders a host from what its host manager reports now (live,
// if it does) and what the shard keeps of it (rec, if anything). A host
// only remembered is DOWN; a drained host that is not DOWN is DRAINING.
func (s *api) hostToProto(live *hostmgr.HostView, rec *model.HostRecord) *pb.Host {
	var h model.Host
	var allocated model.Resources
	var tasks int
	if live != nil {
		h, allocated, tasks = live.Host, live.Allocated, live.Tasks
	}
	if (live == nil || live.Hostname == "") && rec != nil {
		h = rec.Host
		h.State = model.HostDown
	}
	out := &pb.Host{
		Id:         string(h.ID),
		Hostname:   h.Hostname,
		Cluster:    h.Cluster,
		Kind:       h.Kind,
		State:      pb.HostState(h.State),
		Capacity:   resourcesToProto(h.Capacity),
		Allocated:  resourcesToProto(allocated),
		Labels:     h.Labels,
		Tasks:      uint32(tasks),
		Region:     s.engine.Region(),
		PortRanges: portRangesToProto(h.Ports),
		RunsImages: h.RunsImages,
		HostPool:   model.DefaultHostPool,
	}
	if rec != nil {
		out.HostPool, out.HostPoolTarget = rec.Pool(), rec.HostPoolTarget
		out.Draining, out.DrainReason, out.DrainTime, out.LastSeen = rec.Draining, rec.DrainReason, ts(rec.DrainTime), ts(rec.LastSeen)
		out.DrainDeadline = ts(rec.DrainDeadline)
		switch {
		case rec.Down:
			out.State = pb.HostState_HOST_STATE_DOWN
		case rec.Draining && h.State != model.HostDown && tasks == 0:
			out.State = pb.HostState_HOST_STATE_DRAINED
		case rec.Draining && h.State != model.HostDown:
			out.State = pb.HostState_HOST_STATE_DRAINING
		}
	}
	return out
}

func (s *hostService) ListHosts(ctx context.Context, req *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	recs, err := s.engine.Reads().ListHostRecords(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	byID := make(map[model.HostID]*model.HostRecord, len(recs))
	for _, r := range recs {
		byID[r.Host.ID] = r
	}
	keep := func(id model.HostID, cluster string) bool {
		return (req.Cluster == "" || cluster == req.Cluster) && (req.HostId == "" || string(id) == req.HostId)
	}
	out := &pb.ListHostsResponse{}
	for _, v := range s.engine.Hosts().Snapshot() {
		rec := byID[v.ID]
		delete(byID, v.ID)
		if v.Hostname == "" && v.State == model.HostDown && rec == nil {
			continue // an allocation on a host not reported (yet)
		}
		if h := s.hostToProto(&v, rec); keep(model.HostID(h.Id), h.Cluster) {
			out.Hosts = append(out.Hosts, h)
		}
	}
	// Hosts remembered that no host manager reports any more.
	for _, rec := range recs {
		if _, gone := byID[rec.Host.ID]; gone && keep(rec.Host.ID, rec.Host.Cluster) {
			out.Hosts = append(out.Hosts, s.hostToProto(nil, rec))
		}
	}
	slices.SortFunc(out.Hosts, func(a, b *pb.Host) int { return cmp.Compare(a.Id, b.Id) })
	return out, nil
}

// checkHostRequest checks what DrainHost and UndrainHost name.
func (s *api) checkHostRequest(id, region string) error {
	if err := requireID("host_id", id); err != nil {
		return err
	}
	if !strings.Contains(id, "/") {
		return invalid("host_id", fmt.Sprintf("%q: want <cluster>/<name>, the ID column of peloton host list", id))
	}
	if region != "" && region != s.engine.Region() {
		return invalid("region", fmt.Sprintf("this is region %q, not %q", s.engine.Region(), region))
	}
	return nil
}

// hostAfter renders a host after a drain or undrain.
func (s *api) hostAfter(rec *model.HostRecord) *pb.Host {
	if v, ok := s.engine.Hosts().View(rec.Host.ID); ok {
		return s.hostToProto(&v, rec)
	}
	return s.hostToProto(nil, rec)
}

func (s *hostService) DrainHost(ctx context.Context, req *pb.DrainHostRequest) (*pb.DrainHostResponse, error) {
	if err := s.checkHostRequest(req.HostId, req.Region); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(req.Reason) > MaxDrainReason {
		return nil, invalid("reason", fmt.Sprintf("must be at most %d characters", MaxDrainReason))
	}
	var deadline time.Duration
	if d := req.GetDeadline(); d != nil {
		if err := d.CheckValid(); err != nil || d.AsDuration() < 0 || d.AsDuration() > MaxDrainDeadline {
			return nil, invalid("deadline", fmt.Sprintf("must be between 0s and %s", MaxDrainDeadline))
		}
		deadline = d.AsDuration()
	}
	rec, err := jobmgr.Do(ctx, s.engine, jobmgr.DrainHost{Host: model.HostID(req.HostId), Reason: req.Reason, Deadline: deadline})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.DrainHostResponse{Host: s.hostAfter(rec)}, nil
}

func (s *hostService) UndrainHost(ctx context.Context, req *pb.UndrainHostRequest) (*pb.UndrainHostResponse, error) {
	if err := s.checkHostRequest(req.HostId, req.Region); err != nil {
		return nil, err
	}
	rec, err := jobmgr.Do(ctx, s.engine, jobmgr.UndrainHost{Host: model.HostID(req.HostId)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.UndrainHostResponse{Host: s.hostAfter(rec)}, nil
}

// MaxDrainDeadline bounds how long a drain lets batch runs finish.
const MaxDrainDeadline = 30 * 24 * time.Hour

func (s *hostService) MarkHostDown(ctx context.Context, req *pb.MarkHostDownRequest) (*pb.MarkHostDownResponse, error) {
	if err := s.checkHostRequest(req.HostId, req.Region); err != nil {
		return nil, err
	}
	rec, err := jobmgr.Do(ctx, s.engine, jobmgr.MarkHostDown{Host: model.HostID(req.HostId), Force: req.Force})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.MarkHostDownResponse{Host: s.hostAfter(rec)}, nil
}

func (s *hostService) SetHostPool(ctx context.Context, req *pb.SetHostPoolRequest) (*pb.SetHostPoolResponse, error) {
	if err := s.checkHostRequest(req.HostId, req.Region); err != nil {
		return nil, err
	}
	if !model.ValidHostPoolName(req.HostPool) {
		return nil, invalid("host_pool", fmt.Sprintf("%q: want 1 to %d lowercase letters, digits and -, starting with a letter", req.HostPool, model.MaxHostPoolName))
	}
	rec, err := jobmgr.Do(ctx, s.engine, jobmgr.SetHostPool{Host: model.HostID(req.HostId), Pool: req.HostPool})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SetHostPoolResponse{Host: s.hostAfter(rec)}, nil
}

func (s *hostService) ListHostPools(ctx context.Context, req *pb.ListHostPoolsRequest) (*pb.ListHostPoolsResponse, error) {
	rep := s.engine.Reads().HostPools()
	region := s.engine.Region()
	out := &pb.ListHostPoolsResponse{}
	for _, v := range rep.Pools {
		hp := &pb.HostPool{
			Name: v.Name, Region: region, InService: uint32(v.InService), Floor: uint32(v.Floor),
			Capacity: resourcesToProto(v.Capacity), Allocated: resourcesToProto(v.Allocated), Demand: resourcesToProto(v.Demand),
		}
		for _, h := range v.Hosts {
			hp.Hosts = append(hp.Hosts, string(h))
		}
		for _, h := range v.Moving {
			hp.Moving = append(hp.Moving, string(h))
		}
		if rep.Period > 0 {
			hp.PolicyPeriod = durationpb.New(rep.Period)
		}
		out.HostPools = append(out.HostPools, hp)
	}
	for _, ev := range rep.Recent {
		out.RecentMoves = append(out.RecentMoves, hostPoolMoveToProto(ev, region))
	}
	return out, nil
}
