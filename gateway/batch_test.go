package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// summary renders results as "id" or "<code> <message>", one per spec.
func summary(rs []*pb.CreateJobsResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.GetJobId()
		if r.GetCode() != 0 {
			out[i] = fmt.Sprintf("%s %s", codes.Code(r.GetCode()), r.GetMessage())
		}
	}
	return out
}

func specIn(name, pool string) *pb.JobSpec { return &pb.JobSpec{Name: name, Pool: pool} }

// Every spec of a CreateJobs call is authorised against its own pool: a
// pool owner's specs outside its pools are refused one by one, the others
// go in; an admin's go in whole; a viewer's call is refused whole. The
// call is audited once, with what became of its specs.
func TestCreateJobsAuthorisedPerPool(t *testing.T) {
	f := startSecured(t)
	ctx := context.Background()
	req := &pb.CreateJobsRequest{RequestId: "r1", Jobs: []*pb.JobSpec{
		specIn("ax", "/a/x"), specIn("b", "/b"), specIn("bad", "/a/y"), specIn("root", ""), specIn("ay", "/a/y"),
	}}
	resp, err := pb.NewJobServiceClient(f.dial(t, "tok-alice", "")).CreateJobs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := summary(resp.GetResults())
	want := []string{"ax", "PermissionDenied jobs[1]: alice (pool-owner /a) may not create-job on pool /b", "InvalidArgument jobs[2].name: bad",
		"PermissionDenied jobs[3]: alice (pool-owner /a) may not create-job on pool /", "ay"}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("alice's results:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	f.shard.mu.Lock()
	sent := f.shard.batches[len(f.shard.batches)-1]
	f.shard.mu.Unlock()
	if fmt.Sprint(sent.GetPositions()) != "[0 2 4]" || len(sent.GetJobs()) != 3 || sent.GetRequestId() != "r1" {
		t.Fatalf("the shard got positions %v of %d specs, request %q; want the allowed [0 2 4] of r1", sent.GetPositions(), len(sent.GetJobs()), sent.GetRequestId())
	}
	recs, _ := f.audit.List(ctx, nil)
	last := recs[len(recs)-1]
	if last.GetRpc() != pb.JobService_CreateJobs_FullMethodName || last.GetName() != "alice" || last.GetCode() != "OK" ||
		last.GetResource() != "5 jobs in pools /, /a/x, /a/y, /b, request r1" ||
		last.GetMessage() != "created 2, refused 3 (InvalidArgument 1, PermissionDenied 2)" {
		t.Fatalf("audit record %v", last)
	}

	// An admin's specs go in whole, as sent.
	resp, err = pb.NewJobServiceClient(f.dial(t, "tok-root", "")).CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{specIn("rb", "/b"), specIn("ra", "/a")}})
	if err != nil || strings.Join(summary(resp.GetResults()), ",") != "rb,ra" {
		t.Fatalf("root: %v %v", summary(resp.GetResults()), err)
	}
	f.shard.mu.Lock()
	sent = f.shard.batches[len(f.shard.batches)-1]
	f.shard.mu.Unlock()
	if len(sent.GetPositions()) != 0 {
		t.Fatalf("root's request reached the shard with positions %v", sent.GetPositions())
	}
	// A pool owner whose every spec is refused gets every refusal; the
	// shard is not called.
	calls := len(f.shard.batches)
	resp, err = pb.NewJobServiceClient(f.dial(t, "tok-alice", "")).CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{specIn("b1", "/b"), specIn("b2", "/c")}})
	if err != nil || len(resp.GetResults()) != 2 || resp.GetResults()[1].GetCode() != int32(codes.PermissionDenied) {
		t.Fatalf("alice, all refused: %v %v", summary(resp.GetResults()), err)
	}
	if len(f.shard.batches) != calls {
		t.Fatalf("the shard was called for a batch refused whole")
	}
	// A viewer may create nowhere: the call is refused.
	_, err = pb.NewJobServiceClient(f.dial(t, "tok-eve", "")).CreateJobs(ctx, req)
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("eve: %v, want PermissionDenied", err)
	}
	_, err = pb.NewJobServiceClient(f.dial(t, "", "")).CreateJobs(ctx, req)
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("nobody: %v, want Unauthenticated", err)
	}
}

