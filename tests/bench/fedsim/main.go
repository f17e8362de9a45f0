// Command fedsim simulates the federation at the seeds' scale in one
// process and prints what it measured: the global entitlement pass, the
// routing of jobs, the failover of a region, and the gossip traffic, each
// beside a baseline measured in the same run. `make bench-federation` runs
// it at full size; `go test ./tests/bench/fedsim` runs it small.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/placement/placebench"
	"github.com/peloton-federated/peloton/tests/bench/inproc"
)

func main() {
	sizeName := flag.String("size", "full", "full or small")
	regions := flag.Int("regions", 0, "regions (0: the size's)")
	hosts := flag.Int("hosts", 0, "simulated hosts per region (0: the size's)")
	jobs := flag.Int("jobs", 0, "jobs per region (0: the size's)")
	perJob := flag.Int("tasks-per-job", 0, "tasks per job (0: the size's)")
	pools := flag.Int("pools", 0, "pools (0: the size's)")
	routeJobs := flag.Int("route-jobs", 0, "jobs routed by each chooser (0: the size's)")
	batchJobs := flag.Int("batch-jobs", 0, "jobs routed by the policy through CreateJobs (0: the size's)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	size, ok := sizes[*sizeName]
	if !ok {
		fmt.Fprintf(os.Stderr, "-size: %q is not full or small\n", *sizeName)
		os.Exit(2)
	}
	for _, o := range []struct {
		flag int
		into *int
	}{{*regions, &size.Regions}, {*hosts, &size.HostsPerRegion}, {*jobs, &size.JobsPerRegion},
		{*perJob, &size.TasksPerJob}, {*pools, &size.Pools}, {*routeJobs, &size.RouteJobs}, {*batchJobs, &size.BatchJobs}} {
		if o.flag > 0 {
			*o.into = o.flag
		}
	}
	if size.Regions < 3 || size.Regions > 200 {
		fmt.Fprintln(os.Stderr, "-regions: between 3 and 200 (one loopback address each)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	if *cpuProfile != "" {
		out, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "-cpuprofile:", err)
			os.Exit(2)
		}
		defer func() { pprof.StopCPUProfile(); out.Close() }()
	}
	res, err := run(ctx, size, logf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fedsim:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	res.print(os.Stdout)
}

// result is everything one run measured.
type result struct {
	Size       Size
	Populate   time.Duration // every region but the victim, concurrently
	Pass       passFigures
	Route      routeFigures
	Failover   failoverFigures
	Gossip     gossipFigures
	GossipBase gossipFigures
	// HeapMiB and CPU: the process's heap in use with every region
	// running, and its CPU time over the whole run.
	HeapMiB float64
	CPU     time.Duration
	Wall    time.Duration
}

// run builds the federation, measures, tears it down and measures the
// gossip baseline.
func run(ctx context.Context, size Size, logf func(string, ...any)) (*result, error) {
	res := &result{Size: size}
	start, cpu0 := time.Now(), placebench.CPUTime()
	countGossip()
	logf("starting %s", size)
	f, err := startFederation(ctx, size, logf)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	victim := f.regions[len(f.regions)-1]
	logf("every region sees every other alive; populating all but %s", victim.Name)
	if res.Populate, err = f.populate(ctx, f.regions[:len(f.regions)-1]); err != nil {
		return nil, err
	}
	logf("%d tasks running in %.1fs; populating %s alone (the failover baseline)",
		(size.Regions-1)*size.JobsPerRegion*size.TasksPerJob, res.Populate.Seconds(), victim.Name)
	initial, err := f.populate(ctx, f.regions[len(f.regions)-1:])
	if err != nil {
		return nil, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapMiB = float64(ms.HeapInuse) / (1 << 20)
	logf("%s: %d tasks running in %.1fs; heap in use %.0f MiB; counting gossip for %s",
		victim.Name, size.JobsPerRegion*size.TasksPerJob, initial.Seconds(), res.HeapMiB, size.GossipWindow)
	if res.Gossip, err = measureGossip(ctx, len(f.regions), size.GossipWindow); err != nil {
		return nil, err
	}
	logf("global entitlement pass")
	if res.Pass, err = f.measurePass(ctx); err != nil {
		return nil, err
	}
	logf("routing %d jobs with each chooser", size.RouteJobs)
	if res.Route, err = f.measureRouting(ctx, logf); err != nil {
		return nil, err
	}
	logf("crashing %s", victim.Name)
	if res.Failover, err = f.measureFailover(ctx, initial); err != nil {
		return nil, err
	}
	logf("%d tasks running elsewhere %.1fs after the crash; stopping", res.Failover.Tasks, res.Failover.Running.Seconds())
	f.stop()
	logf("gossip baseline: two members alone for %s", size.GossipWindow)
	if res.GossipBase, err = gossipBaseline(ctx, size.GossipWindow); err != nil {
		return nil, err
	}
	res.CPU, res.Wall = placebench.CPUTime()-cpu0, time.Since(start)
	return res, nil
}

// gossipBaseline counts the traffic of a pool of two members, each a
// region's gossip directory with no shard behind it.
func gossipBaseline(ctx context.Context, window time.Duration) (gossipFigures, error) {
	quiet := slog.New(slog.DiscardHandler)
	health := policy.HealthConfig{SuspectAfter: time.Second, FailAfter: 3 * time.Second, RecoverAfter: time.Second}
	runCtx, cancel := context.WithCancel(ctx)
	var dirs []*federation.GossipDirectory
	done := make(chan struct{}, 2)
	defer func() {
		cancel()
		for range dirs {
			<-done
		}
	}()
	for i, name := range []string{"base-a", "base-b"} {
		ip := fmt.Sprintf("127.0.0.%d", i+1)
		var join []string
		if i > 0 {
			join = []string{dirs[0].GossipAddr()}
		}
		d, err := federation.NewGossipDirectory(runCtx, gossip.Config{NodeName: name + "-0", Region: name, Role: "shard",
			APIAddr: net.JoinHostPort(ip, "1"), BindAddr: net.JoinHostPort(ip, "0"), Join: join, Profile: gossip.ProfileLocal, Logger: quiet},
			health, func(bool) {}, quiet)
		if err != nil {
			return gossipFigures{}, err
		}
		dirs = append(dirs, d)
		go func() { d.Run(runCtx, 250*time.Millisecond); done <- struct{}{} }()
	}
	err := inproc.WaitFor(ctx, time.Minute, func() bool {
		for _, d := range dirs {
			for _, r := range d.Regions() {
				if r.Health != "alive" || len(d.Regions()) != 2 {
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return gossipFigures{}, fmt.Errorf("baseline pool: %w", err)
	}
	return measureGossip(ctx, len(dirs), window)
}

func (r *result) print(w io.Writer) {
	s := r.Size
	fmt.Fprintf(w, "Federation simulation: %s; one process, GOMAXPROCS %d\n", s, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "  setup: %d regions' tasks running in %.2fs; heap in use %.0f MiB; whole run %.0fs wall, %.0fs CPU\n\n",
		s.Regions-1, r.Populate.Seconds(), r.HeapMiB, r.Wall.Seconds(), r.CPU.Seconds())
	p := r.Pass
	fmt.Fprintf(w, "global entitlement pass (%d pools × %d regions)\n", p.Pools, p.Regions)
	fmt.Fprintf(w, "  gather the regions' states (gRPC)   %10.1f ms  (a whole gather on attempt %d)\n", ms(p.Gather), p.Attempts)
	fmt.Fprintf(w, "  split, every region                 %10.1f ms  (CPU %.1f ms)\n", ms(p.Split), ms(p.SplitCPU))
	fmt.Fprintf(w, "  split, one region (baseline)        %10.1f ms  (CPU %.1f ms)\n", ms(p.SplitOne), ms(p.SplitOneCPU))
	fmt.Fprintf(w, "  × one region                        %10.2f×\n\n", ratio(p.Split, p.SplitOne))
	rt := r.Route
	fmt.Fprintf(w, "routing (%d single-task jobs per chooser, %d callers, at %s)\n", rt.Jobs, rt.Clients, "r00")
	fmt.Fprintf(w, "  no-op decision (regions in turn)    %10.0f jobs/s\n", rt.NoOp)
	fmt.Fprintf(w, "  routing policy                      %10.0f jobs/s  (target 10,000: %s)\n", rt.Policy, metOrMissed(rt.Policy >= 10000))
	fmt.Fprintf(w, "  × no-op                             %10.2f×\n", rt.Policy/rt.NoOp)
	fmt.Fprintf(w, "  policy decisions alone              %10.0f /s  (policy.ChooseRegion on one gather's states)\n", rt.Decisions)
	fmt.Fprintf(w, "  jobs per region (policy)            %s\n", byRegion(rt.PolicyBy))
	if rt.BatchJobs > 0 {
		fmt.Fprintf(w, "  policy through CreateJobs           %10.0f jobs/s  (%d jobs, %d per request, %d callers; target 10,000: %s)\n",
			rt.Batch, rt.BatchJobs, rt.BatchSize, rt.BatchClients, metOrMissed(rt.Batch >= 10000))
		fmt.Fprintf(w, "  × single creates (policy)           %10.2f×\n", rt.Batch/rt.Policy)
		fmt.Fprintf(w, "  jobs per region (CreateJobs)        %s\n", byRegion(rt.BatchBy))
	}
	fmt.Fprintln(w)
	fo := r.Failover
	fmt.Fprintf(w, "failover of %s (%d jobs, %d tasks; replicas held by %s)\n", fo.Victim, fo.Jobs, fo.Tasks, fo.Holder)
	fmt.Fprintf(w, "  declared failed after               %10.2f s\n", fo.Detected.Seconds())
	fmt.Fprintf(w, "  every task running elsewhere after  %10.2f s  (%.2f s after it was declared failed)\n", fo.Running.Seconds(), (fo.Running - fo.Detected).Seconds())
	fmt.Fprintf(w, "  baseline: the same tasks created    %10.2f s  (first create to all running, at setup)\n", fo.Initial.Seconds())
	fmt.Fprintf(w, "  relocation × creation               %10.2f×  (from declared failed)\n\n", ratio(fo.Running-fo.Detected, fo.Initial))
	g, b := r.Gossip, r.GossipBase
	fmt.Fprintf(w, "gossip traffic sent per region (memberlist UDP + TCP, over %.0fs)\n", g.Window.Seconds())
	fmt.Fprintf(w, "  %2d regions                          %10.0f B/s  (UDP %.0f, TCP %.0f)\n", g.Members, g.UDP+g.TCP, g.UDP, g.TCP)
	fmt.Fprintf(w, "  %2d regions (baseline)               %10.0f B/s  (UDP %.0f, TCP %.0f)\n", b.Members, b.UDP+b.TCP, b.UDP, b.TCP)
	fmt.Fprintf(w, "  × baseline                          %10.2f×\n", (g.UDP+g.TCP)/(b.UDP+b.TCP))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

func byRegion(m map[string]int) string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, m[n]))
	}
	return strings.Join(parts, ", ")
}
