package federation

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// fakeShard is the in-memory twin of one region's shard for routing tests:
// it knows some jobs and hosts, and every answer names its region.
type fakeShard struct {
	unimplementedShard

	region string
	jobs   map[string]bool
	mu     sync.Mutex
	hosts  map[string]*pb.Host
}

func (s *fakeShard) job(id string) error {
	if !s.jobs[id] {
		return status.Errorf(codes.NotFound, "job %s not found", id)
	}
	return nil
}

func (s *fakeShard) GetJob(_ context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	if err := s.job(req.Id); err != nil {
		return nil, err
	}
	return &pb.GetJobResponse{Job: &pb.Job{Id: req.Id, Status: &pb.JobStatus{Region: s.region}}}, nil
}

func (s *fakeShard) UpdateJob(_ context.Context, req *pb.UpdateJobRequest) (*pb.UpdateJobResponse, error) {
	if err := s.job(req.JobId); err != nil {
		return nil, err
	}
	return &pb.UpdateJobResponse{Update: &pb.Update{Id: req.JobId + ".2", JobId: req.JobId, Message: s.region}}, nil
}

func (s *fakeShard) update(id string) (*pb.Update, error) {
	job, _, _ := strings.Cut(id, ".")
	if err := s.job(job); err != nil {
		return nil, err
	}
	return &pb.Update{Id: id, JobId: job, Message: s.region}, nil
}

func (s *fakeShard) GetUpdate(_ context.Context, req *pb.GetUpdateRequest) (*pb.GetUpdateResponse, error) {
	u, err := s.update(req.UpdateId)
	return &pb.GetUpdateResponse{Update: u}, err
}

func (s *fakeShard) AbortUpdate(_ context.Context, req *pb.AbortUpdateRequest) (*pb.AbortUpdateResponse, error) {
	u, err := s.update(req.UpdateId)
	return &pb.AbortUpdateResponse{Update: u}, err
}

func (s *fakeShard) ListUpdates(_ context.Context, req *pb.ListUpdatesRequest) (*pb.ListUpdatesResponse, error) {
	u, err := s.update(req.JobId + ".2")
	return &pb.ListUpdatesResponse{Updates: []*pb.Update{u}}, err
}

func (s *fakeShard) GetJobConfig(_ context.Context, req *pb.GetJobConfigRequest) (*pb.GetJobConfigResponse, error) {
	if err := s.job(req.JobId); err != nil {
		return nil, err
	}
	return &pb.GetJobConfigResponse{Spec: &pb.JobSpec{Region: s.region}, Version: 1}, nil
}

func (s *fakeShard) ListEvents(_ context.Context, req *pb.ListEventsRequest) (*pb.ListEventsResponse, error) {
	if err := s.job(req.JobId); err != nil {
		return nil, err
	}
	return &pb.ListEventsResponse{Events: []*pb.Event{{JobId: req.JobId, Kind: &pb.Event_Job{Job: &pb.JobStatus{Region: s.region}}}}}, nil
}

func (s *fakeShard) ListHosts(_ context.Context, req *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &pb.ListHostsResponse{}
	for id, h := range s.hosts {
		if req.HostId == "" || req.HostId == id {
			out.Hosts = append(out.Hosts, h)
		}
	}
	return out, nil
}

func (s *fakeShard) setDrain(id, region string, drain bool) (*pb.Host, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if region != "" && region != s.region {
		return nil, status.Errorf(codes.InvalidArgument, "region: this is %s", s.region)
	}
	h, ok := s.hosts[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "host %s not found", id)
	}
	h.Draining = drain
	return h, nil
}

func (s *fakeShard) DrainHost(_ context.Context, req *pb.DrainHostRequest) (*pb.DrainHostResponse, error) {
	h, err := s.setDrain(req.HostId, req.Region, true)
	return &pb.DrainHostResponse{Host: h}, err
}

