package service

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
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

// TestListJobsNewestFirstSearchAndTotal pages newest first and with a
// search, each page counting every match.
func TestListJobsNewestFirstSearchAndTotal(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	var ids []string
	for i := range 7 {
		spec := jobSpec(1)
		spec.Name = []string{"Nightly-ETL", "web", "etl-backfill"}[i%3]
		created, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.GetJob().GetId())
		ts.clk.Advance(time.Millisecond)
	}
	page := func(req *pb.ListJobsRequest) (got []string, pages int) {
		t.Helper()
		for {
			resp, err := ts.s.ListJobs(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, j := range resp.GetJobs() {
				got = append(got, j.GetId())
			}
			if req.CountTotal && int(resp.GetTotal()) != wantTotal(req, ids) {
				t.Fatalf("%v: total %d, want %d", req, resp.GetTotal(), wantTotal(req, ids))
			}
			if resp.GetNextPageToken() == "" {
				return got, pages
			}
			req.PageToken = resp.GetNextPageToken()
		}
	}
	newest := slices.Clone(ids)
	slices.Reverse(newest)
	if got, pages := page(&pb.ListJobsRequest{Limit: 3, Order: pb.JobOrder_JOB_ORDER_NEWEST_FIRST, CountTotal: true}); !slices.Equal(got, newest) || pages != 3 {
		t.Fatalf("newest first: %v in %d pages, want %v in 3", got, pages, newest)
	}
	// "etl" is in the names of jobs 0, 2, 3, 5, 6, whatever the case.
	want := []string{ids[6], ids[5], ids[3], ids[2], ids[0]}
	if got, pages := page(&pb.ListJobsRequest{Limit: 2, Order: pb.JobOrder_JOB_ORDER_NEWEST_FIRST, Search: "ETL", CountTotal: true}); !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("search newest first: %v in %d pages, want %v in 3", got, pages, want)
	}
	slices.Reverse(want)
	if got, _ := page(&pb.ListJobsRequest{Limit: 2, Search: "etl"}); !slices.Equal(got, want) {
		t.Fatalf("search oldest first: %v, want %v", got, want)
	}
	// An id's part finds its job.
	if got, _ := page(&pb.ListJobsRequest{Search: ids[4][:len(ids[4])-1][2:]}); !slices.Contains(got, ids[4]) {
		t.Fatalf("search by a part of id %s: %v", ids[4], got)
	}
	// The oldest first listing counts too when asked.
	resp, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{Limit: 1, CountTotal: true})
	if err != nil || resp.GetTotal() != 7 || len(resp.GetJobs()) != 1 || resp.GetJobs()[0].GetId() != ids[0] {
		t.Fatalf("oldest first with a total: %v %v", resp, err)
	}

	// The tasks of every match, by state, come with the total: those of
	// the five jobs "etl" finds, one task each, whatever page is asked.
	for deadline := time.Now().Add(5 * time.Second); ; {
		resp, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{Limit: 1, Search: "etl", CountTotal: true})
		if err != nil {
			t.Fatal(err)
		}
		all, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{Search: "etl"})
		if err != nil {
			t.Fatal(err)
		}
		want, n := map[string]uint32{}, uint32(0)
		for _, j := range all.GetJobs() {
			for st, c := range j.GetStatus().GetTaskStates() {
				want[st] += c
				n += c
			}
		}
		if maps.Equal(resp.GetTaskStates(), want) && n == 5 && len(all.GetJobs()) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tasks of the jobs \"etl\" finds: %v, want %v (%d tasks of %d jobs, want 5 of 5)", resp.GetTaskStates(), want, n, len(all.GetJobs()))
		}
		time.Sleep(10 * time.Millisecond)
	}

	first, err := ts.s.ListJobs(ctx, &pb.ListJobsRequest{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{Order: pb.JobOrder_JOB_ORDER_NEWEST_FIRST, PageToken: first.GetNextPageToken()})
	wantCode(t, "a token of another order", err, codes.InvalidArgument, "page_token")
	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{Order: 7})
	wantCode(t, "an unknown order", err, codes.InvalidArgument, "order")
	_, err = ts.s.ListJobs(ctx, &pb.ListJobsRequest{Search: strings.Repeat("x", pb.MaxJobSearch+1)})
	wantCode(t, "a long search", err, codes.InvalidArgument, "search")
}

// wantTotal counts the jobs of the test above that req's search finds.
func wantTotal(req *pb.ListJobsRequest, ids []string) int {
	n := 0
	for i := range ids {
		if pb.MatchesSearch(ids[i], []string{"Nightly-ETL", "web", "etl-backfill"}[i%3], req.Search) {
			n++
		}
	}
	return n
}