// Over HTTP: POST /v1/jobs:batchCreate with per-spec results; a body that
// is not a well-formed request is refused whole, naming each field.
func TestCreateJobsOverHTTP(t *testing.T) {
	f := startSecured(t)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(t, "")}, Timeout: 10 * time.Second}
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "https://"+f.addr+"/v1/jobs:batchCreate", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok-alice")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(resp))
		return resp.StatusCode, b.String()
	}
	code, body := post(`{"requestId":"h1","jobs":[{"name":"hx","pool":"/a/x","type":"batch"},{"name":"hb","pool":"/b"}]}`)
	var resp struct {
		Results []struct {
			JobID   string `json:"jobId"`
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || code != 200 {
		t.Fatalf("%d %s (%v)", code, body, err)
	}
	if len(resp.Results) != 2 || resp.Results[0].JobID != "hx" || resp.Results[1].Code != int(codes.PermissionDenied) ||
		!strings.HasPrefix(resp.Results[1].Message, "jobs[1]: ") {
		t.Fatalf("results %s", body)
	}
	for bad, field := range map[string]string{
		`{"jobs":[{"name":"ok","pool":"/a"},{"name":"x","pool":"/a","task":{"resources":{"cpu":"lots"}}}]}`: "jobs[1].task.resources.cpu: must be a number",
		`{"jobs":[{"name":"ok","pool":"/a"},{"name":"x","pool":"/a","colour":"red"}]}`:                      "jobs[1].colour: unknown field",
		`{"jobs":[{"name":"ok","pool":"/a"},{"name":"x","pool":"/b","type":"sometimes"}]}`:                  "jobs[1].type",
		`{"requestId":"r","jobs":{"name":"x"}}`:                                                             "jobs",
	} {
		code, body = post(bad)
		if code != 400 || !strings.Contains(body, field) {
			t.Errorf("%s: %d %s, want 400 naming %s", bad, code, body, field)
		}
	}
	// Specs alice may create in none of the pools: refused before the body
	// is judged, as over gRPC.
	code, body = post(`{"jobs":[{"name":"x","pool":"/b","colour":"red"},{"name":"y","pool":"/c"}]}`)
	if code != 403 || !strings.Contains(body, "may not create-job on pool /b") {
		t.Errorf("a bad batch for pools alice does not own: %d %s, want 403", code, body)
	}
}

// More specs than the limit per request: refused whole, naming the field,
// over gRPC and HTTP; a body past the size limit of job specs is a 413.
func TestCreateJobsLimits(t *testing.T) {
	base, shard := startOpen(t, Limits{JobsPerRequest: 3, RequestBytes: 4 << 10, SpecRequestBytes: 16 << 10})
	four := `{"jobs":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}]}`
	code, _, msg := call(t, "POST", base+"/v1/jobs:batchCreate", "application/json", strings.NewReader(four))
	if code != 400 || !strings.Contains(msg, "jobs: has 4 specs, more than the limit of 3 per request") {
		t.Fatalf("4 specs: %d %q", code, msg)
	}
	// Above the small request limit but within the job specs' one: taken.
	long := `{"jobs":[{"name":"` + strings.Repeat("x", 8<<10) + `"}]}`
	if code, _, msg := call(t, "POST", base+"/v1/jobs:batchCreate", "application/json", strings.NewReader(long)); code != 200 {
		t.Fatalf("an 8 KiB batch: %d %q", code, msg)
	}
	huge := `{"jobs":[{"name":"` + strings.Repeat("x", 20<<10) + `"}]}`
	if code, _, msg := call(t, "POST", base+"/v1/jobs:batchCreate", "application/json", strings.NewReader(huge)); code != 413 {
		t.Fatalf("a 20 KiB batch: %d %q", code, msg)
	}
	if len(shard.batches) != 1 {
		t.Fatalf("the shard got %d batches, want the one within the limits", len(shard.batches))
	}
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
