package service

import (
	"context"
	"fmt"
	"strings"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// wantResult checks one result of a CreateJobs call: accepted (code OK)
// with an id, or refused with code and a message holding every fragment.
func wantResult(t *testing.T, i int, r *pb.CreateJobsResult, code codes.Code, fragments ...string) {
	t.Helper()
	if codes.Code(r.GetCode()) != code {
		t.Fatalf("results[%d]: code %s (%q), want %s", i, codes.Code(r.GetCode()), r.GetMessage(), code)
	}
	if (code == codes.OK) != (r.GetJobId() != "") {
		t.Fatalf("results[%d]: code %s with job id %q", i, code, r.GetJobId())
	}
	for _, f := range fragments {
		if !strings.Contains(r.GetMessage(), f) {
			t.Fatalf("results[%d]: %q lacks %q", i, r.GetMessage(), f)
		}
	}
}

// A batch mixing valid and invalid specs: each valid one is created, each
// invalid one refused with every problem named under its position, and the
// refused ones leave nothing behind.
func TestCreateJobsMixedSpecs(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	ts.until("the hosts are known", func() bool { return len(ts.e.Hosts().Shapes()) > 0 })
	noName := jobSpec(1)
	noName.Name = ""
	big := jobSpec(1)
	big.Task.Resources.Cpu = 9
	badPool := jobSpec(1)
	badPool.Pool = "/nowhere"
	twoProblems := jobSpec(1)
	twoProblems.Task.Resources.Cpu = -1
	twoProblems.Priority = 5000
	req := &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{jobSpec(2), noName, big, jobSpec(1), badPool, nil, twoProblems}}
	resp, err := ts.s.CreateJobs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	rs := resp.GetResults()
	if len(rs) != len(req.Jobs) {
		t.Fatalf("%d results for %d specs", len(rs), len(req.Jobs))
	}
	wantResult(t, 0, rs[0], codes.OK)
	wantResult(t, 1, rs[1], codes.InvalidArgument, "jobs[1].name: is required")
	wantResult(t, 2, rs[2], codes.InvalidArgument, "jobs[2].task.resources.cpu", "larger than any host")
	wantResult(t, 3, rs[3], codes.OK)
	wantResult(t, 4, rs[4], codes.InvalidArgument, "jobs[4].pool")
	wantResult(t, 5, rs[5], codes.InvalidArgument, "jobs[5].spec: required")
	wantResult(t, 6, rs[6], codes.InvalidArgument, "jobs[6].priority", "jobs[6].task.resources.cpu")
	for _, i := range []int{0, 3} {
		if rs[i].GetRegion() != "east" || rs[i].GetExisting() {
			t.Errorf("results[%d]: %v", i, rs[i])
		}
	}
	if rs[0].GetJobId() == rs[3].GetJobId() {
		t.Fatalf("two jobs share id %s", rs[0].GetJobId())
	}
	ts.running(rs[0].GetJobId(), 2)
	ts.running(rs[3].GetJobId(), 1)
	listed, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.GetJobs()) != 2 {
		t.Fatalf("%d jobs stored, want the 2 accepted", len(listed.GetJobs()))
	}
}

