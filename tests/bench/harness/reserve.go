package harness

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// The host reservation benchmark: hosts of 10 cores, each 9/10 full of
// one-core tasks of one pool (at most 9 a host) that end after 5-14 s and
// are replaced from a long queue, then big tasks of 10 cores each, a whole
// host, in a pool of their own entitled to the rest. It
// runs twice in simulated time (the engine on the sim host manager and a
// fake clock, so the figures are the scheduler's decisions, not this
// machine's speed): with reservations off, the baseline, and on (after
// 30 s, 2 hosts per pool). It reports how many big tasks ran and how
// long they waited, and the small tasks done per simulated minute beside
// the baseline's: what the reservations cost the small work.

// ReserveSize is the size of the reservation benchmark.
type ReserveSize struct {
	Hosts, Big int
	Run        time.Duration // simulated time after the big tasks arrive
}

// ReserveSizes are the benchmark's sizes.
var ReserveSizes = map[string]ReserveSize{
	SizeFull:  {Hosts: 100, Big: 20, Run: 15 * time.Minute},
	SizeSmall: {Hosts: 20, Big: 4, Run: 3 * time.Minute},
}

// ReserveRun is one run of the benchmark.
type ReserveRun struct {
	Reservations bool
	BigRan       int
	// Waits are the big tasks' waits from their arrival to RUNNING,
	// sorted; a big task that never ran is not in it.
	Waits []time.Duration
	// SmallPerMin is the small tasks done per simulated minute while the
	// big tasks were there.
	SmallPerMin float64
	Wall        time.Duration
}

// ReserveResult is the benchmark's two runs.
type ReserveResult struct {
	Size    ReserveSize
	Off, On ReserveRun
	Err     string
}

// RunReservation runs the benchmark at a size.
func RunReservation(ctx context.Context, size string) ReserveResult {
	sz, ok := ReserveSizes[size]
	if !ok {
		return ReserveResult{Err: fmt.Sprintf("no size %q", size)}
	}
	res := ReserveResult{Size: sz}
	var err error
	if res.Off, err = reserveRun(ctx, sz, false); err == nil {
		res.On, err = reserveRun(ctx, sz, true)
	}
	if err != nil {
		res.Err = err.Error()
	}
	return res
}