func (s *fakeShard) UndrainHost(_ context.Context, req *pb.UndrainHostRequest) (*pb.UndrainHostResponse, error) {
	h, err := s.setDrain(req.HostId, req.Region, false)
	return &pb.UndrainHostResponse{Host: h}, err
}

// startRegions serves a router in front of each fake shard on loopback and
// returns the gRPC address of each region.
func startRegions(t *testing.T, shards ...*fakeShard) map[string]string {
	t.Helper()
	named := make([]namedShard, len(shards))
	for i, s := range shards {
		named[i] = namedShard{s.region, s}
	}
	regions, _, _ := serveRegions(t, named...)
	addrs := map[string]string{}
	for _, reg := range regions {
		addrs[reg.Name] = reg.Addr
	}
	return addrs
}

// namedShard is a region's shard for serveRegions.
type namedShard struct {
	region string
	shard  Shard
}

// serveRegions serves a router in front of each shard on loopback, each
// router with its own static directory of all of them, and returns the
// regions, the routers and the directories by region.
func serveRegions(t *testing.T, shards ...namedShard) ([]Region, map[string]*Router, map[string]*StaticDirectory) {
	t.Helper()
	var regions []Region
	listeners := map[string]net.Listener{}
	for _, s := range shards {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners[s.region] = lis
		regions = append(regions, Region{Name: s.region, Addr: lis.Addr().String()})
	}
	routers, dirs := map[string]*Router{}, map[string]*StaticDirectory{}
	for _, s := range shards {
		dirs[s.region] = NewStaticDirectory(s.region, regions)
		r := NewRouter(s.shard, dirs[s.region], nil)
		g := grpc.NewServer()
		r.Register(g)
		done := make(chan struct{})
		go func() { defer close(done); _ = g.Serve(listeners[s.region]) }()
		t.Cleanup(func() { g.Stop(); <-done; r.Close() })
		routers[s.region] = r
	}
	return regions, routers, dirs
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func host(id, region string) *pb.Host { return &pb.Host{Id: id, Region: region} }

func twoRegions(t *testing.T) (east, west *grpc.ClientConn, addrs map[string]string) {
	addrs = startRegions(t,
		&fakeShard{region: "east", jobs: map[string]bool{"j-east": true},
			hosts: map[string]*pb.Host{"sim/a": host("sim/a", "east"), "sim/shared": host("sim/shared", "east")}},
		&fakeShard{region: "west", jobs: map[string]bool{"j-west": true},
			hosts: map[string]*pb.Host{"sim/b": host("sim/b", "west"), "sim/shared": host("sim/shared", "west")}},
	)
	return dial(t, addrs["east"]), dial(t, addrs["west"]), addrs
}

func TestJobScopedCallsGoToTheJobsRegion(t *testing.T) {
	east, _, _ := twoRegions(t)
	jobs := pb.NewJobServiceClient(east)
	ctx := context.Background()

	up, err := jobs.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: "j-west", Spec: &pb.JobSpec{}})
	if err != nil || up.GetUpdate().GetMessage() != "west" {
		t.Fatalf("UpdateJob: %v %v", up, err)
	}
	got, err := jobs.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: "j-west.2"})
	if err != nil || got.GetUpdate().GetMessage() != "west" {
		t.Fatalf("GetUpdate: %v %v", got, err)
	}
	ab, err := jobs.AbortUpdate(ctx, &pb.AbortUpdateRequest{UpdateId: "j-west.2"})
	if err != nil || ab.GetUpdate().GetMessage() != "west" {
		t.Fatalf("AbortUpdate: %v %v", ab, err)
	}
	list, err := jobs.ListUpdates(ctx, &pb.ListUpdatesRequest{JobId: "j-west"})
	if err != nil || list.GetUpdates()[0].GetMessage() != "west" {
		t.Fatalf("ListUpdates: %v %v", list, err)
	}
	cfg, err := jobs.GetJobConfig(ctx, &pb.GetJobConfigRequest{JobId: "j-west"})
	if err != nil || cfg.GetSpec().GetRegion() != "west" {
		t.Fatalf("GetJobConfig: %v %v", cfg, err)
	}
	evs, err := jobs.ListEvents(ctx, &pb.ListEventsRequest{JobId: "j-west"})
	if err != nil || evs.GetEvents()[0].GetJob().GetRegion() != "west" {
		t.Fatalf("ListEvents: %v %v", evs, err)
	}
	local, err := jobs.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: "j-east.2"})
	if err != nil || local.GetUpdate().GetMessage() != "east" {
		t.Fatalf("local GetUpdate: %v %v", local, err)
	}

	if _, err := jobs.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: "no-version"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("malformed update id: %v", err)
	}
	if _, err := jobs.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: "j-nowhere"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := jobs.AbortUpdate(ctx, &pb.AbortUpdateRequest{UpdateId: "j-nowhere.3"}); status.Code(err) != codes.NotFound {
		t.Fatalf("update of an unknown job: %v", err)
	}
}

