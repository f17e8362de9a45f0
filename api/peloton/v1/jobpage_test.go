package pelotonv1

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestMergeJobPagesOfRegions pages through jobs spread over three regions
// as the federation does, in both orders: every region answers a page
// after the same token, the merge keeps the first page's worth.
func TestMergeJobPagesOfRegions(t *testing.T) {
	for _, order := range []JobOrder{JobOrder_JOB_ORDER_UNSPECIFIED, JobOrder_JOB_ORDER_NEWEST_FIRST} {
		t.Run(order.String(), func(t *testing.T) { testMergeJobPages(t, order) })
	}
}

func testMergeJobPages(t *testing.T, order JobOrder) {
	t0 := time.Unix(1_700_000_000, 0)
	regions := map[string][]*Job{}
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("j%02d", i)
		// Two jobs share each creation time: ties are broken by id.
		j := &Job{Id: id, Status: &JobStatus{CreateTime: timestamppb.New(t0.Add(time.Duration(i/2) * time.Second))}}
		region := []string{"east", "west", "central"}[i%3]
		regions[region] = append(regions[region], j)
		want = append(want, id)
	}
	if order == JobOrder_JOB_ORDER_NEWEST_FIRST {
		slices.Reverse(want)
		for _, jobs := range regions {
			slices.Reverse(jobs)
		}
	}
	// page is what one region answers: limit jobs after the token.
	page := func(jobs []*Job, token string, limit uint32) (out []*Job, more bool) {
		after, ok, err := ParseJobPageTokenFor(token, order)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if !ok || KeyOf(j).CompareFor(after, order) > 0 {
				out = append(out, j)
			}
		}
		if n := JobPageSize(limit); len(out) > n {
			return out[:n], true
		}
		return out, false
	}
	for _, limit := range []uint32{1, 4, 7, 23, 100} {
		var got []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			var union []*Job
			more := false
			for _, jobs := range regions {
				p, m := page(jobs, token, limit)
				union, more = append(union, p...), more || m
			}
			jobs, next := MergeJobPageFor(union, limit, more, order)
			if len(jobs) > int(limit) {
				t.Fatalf("limit %d: a page of %d", limit, len(jobs))
			}
			for _, j := range jobs {
				got = append(got, j.GetId())
			}
			if next == "" {
				break
			}
			token = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: paged %v, want %v", limit, got, want)
		}
	}
}

func TestJobPageTokenRoundTrip(t *testing.T) {
	k := JobKey{Created: time.Unix(1_700_000_000, 123456789).UTC(), ID: "a:b"}
	got, ok, err := ParseJobPageToken(k.Token())
	if err != nil || !ok || got.Compare(k) != 0 {
		t.Fatalf("round trip: %v %v %v", got, ok, err)
	}
	for _, bad := range []string{"x", "aGVsbG8", KeyOf(&Job{Id: "x"}).Token()[:4]} {
		if _, _, err := ParseJobPageToken(bad); err == nil {
			t.Errorf("%q read as a page token", bad)
		}
	}
}

func TestJobPageTokenOfAnotherOrder(t *testing.T) {
	k := JobKey{Created: time.Unix(1_700_000_000, 0).UTC(), ID: "x"}
	newest := k.TokenFor(JobOrder_JOB_ORDER_NEWEST_FIRST)
	if got, ok, err := ParseJobPageTokenFor(newest, JobOrder_JOB_ORDER_NEWEST_FIRST); err != nil || !ok || got.Compare(k) != 0 {
		t.Fatalf("newest first round trip: %v %v %v", got, ok, err)
	}
	if _, _, err := ParseJobPageToken(newest); err != ErrPageTokenOrder {
		t.Errorf("a newest first token read oldest first: %v", err)
	}
	if _, _, err := ParseJobPageTokenFor(k.Token(), JobOrder_JOB_ORDER_NEWEST_FIRST); err != ErrPageTokenOrder {
		t.Errorf("an oldest first token read newest first: %v", err)
	}
}

func TestMatchesSearch(t *testing.T) {
	for _, c := range []struct {
		id, name, search string
		want             bool
	}{
		{"abc-123", "Nightly ETL", "", true},
		{"abc-123", "Nightly ETL", "etl", true},
		{"abc-123", "Nightly ETL", "C-12", true},
		{"abc-123", "Nightly ETL", "daily", false},
	} {
		if got := MatchesSearch(c.id, c.name, c.search); got != c.want {
			t.Errorf("MatchesSearch(%q, %q, %q) = %v", c.id, c.name, c.search, got)
		}
	}
}
