package placebench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

// Scenario is one placement workload: a host snapshot and the tasks of one
// pass.
type Scenario struct {
	Name    string
	Hosts   []placement.Host
	Tasks   []placement.Task
	Options placement.Options
	// NaiveTasks is how many of Tasks (from the start) the naive baseline
	// places; it scans every host per task, so it runs on a prefix. Zero
	// means all.
	NaiveTasks int
}

// Figures are what RunScenario measured.
type Figures struct {
	Name  string
	Hosts int
	Tasks int
	// BuildSeconds is the time to build the host index from the snapshot;
	// IndexBytes its memory once built and after the pass.
	BuildSeconds float64
	IndexBytes   IndexSize
	// PlaceSeconds is the time of the one Place call over all tasks.
	PlaceSeconds float64
	// PlaceCPUSeconds, NaiveCPUSeconds and SampledCPUSeconds are the
	// process's CPU time during the same calls: on a machine shared with
	// other work, the calls are also descheduled, which wall time counts
	// and CPU time does not.
	PlaceCPUSeconds   float64
	NaiveCPUSeconds   float64
	SampledCPUSeconds float64
	Placed            int
	Unplaced          int
	HostsUsed         int
	DecisionsPerSec   float64

	// The naive baseline on the first NaiveTasks tasks, and Place on the same
	// prefix (from a fresh index) for comparing how much each placed.
	NaiveTasks           int
	NaiveSeconds         float64
	NaiveDecisionsPerSec float64
	NaivePlaced          int
	PrefixPlaced         int
	// Ratio is DecisionsPerSec / NaiveDecisionsPerSec.
	Ratio float64

	// The sampled baseline (placement.SampledPlace, kube-scheduler's
	// adaptive sample size) on the same prefix and snapshot, and the
	// quality of its placement against the full scan's on that prefix
	// (placement.SampleQuality.Fraction).
	SampledHosts           int
	SampledSeconds         float64
	SampledDecisionsPerSec float64
	SampledPlaced          int
	SampledRatio           float64
	SampledQuality         placement.SampleQuality
	Err                    string
}

func (f Figures) String() string {
	if f.Err != "" {
		return f.Name + ": " + f.Err
	}
	naive := "all tasks"
	if f.NaiveTasks < f.Tasks {
		naive = fmt.Sprintf("first %d tasks only", f.NaiveTasks)
	}
	return fmt.Sprintf("%s: %d hosts, %d tasks: placed %d (%d unplaced) on %d hosts in %.3fs = %.0f decisions/s (index build %.3fs); "+
		"full scan on %s: %.0f decisions/s (placed %d, optimised placed %d of the same); ratio %.1fx; "+
		"sampled (%d hosts scored per task): %.0f decisions/s, ratio %.1fx, quality %.3f of the full scan's fit",
		f.Name, f.Hosts, f.Tasks, f.Placed, f.Unplaced, f.HostsUsed, f.PlaceSeconds, f.DecisionsPerSec, f.BuildSeconds,
		naive, f.NaiveDecisionsPerSec, f.NaivePlaced, f.PrefixPlaced, f.Ratio,
		f.SampledHosts, f.SampledDecisionsPerSec, f.SampledRatio, f.SampledQuality.Fraction)
}

// RunScenario places the scenario's tasks once with Place and a prefix with
// NaivePlace and with SampledPlace, timing all three in the same run; the
// sampled baseline's quality is then measured on the same prefix, untimed.
func RunScenario(s Scenario) Figures {
	f := Figures{Name: s.Name, Hosts: len(s.Hosts), Tasks: len(s.Tasks)}
	heap0 := HeapAlloc()
	start := time.Now()
	x, err := placement.NewHostIndex(s.Hosts)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	f.BuildSeconds = time.Since(start).Seconds()
	f.IndexBytes.Built = HeapAlloc() - heap0
	start, cpu := time.Now(), CPUTime()
	res := placement.Place(x, s.Tasks, s.Options)
	f.PlaceSeconds = time.Since(start).Seconds()
	f.PlaceCPUSeconds = (CPUTime() - cpu).Seconds()
	f.Placed, f.Unplaced = len(res.Assignments), len(res.Unplaced)
	f.HostsUsed = hostsUsed(res)
	f.DecisionsPerSec = float64(len(s.Tasks)) / max(f.PlaceSeconds, 1e-9)
	res = placement.Result{}
	f.IndexBytes.Used = HeapAlloc() - heap0
	runtime.KeepAlive(x)

	prefix := s.Tasks
	if s.NaiveTasks > 0 && s.NaiveTasks < len(prefix) {
		prefix = prefix[:s.NaiveTasks]
	}
	f.NaiveTasks = len(prefix)
	start, cpu = time.Now(), CPUTime()
	naive := placement.NaivePlace(s.Hosts, prefix)
	f.NaiveSeconds = time.Since(start).Seconds()
	f.NaiveCPUSeconds = (CPUTime() - cpu).Seconds()
	f.NaivePlaced = len(naive.Assignments)
	f.NaiveDecisionsPerSec = float64(len(prefix)) / max(f.NaiveSeconds, 1e-9)
	fresh, _ := placement.NewHostIndex(s.Hosts)
	f.PrefixPlaced = len(placement.Place(fresh, prefix, s.Options).Assignments)
	f.Ratio = f.DecisionsPerSec / max(f.NaiveDecisionsPerSec, 1e-9)

	sampled := Sampled(s.Hosts, prefix, s.Options.Seed)
	f.SampledHosts, f.SampledSeconds, f.SampledPlaced = sampled.Hosts, sampled.Seconds, sampled.Placed
	f.SampledCPUSeconds = sampled.CPUSeconds
	f.SampledDecisionsPerSec = float64(len(prefix)) / max(f.SampledSeconds, 1e-9)
	f.SampledRatio = f.DecisionsPerSec / max(f.SampledDecisionsPerSec, 1e-9)
	f.SampledQuality = sampled.Quality
	return f
}