func TestHostDrainGoesToTheHostsRegion(t *testing.T) {
	east, west, _ := twoRegions(t)
	hosts := pb.NewHostServiceClient(east)
	ctx := context.Background()

	d, err := hosts.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/b", Reason: "disk"})
	if err != nil || d.GetHost().GetRegion() != "west" || !d.GetHost().GetDraining() {
		t.Fatalf("drain of a west host through east: %v %v", d, err)
	}
	_, err = hosts.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/shared"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "regions east, west") {
		t.Fatalf("drain of a host two regions have: %v", err)
	}
	d, err = hosts.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/shared", Region: "west"})
	if err != nil || d.GetHost().GetRegion() != "west" {
		t.Fatalf("drain naming the region: %v %v", d, err)
	}
	u, err := pb.NewHostServiceClient(west).UndrainHost(ctx, &pb.UndrainHostRequest{HostId: "sim/shared", Region: "west"})
	if err != nil || u.GetHost().GetDraining() {
		t.Fatalf("undrain: %v %v", u, err)
	}
	if _, err := hosts.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/none"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown host: %v", err)
	}
	if _, err := hosts.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/a", Region: "north"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unknown region: %v", err)
	}
}

// A standby member forwards the new calls to the region's leader.
func TestRemoteShardForwardsUpdatesAndDrains(t *testing.T) {
	_, _, addrs := twoRegions(t)
	standby := NewRouter(nil, NewStaticDirectory("west", []Region{{Name: "west", Addr: addrs["west"]}}), nil)
	defer standby.Close()
	standby.SetLeader(func() string { return addrs["west"] })
	g := grpc.NewServer()
	standby.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	c := dial(t, lis.Addr().String())
	rs := struct {
		pb.JobServiceClient
		pb.HostServiceClient
	}{pb.NewJobServiceClient(c), pb.NewHostServiceClient(c)}
	ctx := context.Background()
	if u, err := rs.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: "j-west"}); err != nil || u.GetUpdate().GetMessage() != "west" {
		t.Fatalf("UpdateJob: %v %v", u, err)
	}
	if c, err := rs.GetJobConfig(ctx, &pb.GetJobConfigRequest{JobId: "j-west"}); err != nil || c.GetVersion() != 1 {
		t.Fatalf("GetJobConfig: %v %v", c, err)
	}
	if d, err := rs.DrainHost(ctx, &pb.DrainHostRequest{HostId: "sim/b"}); err != nil || !d.GetHost().GetDraining() {
		t.Fatalf("DrainHost: %v %v", d, err)
	}
	if _, err := rs.GetUpdate(ctx, &pb.GetUpdateRequest{UpdateId: "j-east.2"}); status.Code(err) != codes.NotFound {
		t.Fatalf("a standby's call is served by its leader only: %v", err)
	}
}
