package service

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
)

func TestListJobsPagesFiltersAndSummaries(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	var ids []string
	for i := range 7 {
		spec := jobSpec(1)
		spec.Name = fmt.Sprintf("job-%d", i%3)
		spec.Labels = map[string]string{"team": []string{"maps", "ads"}[i%2], "owner": []string{"alice", "bob"}[i%2]}
		created, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.GetJob().GetId())
		ts.clk.Advance(time.Millisecond)
	}

	// Pages of 3 cover every job once, oldest first.
	var got []string
	req := &pb.ListJobsRequest{Limit: 3}
	pages := 0
	for {
		resp, err := ts.s.ListJobs(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, j := range resp.GetJobs() {
			got = append(got, j.GetId())
			if j.GetSpec().GetTask() != nil || j.GetSpec().GetName() == "" || j.GetSpec().GetPool() == "" {
				t.Fatalf("a listed job has a task or lacks its name or pool: %v", j.GetSpec())
			}
		}
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || pages != 3 {
		t.Fatalf("paged %v in %d pages, want %v in 3", got, pages, ids)
	}

	all, err := pb.ListAllJobs(ctx, ts.s.ListJobs, &pb.ListJobsRequest{View: pb.JobView_JOB_VIEW_FULL})
	if err != nil || len(all) != 7 || all[0].GetSpec().GetTask().GetCommand() != "run" {
		t.Fatalf("every job, full: %d jobs, %v", len(all), err)
	}

	count := func(req *pb.ListJobsRequest) int {
		t.Helper()
		resp, err := ts.s.ListJobs(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.GetJobs())
	}
	for _, c := range []struct {
		name string
		req  *pb.ListJobsRequest
		want int
	}{
		{"label key=value", &pb.ListJobsRequest{Labels: []string{"team=maps"}}, 4},
		{"label key", &pb.ListJobsRequest{Labels: []string{"team"}}, 7},
		{"two labels", &pb.ListJobsRequest{Labels: []string{"team=maps", "owner=bob"}}, 0},
		{"owner", &pb.ListJobsRequest{Owner: "bob"}, 3},
		{"name", &pb.ListJobsRequest{Name: "job-1"}, 2},
		{"name and owner", &pb.ListJobsRequest{Name: "job-1", Owner: "alice"}, 1},
		{"pool", &pb.ListJobsRequest{Pool: "/elsewhere"}, 0},
	} {
		if n := count(c.req); n != c.want {
			t.Errorf("%s: %d jobs, want %d", c.name, n, c.want)
		}
	}

	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{PageToken: "garbage"})
	wantCode(t, "a bad page token", err, codes.InvalidArgument, "page_token")
	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{Labels: []string{"=x"}})
	wantCode(t, "a bad label filter", err, codes.InvalidArgument, "labels[0]")
	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{View: 9})
	wantCode(t, "an unknown view", err, codes.InvalidArgument, "view")
}
