package jobmgr

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

func viewJob(id string, at time.Time) *model.Job {
	return &model.Job{ID: model.JobID(id), Status: model.JobStatus{CreateTime: at}}
}

func listed(v *jobsView) []string {
	var out []string
	v.list(func(j *model.Job) bool { out = append(out, string(j.ID)); return true })
	return out
}

// The view lists jobs by creation time, then id, whether they were merged
// in order, out of order or not yet; a removed job is gone; readers that
// list while jobs are added and merged see a sorted list (run with -race).
func TestJobsViewOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var v jobsView
	v.mu.name = "jobsView.mu"
	v.add(viewJob("b", t0.Add(2)), viewJob("a", t0.Add(2)), viewJob("c", t0.Add(1)))
	if got, want := listed(&v), []string{"c", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("before a merge: %v, want %v", got, want)
	}
	v.merge()
	v.add(viewJob("d", t0.Add(3)))       // after the last: appended
	v.add(viewJob("e", t0.Add(1500000))) // after too
	v.merge()
	v.add(viewJob("aa", t0)) // before the first: merged
	if got, want := listed(&v), []string{"aa", "c", "a", "b", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("added out of order, not merged: %v, want %v", got, want)
	}
	v.merge()
	if got, want := listed(&v), []string{"aa", "c", "a", "b", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("merged: %v, want %v", got, want)
	}
	v.remove("a")
	if got, want := listed(&v), []string{"aa", "c", "b", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("after a removal: %v, want %v", got, want)
	}
	if v.get("a") != nil || v.get("b") == nil {
		t.Fatal("get after a removal")
	}
	v.set(&model.Job{ID: "b", Status: model.JobStatus{CreateTime: t0.Add(2), State: model.JobRunning}})
	if v.get("b").Status.State != model.JobRunning {
		t.Fatal("set does not show")
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var last *model.Job
				v.list(func(j *model.Job) bool {
					if last != nil && !before(last, j) {
						t.Errorf("listed %s after %s", j.ID, last.ID)
						return false
					}
					last = j
					return true
				})
			}
		}()
	}
	for i := range 6000 { // past minTail: the tail is folded into order
		at := t0.Add(time.Duration(10+i%7) * time.Hour).Add(time.Duration(i))
		v.add(viewJob(fmt.Sprintf("j%05d", i), at))
		if i%10 == 0 {
			v.merge()
		}
	}
	close(stop)
	wg.Wait()
	v.merge()
	if n := len(listed(&v)); n != 6005 {
		t.Fatalf("%d jobs listed, want 6005", n)
	}
}
