package placement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// randomHosts makes n hosts over three zones and a few racks; some are GPU
// hosts, some unschedulable, some already run instances of group "g0".
func randomHosts(r *rand.Rand, n int) []Host {
	hosts := make([]Host, n)
	for i := range hosts {
		h := Host{
			ID:          model.HostID("h" + strconv.Itoa(i)),
			Cluster:     "c" + strconv.Itoa(i%3),
			Free:        model.Resources{MilliCPU: int64(1000 * r.IntN(16)), MemMB: int64(1024 * r.IntN(32)), DiskMB: int64(r.IntN(4) * 1000)},
			Ports:       r.IntN(5),
			Schedulable: r.IntN(10) > 0,
			Labels:      map[string]string{"zone": string(rune('a' + r.IntN(3)))},
			HostPool:    hostPoolNames[i%len(hostPoolNames)],
		}
		if r.IntN(3) > 0 {
			h.Labels["rack"] = "r" + strconv.Itoa(r.IntN(4))
		}
		if r.IntN(5) == 0 {
			h.Free.GPU = int64(r.IntN(4))
			h.GPUHost = true
		}
		if r.IntN(4) == 0 {
			h.Instances = map[string]int{"g0": r.IntN(2)}
		}
		hosts[i] = h
	}
	return hosts
}

// hostPoolNames are the host pools of random hosts, by index; the host
// pools of random tasks are those of their job.
var (
	hostPoolNames = []string{"shared", "batch", "shared", "services"}
	jobHostPools  = [][]string{nil, {"batch"}, {"batch", "shared"}, nil}
)

var constraintPool = [][]model.Constraint{
	nil,
	{{Key: "zone", Op: model.OpEquals, Values: []string{"a"}}},
	{{Key: "zone", Op: model.OpNotIn, Values: []string{"a", "b"}}},
	{{Key: "rack", Op: model.OpExists}},
	{{Key: "rack", Op: model.OpNotExists}, {Key: "zone", Op: model.OpNotEquals, Values: []string{"c"}}},
	{{AnyOf: []model.Constraint{{Key: "zone", Op: model.OpEquals, Values: []string{"b"}}, {Key: "rack", Op: model.OpIn, Values: []string{"r1", "r2"}}}}},
}

// randomTasks makes tasks of a few jobs; every job has one set of limits,
// as a job spec would.
func randomTasks(r *rand.Rand, n int) []Task {
	type spec struct {
		maxPerHost int
		spread     []SpreadLimit
		group      string
	}
	specs := make([]spec, 4)
	for j := range specs {
		if r.IntN(2) == 0 {
			specs[j].maxPerHost = 1 + r.IntN(3)
		}
		if r.IntN(3) == 0 {
			specs[j].spread = []SpreadLimit{{Key: "zone", Max: 1 + r.IntN(4)}}
		}
		if r.IntN(4) == 0 {
			specs[j].group = "g0"
		}
	}
	tasks := make([]Task, n)
	for i := range tasks {
		j := r.IntN(len(specs))
		t := Task{
			Ref:         i,
			Job:         model.JobID("j" + strconv.Itoa(j)),
			Resources:   model.Resources{MilliCPU: int64(100 * (1 + r.IntN(40))), MemMB: int64(512 * r.IntN(8)), DiskMB: int64(r.IntN(2) * 500)},
			Constraints: constraintPool[r.IntN(len(constraintPool))],
			HostPools:   jobHostPools[j],
			Ports:       r.IntN(2),
			MaxPerHost:  specs[j].maxPerHost,
			Spread:      specs[j].spread,
			SpreadGroup: specs[j].group,
			Strategy:    Strategy(r.IntN(3)),
		}
		// A job's cluster policy, as its spec would give it.
		switch j {
		case 0:
			t.AvoidClusters = []string{"c0"}
		case 1:
			t.Clusters = []string{"c1", "c2"}
			t.AvoidClusters = []string{"c2"}
		}
		if r.IntN(8) == 0 {
			t.Resources.GPU = 1
		}
		if r.IntN(5) == 0 {
			t.Gang = 1 + r.IntN(3)
		}
		tasks[i] = t
	}
	return tasks
}

