package placement

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestCommitRejectsWhatAnotherWorkerTook(t *testing.T) {
	hosts := []Host{
		{ID: "h1", Free: model.Resources{MilliCPU: 4000}, Schedulable: true},
		{ID: "h2", Free: model.Resources{MilliCPU: 2000}, Schedulable: true},
	}
	shared, err := NewHostIndex(hosts)
	if err != nil {
		t.Fatal(err)
	}
	a := []Task{{Ref: 1, Job: "a", Resources: model.Resources{MilliCPU: 2000}}}
	b := []Task{{Ref: 2, Job: "b", Resources: model.Resources{MilliCPU: 2000}}}
	// Both workers see h2 (tightest) free and pick it.
	planA := Place(shared.Clone(), a, Options{})
	planB := Place(shared.Clone(), b, Options{})
	if planA.Assignments[0].Host != "h2" || planB.Assignments[0].Host != "h2" {
		t.Fatalf("both plans should pick h2: %v %v", planA, planB)
	}
	if got := shared.Commit(a, planA.Assignments); len(got.Committed) != 1 {
		t.Fatalf("first commit: %+v", got)
	}
	got := shared.Commit(b, planB.Assignments)
	if len(got.Committed) != 0 || len(got.Rejected) != 1 || got.Rejected[0].Reason.Code != Conflict {
		t.Fatalf("second commit should conflict: %+v", got)
	}
	if want := "conflict: host h2: insufficient cpu"; got.Rejected[0].Reason.String() != want {
		t.Fatalf("reason %q, want %q", got.Rejected[0].Reason.String(), want)
	}
	// Placed again against the shared view, the task goes to h1.
	retry := Place(shared.Clone(), b, Options{})
	if got := shared.Commit(b, retry.Assignments); len(got.Committed) != 1 || got.Committed[0].Host != "h1" {
		t.Fatalf("retry: %+v", got)
	}
}

func TestCommitGangIsAllOrNothing(t *testing.T) {
	hosts := []Host{
		{ID: "h1", Free: model.Resources{MilliCPU: 2000}, Schedulable: true},
		{ID: "h2", Free: model.Resources{MilliCPU: 2000}, Schedulable: true},
	}
	shared, _ := NewHostIndex(hosts)
	gang := []Task{
		{Ref: 1, Job: "g", Resources: model.Resources{MilliCPU: 2000}, Gang: 9},
		{Ref: 2, Job: "g", Resources: model.Resources{MilliCPU: 2000}, Gang: 9},
	}
	plan := Place(shared.Clone(), gang, Options{})
	if len(plan.Assignments) != 2 {
		t.Fatalf("plan: %+v", plan)
	}
	// Meanwhile one host is taken by another commit.
	other := []Task{{Ref: 3, Job: "o", Resources: model.Resources{MilliCPU: 1000}}}
	if got := shared.Commit(other, []Assignment{{Ref: 3, Host: "h2"}}); len(got.Committed) != 1 {
		t.Fatalf("other: %+v", got)
	}
	got := shared.Commit(gang, plan.Assignments)
	if len(got.Committed) != 0 || len(got.Rejected) != 2 {
		t.Fatalf("gang commit should fail whole: %+v", got)
	}
	h1, _ := shared.Host("h1")
	if h1.Free.MilliCPU != 2000 {
		t.Fatalf("failed gang held h1: free %v", h1.Free)
	}
}

