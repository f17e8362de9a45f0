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
					if last != nil && !Before(last, j) {
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

// A walk from a job's key goes on after it, in either order, across the
// merged order, the tail and the jobs not merged yet; a key of no listed
// job starts at its place.
func TestJobsViewWalkFromAKey(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var v jobsView
	v.mu.name = "jobsView.mu"
	var all []string
	for i := range 30 {
		id := fmt.Sprintf("j%02d", i)
		all = append(all, id)
		v.add(viewJob(id, t0.Add(time.Duration(i))))
		if i == 9 || i == 19 {
			v.merge() // some in the order, some in the tail, some added only
		}
	}
	walked := func(from *JobKey, newest bool, n int) []string {
		var out []string
		v.walk(from, newest, func(j *model.Job) bool {
			out = append(out, string(j.ID))
			return len(out) < n
		})
		return out
	}
	if got := walked(nil, false, 100); !slices.Equal(got, all) {
		t.Fatalf("oldest first: %v", got)
	}
	rev := slices.Clone(all)
	slices.Reverse(rev)
	if got := walked(nil, true, 100); !slices.Equal(got, rev) {
		t.Fatalf("newest first: %v", got)
	}
	for _, k := range []int{0, 9, 10, 15, 20, 29} {
		key := &JobKey{Created: t0.Add(time.Duration(k)), ID: model.JobID(all[k])}
		if got, want := walked(key, false, 5), all[k+1:min(k+6, 30)]; !slices.Equal(got, want) {
			t.Errorf("after %s oldest first: %v, want %v", all[k], got, want)
		}
		want := slices.Clone(all[max(0, k-5):k])
		slices.Reverse(want)
		if got := walked(key, true, 5); !slices.Equal(got, want) {
			t.Errorf("after %s newest first: %v, want %v", all[k], got, want)
		}
	}
	// A key between two jobs (its job gone): the walk starts at its place.
	gap := &JobKey{Created: t0.Add(12), ID: "j12x"}
	if got := walked(gap, false, 2); !slices.Equal(got, []string{"j13", "j14"}) {
		t.Errorf("after a key of no job, oldest first: %v", got)
	}
	if got := walked(gap, true, 2); !slices.Equal(got, []string{"j12", "j11"}) {
		t.Errorf("after a key of no job, newest first: %v", got)
	}
	if v.size() != 30 {
		t.Errorf("size %d, want 30", v.size())
	}
}
