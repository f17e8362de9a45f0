package federation

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// listingShard answers ListJobs over its jobs as a region does: in the
// asked order after the token, a page at a time, with a total.
type listingShard struct {
	unimplementedShard
	jobs []*pb.Job // oldest first
}

func (s *listingShard) ListJobs(_ context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	after, ok, err := pb.ParseJobPageTokenFor(req.PageToken, req.Order)
	if err != nil {
		return nil, err
	}
	jobs := slices.Clone(s.jobs)
	pb.SortJobsFor(jobs, req.Order)
	out := &pb.ListJobsResponse{}
	var page []*pb.Job
	for _, j := range jobs {
		if !pb.MatchesSearch(j.GetId(), j.GetSpec().GetName(), req.Search) {
			continue
		}
		out.Total++
		if req.CountTotal {
			for st, n := range j.GetStatus().GetTaskStates() {
				if out.TaskStates == nil {
					out.TaskStates = map[string]uint32{}
				}
				out.TaskStates[st] += n
			}
		}
		if !ok || pb.KeyOf(j).CompareFor(after, req.Order) > 0 {
			page = append(page, j)
		}
	}
	if !req.CountTotal {
		out.Total = 0
	}
	if n := pb.JobPageSize(req.Limit); len(page) > n {
		page = page[:n]
		out.NextPageToken = pb.KeyOf(page[n-1]).TokenFor(req.Order)
	}
	out.Jobs = page
	return out, nil
}

// TestListJobsPagesRegionsInOrder pages through the jobs of three regions
// newest first from one of them: every job once, in order, and each page
// counts the jobs of all regions.
func TestListJobsPagesRegionsInOrder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	shards := map[string]*listingShard{"east": {}, "west": {}, "central": {}}
	var oldest []string
	for i := range 17 {
		id := fmt.Sprintf("j%02d", i)
		region := []string{"east", "west", "central"}[i%3]
		shards[region].jobs = append(shards[region].jobs, &pb.Job{Id: id, Spec: &pb.JobSpec{Name: fmt.Sprintf("n%d", i%2)},
			Status: &pb.JobStatus{CreateTime: timestamppb.New(t0.Add(time.Duration(i) * time.Second)),
				TaskStates: map[string]uint32{"RUNNING": 1, "PENDING": uint32(i % 2 * 2)}}})
		oldest = append(oldest, id)
	}
	var named []namedShard
	for _, r := range []string{"east", "west", "central"} {
		named = append(named, namedShard{r, shards[r]})
	}
	regions, _, _ := serveRegions(t, named...)
	jobs := pb.NewJobServiceClient(dial(t, regions[0].Addr))
	ctx := context.Background()

	for _, order := range []pb.JobOrder{pb.JobOrder_JOB_ORDER_OLDEST_FIRST, pb.JobOrder_JOB_ORDER_NEWEST_FIRST} {
		want := slices.Clone(oldest)
		if order == pb.JobOrder_JOB_ORDER_NEWEST_FIRST {
			slices.Reverse(want)
		}
		req := &pb.ListJobsRequest{Limit: 4, Order: order, CountTotal: true}
		var got []string
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("%v: paging does not end", order)
			}
			resp, err := jobs.ListJobs(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetJobs()) > 4 || resp.GetTotal() != 17 {
				t.Fatalf("%v: a page of %d jobs, total %d, want at most 4 of 17", order, len(resp.GetJobs()), resp.GetTotal())
			}
			for _, j := range resp.GetJobs() {
				got = append(got, j.GetId())
			}
			if resp.GetNextPageToken() == "" {
				break
			}
			req.PageToken = resp.GetNextPageToken()
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: paged %v, want %v", order, got, want)
		}
	}

	// A search is passed to every region; their totals add up.
	resp, err := jobs.ListJobs(ctx, &pb.ListJobsRequest{Search: "N1", Order: pb.JobOrder_JOB_ORDER_NEWEST_FIRST, Limit: 3, CountTotal: true})
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(resp.GetJobs()); resp.GetTotal() != 8 || !slices.Equal(ids, []string{"j15", "j13", "j11"}) {
		t.Fatalf("search n1: %v of %d, want [j15 j13 j11] of 8", ids, resp.GetTotal())
	}
	// So do the tasks of the matching jobs, by state.
	if ts := resp.GetTaskStates(); len(ts) != 2 || ts["RUNNING"] != 8 || ts["PENDING"] != 16 {
		t.Fatalf("search n1: tasks %v, want RUNNING 8 and PENDING 16 of all regions", ts)
	}
}

func idsOf(jobs []*pb.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.GetId()
	}
	return out
}
