package service

import (
	"context"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

func TestPageOf(t *testing.T) {
	items := []int{0, 1, 2, 3, 4}
	for _, tc := range []struct {
		offset, limit uint32
		want          []int
	}{
		{0, 0, []int{0, 1, 2, 3, 4}},
		{0, 2, []int{0, 1}},
		{3, 0, []int{3, 4}},
		{3, 10, []int{3, 4}},
		{4, 1, []int{4}},
		{5, 1, nil},
		{99, 0, nil},
	} {
		got := pageOf(items, tc.offset, tc.limit)
		if len(got) != len(tc.want) {
			t.Fatalf("offset %d limit %d: %v, want %v", tc.offset, tc.limit, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("offset %d limit %d: %v, want %v", tc.offset, tc.limit, got, tc.want)
			}
		}
	}
}

func TestListTasksPages(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	id := ts.create(5)
	ts.running(id, 5)
	page, err := ts.s.ListTasks(ctx, &pb.ListTasksRequest{JobId: id, Offset: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.GetTotal() != 5 || len(page.GetTasks()) != 2 || page.GetTasks()[0].GetInstance() != 1 || page.GetTasks()[1].GetInstance() != 2 {
		t.Fatalf("offset 1 limit 2: total %d, tasks %v", page.GetTotal(), page.GetTasks())
	}
	last, err := ts.s.ListTasks(ctx, &pb.ListTasksRequest{JobId: id, Offset: 4, Limit: 2})
	if err != nil || len(last.GetTasks()) != 1 || last.GetTasks()[0].GetInstance() != 4 {
		t.Fatalf("last page: %v %v", last, err)
	}
	none, err := ts.s.ListTasks(ctx, &pb.ListTasksRequest{JobId: id, States: []pb.TaskState{pb.TaskState_TASK_STATE_FAILED}, Limit: 2})
	if err != nil || none.GetTotal() != 0 || len(none.GetTasks()) != 0 {
		t.Fatalf("no failed tasks: %v %v", none, err)
	}
}