// SampledRun is one run of the sampled baseline on a snapshot.
type SampledRun struct {
	// Hosts is how many feasible hosts were scored per task.
	Hosts      int
	Seconds    float64
	CPUSeconds float64
	Placed     int
	Quality    placement.SampleQuality
}

// Sampled times placement.SampledPlace on hosts and tasks with the default
// sample size, then measures its quality (untimed, it runs the full scan
// too).
func Sampled(hosts []placement.Host, tasks []placement.Task, seed uint64) SampledRun {
	opts := placement.SampleOptions{Seed: seed}
	run := SampledRun{Hosts: placement.SampleSize(len(hosts))}
	start, cpu := time.Now(), CPUTime()
	res := placement.SampledPlace(hosts, tasks, opts)
	run.Seconds = time.Since(start).Seconds()
	run.CPUSeconds = (CPUTime() - cpu).Seconds()
	run.Placed = len(res.Assignments)
	_, run.Quality = placement.SampledQuality(hosts, tasks, opts)
	return run
}

func hostsUsed(res placement.Result) int {
	used := map[model.HostID]bool{}
	for _, a := range res.Assignments {
		used[a.Host] = true
	}
	return len(used)
}

// IndexSize is what a host index holds in memory: live heap bytes after a
// garbage collection, less the same before it was built. Labels maps are
// shared with the snapshot and not counted.
type IndexSize struct {
	// Built is the index right after NewHostIndex; feasibility groups are
	// built on first use, so Used is the same index after a pass (groups,
	// fit trees and instance counts included).
	Built, Used int64
}

// CPUTime is the CPU time the process has used, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// HeapAlloc collects garbage twice and returns the live heap bytes; the
// difference of two readings around building something is its size.
func HeapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

var zones = []string{"a", "b", "c", "d", "e"}

// clusterHosts makes n hosts of 32 cores, 128 GiB, 1 TB disk and 100 ports
// over five zones and racks of 40; every twentieth host has 4 GPUs.
func clusterHosts(n int) []placement.Host {
	hosts := make([]placement.Host, n)
	for i := range hosts {
		h := placement.Host{
			ID:          model.HostID("c1/host-" + strconv.Itoa(i)),
			Cluster:     "c1",
			Free:        model.Resources{MilliCPU: 32_000, MemMB: 131072, DiskMB: 1000000},
			Ports:       100,
			Schedulable: true,
			Labels: map[string]string{
				"zone": zones[i%len(zones)],
				"rack": "r" + strconv.Itoa(i/40),
			},
		}
		if i%20 == 0 {
			h.Free.GPU = 4
			h.Labels["gpu"] = "a100"
		}
		hosts[i] = h
	}
	return hosts
}

// EquivalenceBatch is batch work in equivalence classes: jobs of identical
// tasks (one resource shape per job, no constraints), packed.
func EquivalenceBatch(hosts, jobs, tasksPerJob int, seed uint64) Scenario {
	r := rand.New(rand.NewPCG(seed, 1))
	s := Scenario{
		Name:       fmt.Sprintf("equivalence-batch %dx%d", jobs, tasksPerJob),
		Hosts:      clusterHosts(hosts),
		Options:    placement.Options{Seed: seed, Strategy: placement.StrategyPack},
		NaiveTasks: 300,
	}
	cpus := []int64{500, 1000, 1000, 2000}
	mems := []int64{1024, 2048, 2048, 4096}
	s.Tasks = make([]placement.Task, 0, jobs*tasksPerJob)
	for j := range jobs {
		res := model.Resources{MilliCPU: cpus[r.IntN(len(cpus))], MemMB: mems[r.IntN(len(mems))], DiskMB: 1000}
		job := model.JobID("batch-" + strconv.Itoa(j))
		for range tasksPerJob {
			s.Tasks = append(s.Tasks, placement.Task{Ref: len(s.Tasks), Job: job, Resources: res})
		}
	}
	return s
}

