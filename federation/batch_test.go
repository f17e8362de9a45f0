package federation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// batchShard is a region's shard as CreateJobs sees it: it creates a job
// per spec (named "<region>-<name>"), refuses specs named "bad", and
// records the parts of requests it was sent.
type batchShard struct {
	unimplementedShard
	region string
	// derive: ids as a region derives them from a request id.
	derive bool
	mu     sync.Mutex
	parts  []*pb.CreateJobsRequest
}

func (s *batchShard) CreateJobs(_ context.Context, req *pb.CreateJobsRequest) (*pb.CreateJobsResponse, error) {
	s.mu.Lock()
	s.parts = append(s.parts, req)
	s.mu.Unlock()
	positions, problem := req.SpecPositions()
	if problem != "" {
		return nil, errors.New(problem)
	}
	out := &pb.CreateJobsResponse{}
	for i, spec := range req.Jobs {
		if spec.GetName() == "bad" {
			out.Results = append(out.Results, &pb.CreateJobsResult{Code: int32(codes.InvalidArgument), Message: pb.JobPath(positions[i], "name") + ": bad"})
			continue
		}
		id := s.region + "-" + spec.GetName()
		if s.derive {
			id = pb.RequestJobID(req.RequestId, positions[i], spec)
		}
		out.Results = append(out.Results, &pb.CreateJobsResult{JobId: id, Region: s.region})
	}
	return out, nil
}

func (s *batchShard) sent() []*pb.CreateJobsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts
}

// Specs go to the region they name or the chooser picks, one call per
// region with their positions, and the results come back in the
// request's order; specs no region takes are refused on their own.
func TestCreateJobsGroupsByRegion(t *testing.T) {
	shards := map[string]*batchShard{"east": {region: "east"}, "west": {region: "west"}}
	var regions []Region
	lis := map[string]net.Listener{}
	for _, name := range []string{"east", "west", "gone"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[name] = l
		health := "alive"
		if name == "gone" {
			health = "failed"
		}
		regions = append(regions, Region{Name: name, Addr: l.Addr().String(), Health: health})
	}
	lis["gone"].Close()
	chooser := func(_ context.Context, spec *pb.JobSpec) (string, []string, error) {
		switch spec.GetLabels()["to"] {
		case "":
			return "", []string{"east: pool /x is full", "west: no host fits"}, errors.New("no region fits")
		default:
			return spec.GetLabels()["to"], nil, nil
		}
	}
	for _, name := range []string{"east", "west"} {
		r := NewRouter(shards[name], NewStaticDirectory(name, regions), chooser)
		g := grpc.NewServer()
		r.Register(g)
		go func() { _ = g.Serve(lis[name]) }()
		t.Cleanup(func() { g.Stop(); r.Close() })
	}
	east := pb.NewJobServiceClient(dial(t, regions[0].Addr))
	spec := func(name, region, to string) *pb.JobSpec {
		s := &pb.JobSpec{Name: name, Region: region}
		if to != "" {
			s.Labels = map[string]string{"to": to}
		}
		return s
	}
	req := &pb.CreateJobsRequest{RequestId: "r1", Jobs: []*pb.JobSpec{
		spec("a", "west", ""),   // 0: named region
		spec("b", "", "east"),   // 1: chosen
		spec("bad", "west", ""), // 2: refused by its region
		spec("c", "", ""),       // 3: no region fits
		spec("d", "mars", ""),   // 4: unknown region
		spec("e", "", "west"),   // 5: chosen
		spec("f", "gone", ""),   // 6: a failed region
		spec("g", "east", ""),   // 7: named, local
		spec("bad", "east", ""), // 8: refused locally
	}}
	resp, err := east.CreateJobs(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"west-a", "east-b", "3 jobs[2].name: bad", "9 jobs[3]: no region can take the job: no region fits (east: pool /x is full; west: no host fits)",
		`3 jobs[4].region: unknown region "mars"`, "west-e", "14 jobs[6]: region gone is failed", "east-g", "3 jobs[8].name: bad",
	}
	if len(resp.GetResults()) != len(want) {
		t.Fatalf("%d results for %d specs", len(resp.GetResults()), len(want))
	}
	for i, r := range resp.GetResults() {
		got := r.GetJobId()
		if r.GetCode() != 0 {
			got = fmt.Sprintf("%d %s", r.GetCode(), r.GetMessage())
		}
		if !strings.HasPrefix(got, want[i]) {
			t.Errorf("results[%d]: %q, want %q", i, got, want[i])
		}
		if r.GetJobId() != "" && r.GetRegion() != strings.Split(r.GetJobId(), "-")[0] {
			t.Errorf("results[%d]: region %q for job %s", i, r.GetRegion(), r.GetJobId())
		}
	}
	// One call per region, with the specs' positions and the request id.
	for region, wantPositions := range map[string][]uint32{"east": {1, 7, 8}, "west": {0, 2, 5}} {
		parts := shards[region].sent()
		if len(parts) != 1 {
			t.Fatalf("region %s got %d calls, want 1", region, len(parts))
		}
		if fmt.Sprint(parts[0].GetPositions()) != fmt.Sprint(wantPositions) || parts[0].GetRequestId() != "r1" {
			t.Errorf("region %s got positions %v of request %q, want %v of r1", region, parts[0].GetPositions(), parts[0].GetRequestId(), wantPositions)
		}
	}
}