// Several workers place concurrently against clones of one shared index and
// commit through one lock, as the shell does; however their views overlap,
// no host ends up overcommitted and every task is placed in the end.
func TestConcurrentWorkersDoNotDoubleBook(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var hosts []Host
	for i := range 200 {
		hosts = append(hosts, Host{
			ID:          model.HostID("h" + strconv.Itoa(i)),
			Free:        model.Resources{MilliCPU: 8000, MemMB: 8192},
			Labels:      map[string]string{"zone": string(rune('a' + i%3))},
			Schedulable: true,
		})
	}
	const workers = 4
	var tasks [workers][]Task
	for w := range workers {
		for i := range 300 { // 1,200 cpu asked of 1,600
			tasks[w] = append(tasks[w], Task{
				Ref: w*1000 + i, Job: model.JobID("j" + strconv.Itoa(w*10+i%10)),
				Resources:  model.Resources{MilliCPU: 1000, MemMB: int64(256 * (1 + r.IntN(4)))},
				MaxPerHost: 4,
			})
		}
	}
	shared, _ := NewHostIndex(hosts)
	var mu sync.Mutex
	var committed []Assignment
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pending := tasks[w]
			for round := 0; len(pending) > 0 && round < 50; round++ {
				mu.Lock()
				view := shared.Clone()
				mu.Unlock()
				plan := Place(view, pending, Options{Seed: uint64(w), Strategy: StrategySpread})
				mu.Lock()
				res := shared.Commit(pending, plan.Assignments)
				committed = append(committed, res.Committed...)
				mu.Unlock()
				retry := map[int]bool{}
				for _, u := range res.Rejected {
					retry[u.Ref] = true
				}
				for _, u := range plan.Unplaced {
					retry[u.Ref] = true
				}
				var next []Task
				for _, tk := range pending {
					if retry[tk.Ref] {
						next = append(next, tk)
					}
				}
				pending = next
			}
		}()
	}
	wg.Wait()
	var all []Task
	for w := range workers {
		all = append(all, tasks[w]...)
	}
	checkResult(t, hosts, all, Result{Assignments: committed, Unplaced: missing(all, committed)})
	if len(committed) != len(all) {
		t.Fatalf("placed %d of %d tasks", len(committed), len(all))
	}
}

func missing(tasks []Task, placed []Assignment) []Unplaced {
	done := map[int]bool{}
	for _, a := range placed {
		done[a.Ref] = true
	}
	var out []Unplaced
	for _, tk := range tasks {
		if !done[tk.Ref] {
			out = append(out, Unplaced{Ref: tk.Ref})
		}
	}
	return out
}

func TestReleaseAndUpsertKeepTheIndexCurrent(t *testing.T) {
	x, _ := NewHostIndex([]Host{
		{ID: "h1", Free: model.Resources{MilliCPU: 2000}, Schedulable: true, Labels: map[string]string{"zone": "a"}},
		{ID: "h2", Free: model.Resources{MilliCPU: 2000}, Schedulable: true, Labels: map[string]string{"zone": "b"}},
	})
	task := Task{Ref: 0, Job: "j", Resources: model.Resources{MilliCPU: 2000}, MaxPerHost: 1,
		Constraints: []model.Constraint{{Key: "zone", Op: model.OpEquals, Values: []string{"a"}}}}
	res := Place(x, []Task{task}, Options{})
	if len(res.Assignments) != 1 || res.Assignments[0].Host != "h1" {
		t.Fatalf("first: %+v", res)
	}
	if res := Place(x, []Task{task}, Options{}); len(res.Unplaced) != 1 {
		t.Fatalf("h1 is full and at its limit: %+v", res)
	}
	if err := x.Release("h1", task); err != nil {
		t.Fatal(err)
	}
	if res := Place(x, []Task{task}, Options{}); len(res.Assignments) != 1 {
		t.Fatalf("after release: %+v", res)
	}
	// h2 moves to zone a: the cached group for zone==a must follow.
	if err := x.UpsertHost(Host{ID: "h2", Free: model.Resources{MilliCPU: 2000}, Schedulable: true, Labels: map[string]string{"zone": "a"}}); err != nil {
		t.Fatal(err)
	}
	if res := Place(x, []Task{task}, Options{}); len(res.Assignments) != 1 || res.Assignments[0].Host != "h2" {
		t.Fatalf("after relabel: %+v", res)
	}
	if err := x.RemoveHost("h2"); err != nil {
		t.Fatal(err)
	}
	if err := x.Release("nope", task); err == nil {
		t.Fatal("release on an unknown host should fail")
	}
	if h, _ := x.Host("h2"); h.Schedulable {
		t.Fatal("removed host still schedulable")
	}
}