// checkResult verifies a result against the hosts it was placed on by
// replaying it: every task accounted for once, gangs whole, no host
// overcommitted, every constraint and limit respected.
func checkResult(t *testing.T, hosts []Host, tasks []Task, res Result) {
	t.Helper()
	byID := map[model.HostID]int{}
	for i, h := range hosts {
		byID[h.ID] = i
	}
	seen := map[int]int{}
	for _, a := range res.Assignments {
		seen[a.Ref]++
	}
	for _, u := range res.Unplaced {
		seen[u.Ref]++
	}
	gangPlaced := map[int][2]int{}
	for _, tk := range tasks {
		if seen[tk.Ref] != 1 {
			t.Fatalf("task %d appears %d times in the result", tk.Ref, seen[tk.Ref])
		}
	}
	taskByRef := map[int]*Task{}
	for i := range tasks {
		taskByRef[tasks[i].Ref] = &tasks[i]
	}
	n := newNaive(hosts)
	for _, a := range res.Assignments {
		tk := taskByRef[a.Ref]
		h, ok := byID[a.Host]
		if !ok {
			t.Fatalf("task %d on unknown host %q", a.Ref, a.Host)
		}
		if validateTask(tk) != "" || !n.fits(h, tk) {
			t.Fatalf("task %d (%+v) does not fit host %+v as placed", a.Ref, *tk, n.hosts[h])
		}
		n.take(h, tk, 1)
	}
	for _, a := range res.Assignments {
		if g := taskByRef[a.Ref].Gang; g != 0 {
			c := gangPlaced[g]
			c[0]++
			gangPlaced[g] = c
		}
	}
	for _, u := range res.Unplaced {
		if g := taskByRef[u.Ref].Gang; g != 0 {
			c := gangPlaced[g]
			c[1]++
			gangPlaced[g] = c
		}
	}
	for g, c := range gangPlaced {
		if c[0] > 0 && c[1] > 0 {
			t.Fatalf("gang %d split: %d placed, %d not", g, c[0], c[1])
		}
	}
}

func TestPlaceAgainstNaiveReference(t *testing.T) {
	for iter := range 300 {
		r := rand.New(rand.NewPCG(uint64(iter), 1))
		hosts := randomHosts(r, 1+r.IntN(40))
		tasks := randomTasks(r, r.IntN(60))
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			x, err := NewHostIndex(hosts)
			if err != nil {
				t.Fatal(err)
			}
			res := Place(x, tasks, Options{Seed: uint64(iter)})
			checkResult(t, hosts, tasks, res)

			// The index's free view is the snapshot minus what was assigned.
			n := newNaive(hosts)
			for _, a := range res.Assignments {
				for i := range tasks {
					if tasks[i].Ref == a.Ref {
						n.take(indexOfHost(hosts, a.Host), &tasks[i], 1)
					}
				}
			}
			for _, want := range n.hosts {
				got, _ := x.Host(want.ID)
				if d := got.Free.Sub(want.Free); !d.Fits(model.Resources{}) || !(model.Resources{}).Fits(d) || got.Ports != want.Ports {
					t.Fatalf("host %s: index says free %v ports %d, replay says %v ports %d", want.ID, got.Free, got.Ports, want.Free, want.Ports)
				}
			}

			// Alone, a task places exactly when the exhaustive scan finds a host.
			for _, tk := range tasks {
				tk.Gang = 0
				alone := []Task{tk}
				naive := NaivePlace(hosts, alone)
				fresh, _ := NewHostIndex(hosts)
				opt := Place(fresh, alone, Options{Seed: uint64(iter)})
				if len(naive.Assignments) != len(opt.Assignments) {
					t.Fatalf("task %+v: naive placed %d, optimised %d (%v)", tk, len(naive.Assignments), len(opt.Assignments), opt.Unplaced)
				}
				if len(opt.Unplaced) == 1 && opt.Unplaced[0].Reason.Code == Unschedulable && opt.Unplaced[0].Reason.Feasible != 0 {
					t.Fatalf("task %+v unplaced but explanation counts feasible hosts: %v", tk, opt.Unplaced[0].Reason)
				}
				checkResult(t, hosts, alone, opt)
			}
		})
	}
}

func indexOfHost(hosts []Host, id model.HostID) int {
	for i := range hosts {
		if hosts[i].ID == id {
			return i
		}
	}
	return -1
}

func TestPlaceIsReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	hosts := randomHosts(r, 500)
	tasks := randomTasks(r, 3000)
	run := func(hs []Host) Result {
		x, err := NewHostIndex(hs)
		if err != nil {
			t.Fatal(err)
		}
		return Place(x, tasks, Options{Seed: 7})
	}
	first := run(hosts)
	if len(first.Assignments) == 0 {
		t.Fatal("nothing placed; the scenario tests nothing")
	}
	if again := run(hosts); !reflect.DeepEqual(first, again) {
		t.Fatal("same snapshot and seed gave different results")
	}
	shuffled := append([]Host(nil), hosts...)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if again := run(shuffled); !reflect.DeepEqual(first, again) {
		t.Fatal("shuffling the host snapshot changed the result")
	}
}