func reserveRun(ctx context.Context, sz ReserveSize, on bool) (ReserveRun, error) {
	started := time.Now()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := make([]sim.HostSpec, sz.Hosts)
	for i := range hosts {
		hosts[i] = sim.HostSpec{Name: fmt.Sprintf("h%03d", i), Capacity: model.Resources{MilliCPU: 10000, MemMB: 64 << 10}}
	}
	plugin, err := sim.New(sim.Config{Cluster: Cluster, Hosts: hosts, Clock: clk, DefaultDuration: time.Hour})
	if err != nil {
		return ReserveRun{}, err
	}
	cfg := jobmgr.ReservationConfig{After: -1}
	if on {
		cfg = jobmgr.ReservationConfig{After: 30 * time.Second, PerPool: 2}
	}
	eng := jobmgr.New(jobmgr.Config{Region: "bench", Store: memstore.New(), Plugins: []hostmgr.Plugin{plugin}, Clock: clk,
		EventRetention: 10 * 365 * 24 * time.Hour, Reservation: cfg})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-eng.Ready()
	// A simulated second passes once the engine has made a pass after it
	// and then no more for a while (it has caught up), so that the
	// figures do not depend on how fast this machine runs the passes.
	// Quiet is a few times the mean pass, so that a long pass is not
	// taken for the end of the work.
	passes := func() (uint64, time.Duration) {
		st := eng.Stats()
		n, mean := st.PassLatency["step"].Count, time.Duration(0)
		for _, part := range []string{"step", "write", "apply"} {
			if h := st.PassLatency[part]; h.Count > 0 {
				mean += time.Duration(h.Sum / float64(h.Count) * float64(time.Second))
			}
		}
		return n, mean
	}
	advance := func() {
		before, mean := passes()
		clk.Advance(time.Second)
		deadline := time.Now().Add(5 * time.Second)
		last, quietSince := before, time.Now()
		for time.Now().Before(deadline) && (last == before || time.Since(quietSince) < 5*time.Millisecond+3*mean) {
			time.Sleep(time.Millisecond)
			if n, _ := passes(); n != last {
				last, quietSince = n, time.Now()
			}
		}
	}

	// Two teams: the small tasks' pool may use 9/10 of the cluster, the
	// big tasks' the rest, so that each pool's entitlement admits its
	// work while the hosts' free room is one core on each.
	smallSlots := uint32(sz.Hosts * 9)
	for _, p := range []model.Pool{
		{Path: "/small", Reservation: model.Resources{MilliCPU: int64(smallSlots) * 1000, MemMB: int64(smallSlots) * 64}},
		{Path: "/big", Reservation: model.Resources{MilliCPU: int64(sz.Hosts) * 1000, MemMB: int64(sz.Hosts) * 64}},
	} {
		p.Limit = p.Reservation
		p.Share = model.EqualShares(1)
		if _, err := jobmgr.Do(ctx, eng, jobmgr.CreatePool{Pool: p}); err != nil {
			return ReserveRun{}, err
		}
	}
	small := model.JobSpec{Name: "small", Type: model.JobBatch, Pool: "/small", MaxAttempts: 3,
		Instances: 100_000, MaxRunning: smallSlots, MaxPerHost: 9,
		Task: model.TaskSpec{Command: "sim", Env: map[string]string{sim.EnvDuration: "10s"}, Resources: model.Resources{MilliCPU: 1000, MemMB: 64}}}
	// The first 20,000 runs last 5-14 s, so that a few end at a time; the
	// runs that replace them start spread out and last 10 s.
	for d := range 10 {
		var ranges []model.InstanceRange
		for i := uint32(d); i < 20_000; i += 10 {
			ranges = append(ranges, model.InstanceRange{From: i, To: i})
		}
		small.Overrides = append(small.Overrides, model.InstanceOverride{Instances: ranges,
			Task: model.TaskSpec{Env: map[string]string{sim.EnvDuration: fmt.Sprintf("%ds", 5+d)}}})
	}
	sj, err := jobmgr.Do(ctx, eng, jobmgr.CreateJob{Spec: small})
	if err != nil {
		return ReserveRun{}, err
	}
	succeeded := func() int {
		j, err := eng.Reads().GetJob(sj.ID)
		if err != nil {
			return 0
		}
		return int(j.Status.TaskStates[model.TaskSucceeded])
	}
	// Warm up: the hosts full, and a minute of churn.
	for range 90 {
		advance()
	}
	arrived := clk.Now()
	big := model.JobSpec{Name: "big", Type: model.JobBatch, Pool: "/big", MaxAttempts: 3, Instances: uint32(sz.Big),
		Task: model.TaskSpec{Command: "sim", Env: map[string]string{sim.EnvDuration: "20s"}, Resources: model.Resources{MilliCPU: 10000, MemMB: 64}}}
	bj, err := jobmgr.Do(ctx, eng, jobmgr.CreateJob{Spec: big})
	if err != nil {
		return ReserveRun{}, err
	}
	doneBefore := succeeded()
	ran := map[uint32]time.Duration{}
	for clk.Now().Sub(arrived) < sz.Run {
		advance()
		tasks, err := eng.Reads().ListTasks(bj.ID, nil)
		if err != nil {
			return ReserveRun{}, err
		}
		for _, t := range tasks {
			if _, seen := ran[t.ID.Instance]; !seen && (t.State == model.TaskRunning || t.State == model.TaskSucceeded) {
				ran[t.ID.Instance] = clk.Now().Sub(arrived)
			}
		}
	}
	span := clk.Now().Sub(arrived)
	out := ReserveRun{Reservations: on, BigRan: len(ran), Wall: time.Since(started),
		SmallPerMin: float64(succeeded()-doneBefore) / span.Minutes()}
	for _, w := range ran {
		out.Waits = append(out.Waits, w)
	}
	sort.Slice(out.Waits, func(i, j int) bool { return out.Waits[i] < out.Waits[j] })
	return out, nil
}

// ReserveTable prints the benchmark's runs and the ratio of the small
// tasks' throughput against the baseline's.
func ReserveTable(w io.Writer, r ReserveResult) error {
	if r.Err != "" {
		_, err := fmt.Fprintf(w, "host reservation: %s\n", r.Err)
		return err
	}
	fmt.Fprintf(w, "\nhost reservation: %d hosts of 10 cores, 9/10 full of 1-core tasks (5-14 s) replaced from a queue; %d tasks of 10 cores; %s simulated\n",
		r.Size.Hosts, r.Size.Big, r.Size.Run)
	fmt.Fprintf(w, "%-16s %10s %12s %12s %14s %12s %8s\n", "reservations", "big ran", "wait p50", "wait max", "small done/min", "× baseline", "wall")
	for _, run := range []ReserveRun{r.Off, r.On} {
		name := "off (baseline)"
		if run.Reservations {
			name = "on (after 30s)"
		}
		p50, maxW := "never", "never"
		if n := len(run.Waits); n > 0 {
			p50, maxW = run.Waits[n/2].String(), run.Waits[n-1].String()
			if n < r.Size.Big {
				maxW = "never"
			}
		}
		ratio := 1.0
		if r.Off.SmallPerMin > 0 {
			ratio = run.SmallPerMin / r.Off.SmallPerMin
		}
		fmt.Fprintf(w, "%-16s %6d/%-3d %12s %12s %14.0f %11.2f× %8s\n", name, run.BigRan, r.Size.Big, p50, maxW,
			run.SmallPerMin, ratio, run.Wall.Round(100*time.Millisecond))
	}
	return nil
}