// constraintShapes are the constraint sets the distinct and mixed scenarios
// draw from.
func constraintShapes() [][]model.Constraint {
	shapes := [][]model.Constraint{nil, nil, nil}
	for _, z := range zones {
		shapes = append(shapes,
			[]model.Constraint{{Key: "zone", Op: model.OpEquals, Values: []string{z}}},
			[]model.Constraint{{Key: "zone", Op: model.OpNotEquals, Values: []string{z}}})
	}
	shapes = append(shapes,
		[]model.Constraint{{Key: "zone", Op: model.OpIn, Values: []string{"a", "b"}}},
		[]model.Constraint{{Key: "gpu", Op: model.OpNotExists}},
		[]model.Constraint{{AnyOf: []model.Constraint{
			{Key: "zone", Op: model.OpEquals, Values: []string{"c"}},
			{Key: "rack", Op: model.OpIn, Values: []string{"r1", "r2", "r3"}},
		}}})
	return shapes
}

// DistinctTasks is all-distinct work: every task its own job, with its own
// resource amounts and a constraint set drawn from a pool, so no two tasks
// share an equivalence class.
func DistinctTasks(hosts, tasks int, seed uint64) Scenario {
	r := rand.New(rand.NewPCG(seed, 2))
	shapes := constraintShapes()
	s := Scenario{
		Name:       fmt.Sprintf("distinct %d tasks", tasks),
		Hosts:      clusterHosts(hosts),
		Options:    placement.Options{Seed: seed, Strategy: placement.StrategyPack},
		NaiveTasks: 2000,
		Tasks:      make([]placement.Task, tasks),
	}
	for i := range s.Tasks {
		s.Tasks[i] = placement.Task{
			Ref: i, Job: model.JobID("job-" + strconv.Itoa(i)),
			Resources: model.Resources{
				MilliCPU: 100 + r.Int64N(1900),
				MemMB:    256 + r.Int64N(8000),
				DiskMB:   r.Int64N(5000),
			},
			Constraints: shapes[r.IntN(len(shapes))],
			Ports:       r.IntN(3),
		}
	}
	return s
}

// ConstrainedMix mixes batch jobs with zone constraints, GPU jobs, services
// spread one per host and at most a few per zone, and small gangs.
func ConstrainedMix(hosts, jobs, tasksPerJob int, seed uint64) Scenario {
	r := rand.New(rand.NewPCG(seed, 3))
	shapes := constraintShapes()
	s := Scenario{
		Name:       fmt.Sprintf("constrained-mix %dx%d", jobs, tasksPerJob),
		Hosts:      clusterHosts(hosts),
		Options:    placement.Options{Seed: seed, Strategy: placement.StrategyPack},
		NaiveTasks: 1000,
	}
	gang := 0
	for j := range jobs {
		job := model.JobID("job-" + strconv.Itoa(j))
		t := placement.Task{Job: job, Resources: model.Resources{MilliCPU: 1000, MemMB: 2048, DiskMB: 500}}
		switch j % 5 {
		case 0: // batch, constrained
			t.Constraints = shapes[r.IntN(len(shapes))]
		case 1: // GPU training
			t.Resources.GPU = 1
			t.Resources.MilliCPU = 4000
		case 2: // service: one per host, spread over zones
			t.Strategy = placement.StrategySpread
			t.MaxPerHost = 1
			t.Spread = []placement.SpreadLimit{{Key: "zone", Max: tasksPerJob/len(zones) + 1}}
			t.Ports = 2
		case 3: // gangs of 8
			t.Resources.MilliCPU = 2000
		case 4: // rack-spread batch with a per-host limit
			t.MaxPerHost = 2
			t.Spread = []placement.SpreadLimit{{Key: "rack", Max: 20}}
		}
		for i := range tasksPerJob {
			tk := t
			tk.Ref = len(s.Tasks)
			if j%5 == 3 {
				if i%8 == 0 {
					gang++
				}
				tk.Gang = gang
			}
			s.Tasks = append(s.Tasks, tk)
		}
	}
	return s
}

// Standard is the benchmark set at full size.
func Standard() []Scenario {
	return []Scenario{
		EquivalenceBatch(50000, 1000, 1000, 1),
		DistinctTasks(10000, 100000, 1),
		ConstrainedMix(20000, 200, 500, 1),
	}
}

// Small is the same set at a size a unit test runs in well under a second.
func Small() []Scenario {
	s := []Scenario{
		EquivalenceBatch(500, 20, 100, 1),
		DistinctTasks(200, 1000, 1),
		ConstrainedMix(300, 20, 40, 1),
	}
	for i := range s {
		s[i].NaiveTasks = 100
	}
	return s
}