// A request whose specs all stay in the local region is passed on whole.
func TestCreateJobsLocalPassesThrough(t *testing.T) {
	local := &batchShard{region: "east"}
	r := NewRouter(local, NewStaticDirectory("east", []Region{{Name: "east"}}), nil)
	t.Cleanup(r.Close)
	req := &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{{Name: "a"}, {Name: "b"}}}
	resp, err := r.CreateJobs(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetResults()) != 2 || resp.GetResults()[1].GetJobId() != "east-b" {
		t.Fatalf("results %v", resp.GetResults())
	}
	if parts := local.sent(); len(parts) != 1 || len(parts[0].GetPositions()) != 0 {
		t.Fatalf("the shard got %v, want the request as sent", parts)
	}
}

// A retried request's specs go where its first attempt sent them, even
// when the chooser would pick another region now.
func TestCreateJobsRetryGoesWhereTheFirstWent(t *testing.T) {
	shards := map[string]*batchShard{"east": {region: "east", derive: true}, "west": {region: "west", derive: true}}
	regions := []Region{{Name: "east", Addr: "127.0.0.1:1", Health: "alive"}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	regions = append(regions, Region{Name: "west", Addr: l.Addr().String(), Health: "alive"})
	west := NewRouter(shards["west"], NewStaticDirectory("west", regions), nil)
	g := grpc.NewServer()
	west.Register(g)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(func() { g.Stop(); west.Close() })
	var mu sync.Mutex
	pick := "west"
	east := NewRouter(shards["east"], NewStaticDirectory("east", regions), func(context.Context, *pb.JobSpec) (string, []string, error) {
		mu.Lock()
		defer mu.Unlock()
		return pick, nil, nil
	})
	t.Cleanup(east.Close)
	req := func() *pb.CreateJobsRequest {
		return &pb.CreateJobsRequest{RequestId: "again", Jobs: []*pb.JobSpec{{Name: "a"}, {Name: "b"}}}
	}
	first, err := east.CreateJobs(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	pick = "east"
	mu.Unlock()
	retry, err := east.CreateJobs(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	for i := range first.GetResults() {
		f, r := first.GetResults()[i], retry.GetResults()[i]
		if f.GetRegion() != "west" || r.GetRegion() != "west" || f.GetJobId() != r.GetJobId() {
			t.Errorf("results[%d]: first %v, retry %v; want both in west with one id", i, f, r)
		}
	}
	if n := len(shards["east"].sent()); n != 0 {
		t.Errorf("east's shard got %d calls", n)
	}
	// A new request goes where the chooser says.
	other, err := east.CreateJobs(context.Background(), &pb.CreateJobsRequest{RequestId: "new", Jobs: []*pb.JobSpec{{Name: "a"}}})
	if err != nil || other.GetResults()[0].GetRegion() != "east" {
		t.Fatalf("a new request: %v %v", other, err)
	}
}