// A retry with the same request id answers with the same ids and creates
// nothing; another request id, or the same id with other specs, creates.
func TestCreateJobsRetryWithRequestID(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	specs := func() []*pb.JobSpec {
		a, b := jobSpec(1), jobSpec(1)
		a.Name, b.Name = "a", "b"
		bad := jobSpec(1)
		bad.Name = ""
		return []*pb.JobSpec{a, bad, b, jobSpec(1)}
	}
	first, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "req-1", Jobs: specs()})
	if err != nil {
		t.Fatal(err)
	}
	again, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "req-1", Jobs: specs()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range first.GetResults() {
		f, a := first.GetResults()[i], again.GetResults()[i]
		if f.GetJobId() != a.GetJobId() || f.GetCode() != a.GetCode() {
			t.Fatalf("results[%d]: first %v, retry %v", i, f, a)
		}
		if f.GetExisting() || (f.GetJobId() != "" && !a.GetExisting()) {
			t.Fatalf("results[%d]: existing first %v, on retry %v", i, f.GetExisting(), a.GetExisting())
		}
	}
	countJobs := func() int {
		listed, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return len(listed.GetJobs())
	}
	if n := countJobs(); n != 3 {
		t.Fatalf("%d jobs after a retry, want 3", n)
	}
	// The same ids are derived from the specs as sent, so a CreateJob of
	// the first spec under the same request id finds its job too.
	one, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{RequestId: "req-1", Spec: specs()[0]})
	if err != nil {
		t.Fatal(err)
	}
	if one.GetJob().GetId() != first.GetResults()[0].GetJobId() || one.GetJob().GetSpec().GetName() != "a" {
		t.Fatalf("CreateJob under the same request id: %v, want job %s", one.GetJob(), first.GetResults()[0].GetJobId())
	}
	// Other specs under one request id are other jobs.
	changed := specs()
	changed[0].Name = "a2"
	other, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "req-1", Jobs: changed})
	if err != nil {
		t.Fatal(err)
	}
	if r := other.GetResults()[0]; r.GetExisting() || r.GetJobId() == first.GetResults()[0].GetJobId() {
		t.Fatalf("another spec under the same request id: %v", r)
	}
	if r := other.GetResults()[2]; !r.GetExisting() {
		t.Fatalf("an unchanged spec under the same request id: %v", r)
	}
	if n := countJobs(); n != 4 {
		t.Fatalf("%d jobs, want 4", n)
	}
	// Without a request id, every call creates.
	for range 2 {
		if _, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{jobSpec(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := countJobs(); n != 6 {
		t.Fatalf("%d jobs, want 6", n)
	}
}

// A part of a request, as a gateway sends a region its share, names its
// specs by their positions in the whole request: ids and errors follow
// them, so that a retry split another way derives the same ids.
func TestCreateJobsPositions(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	a, b := jobSpec(1), jobSpec(1)
	a.Name, b.Name = "a", "b"
	bad := jobSpec(1)
	bad.Name = ""
	whole, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "r", Jobs: []*pb.JobSpec{proto.Clone(a).(*pb.JobSpec), proto.Clone(b).(*pb.JobSpec)}})
	if err != nil {
		t.Fatal(err)
	}
	part, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "r", Jobs: []*pb.JobSpec{bad, b}, Positions: []uint32{7, 1}})
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, 0, part.GetResults()[0], codes.InvalidArgument, "jobs[7].name: is required")
	if r := part.GetResults()[1]; r.GetJobId() != whole.GetResults()[1].GetJobId() || !r.GetExisting() {
		t.Fatalf("spec at position 1 sent apart: %v, want the existing %s", r, whole.GetResults()[1].GetJobId())
	}
	for _, c := range []struct {
		positions []uint32
		want      string
	}{
		{[]uint32{0}, "1 positions for 2 specs"},
		{[]uint32{3, 3}, "position 3 is given twice"},
		{[]uint32{0, pb.MaxJobsPerRequest}, "not below"},
	} {
		_, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{a, b}, Positions: c.positions})
		wantCode(t, fmt.Sprint(c.positions), err, codes.InvalidArgument, "positions", c.want)
	}
}

// The call as a whole is refused when it has more specs than the region's
// limit or a malformed request id, with nothing created.
func TestCreateJobsLimits(t *testing.T) {
	ts := newTestShardWith(t, jobmgr.Limits{JobsPerRequest: 3, PendingTasksPerPool: 4})
	ctx := context.Background()
	four := []*pb.JobSpec{jobSpec(1), jobSpec(1), jobSpec(1), jobSpec(1)}
	_, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: four})
	wantCode(t, "4 specs past a limit of 3", err, codes.InvalidArgument, "jobs: has 4 specs, more than this region's limit of 3 per request")
	for _, id := range []string{strings.Repeat("x", 129), "a b", "ü"} {
		_, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: id, Jobs: four[:1]})
		wantCode(t, "request id "+id, err, codes.InvalidArgument, "request_id")
		_, err = ts.s.CreateJob(ctx, &pb.CreateJobRequest{RequestId: id, Spec: jobSpec(1)})
		wantCode(t, "CreateJob with request id "+id, err, codes.InvalidArgument, "request_id")
	}
	listed, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil || len(listed.GetJobs()) != 0 {
		t.Fatalf("refused calls stored %d jobs (%v)", len(listed.GetJobs()), err)
	}
	// The pool's pending limit refuses the specs that would pass it, each
	// on its own; a retry still finds the jobs it created.
	resp, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "p", Jobs: []*pb.JobSpec{jobSpec(2), jobSpec(3), jobSpec(2)}})
	if err != nil {
		t.Fatal(err)
	}
	rs := resp.GetResults()
	wantResult(t, 0, rs[0], codes.OK)
	wantResult(t, 1, rs[1], codes.ResourceExhausted, "jobs[1]: pool /", "limit of 4")
	wantResult(t, 2, rs[2], codes.OK)
	retry, err := ts.s.CreateJobs(ctx, &pb.CreateJobsRequest{RequestId: "p", Jobs: []*pb.JobSpec{jobSpec(2), jobSpec(3), jobSpec(2)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range retry.GetResults() {
		if r.GetJobId() != rs[i].GetJobId() || r.GetCode() != rs[i].GetCode() {
			t.Fatalf("retry results[%d]: %v, first %v", i, r, rs[i])
		}
	}
}
