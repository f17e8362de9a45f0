package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/tests/bench/harness"
)

// Sizes are the points of every curve: the full run that writes docs/curves
// and the quick run a test does in seconds.
type Sizes struct {
	Hosts       []int // decisions against hosts
	Baseline    int   // tasks the full and sampled scans place per point
	Tasks       []int // bytes per task against pending tasks
	TasksPerJob int
	Clients     []int // placed/s against clients
	ClientHosts int
	ClientJobs  int
	Relocated   []int // relocation time against relocated tasks
	RelocPerJob int
	RelocHosts  int
	Pools       []int // entitlement pass time against pools
	Regions     int
	// Rounds is how many times each placement and entitlement point is
	// measured (the best is kept); Runs, each end-to-end and relocation
	// point (the median is kept).
	Rounds, Runs  int
	Budget        time.Duration // per end-to-end point
	MemoryBudget  time.Duration // per memory point
	RelocateLimit time.Duration // per relocation point
}

// Full is what make bench-curves runs.
var Full = Sizes{
	Hosts: []int{1000, 2000, 5000, 10000, 20000, 50000}, Baseline: 500,
	Tasks: []int{10000, 30000, 100000, 300000, 1000000}, TasksPerJob: 1000,
	Clients: []int{1, 2, 4, 8, 16, 32, 64, 128, 256}, ClientHosts: 2000, ClientJobs: 3000,
	Relocated: []int{1000, 3000, 10000, 30000, 100000}, RelocPerJob: 1000, RelocHosts: 1000,
	Pools: []int{100, 300, 1000, 3000, 10000, 30000, 100000}, Regions: 10,
	Rounds: 5, Runs: 3,
	Budget: 5 * time.Minute, MemoryBudget: 5 * time.Minute, RelocateLimit: 5 * time.Minute,
}

// Quick is the same at sizes a test runs in seconds.
var Quick = Sizes{
	Hosts: []int{100, 200, 500}, Baseline: 50,
	Tasks: []int{1000, 2000, 5000}, TasksPerJob: 100,
	Clients: []int{1, 4, 16}, ClientHosts: 50, ClientJobs: 100,
	Relocated: []int{100, 200, 500}, RelocPerJob: 100, RelocHosts: 20,
	Pools: []int{100, 300, 1000}, Regions: 3,
	Rounds: 2, Runs: 1,
	Budget: time.Minute, MemoryBudget: time.Minute, RelocateLimit: time.Minute,
}

// curveNames are the curves in the order they run and are listed.
var curveNames = []string{"decisions-vs-hosts", "bytes-per-task", "placed-vs-clients", "relocation-vs-tasks", "entitlement-vs-pools"}

type config struct {
	out        string
	quick      bool
	only       string
	scenarios  string
	cpuProfile string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("curves", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.out, "out", "docs/curves", "directory to write NAME.svg, NAME.csv and README.md into")
	fs.BoolVar(&c.quick, "quick", false, "small points only (seconds), as the test runs")
	fs.StringVar(&c.only, "only", "", "run only these curves (comma-separated): "+strings.Join(curveNames, ", "))
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&c.scenarios, "scenarios", "", "directory of the bench scenario files (default: tests/bench/scenarios of this module)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	for _, n := range splitList(c.only) {
		if !contains(curveNames, n) {
			return c, fmt.Errorf("-only: no curve %q (curves: %s)", n, strings.Join(curveNames, ", "))
		}
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "curves:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.scenarios == "" {
		if cfg.scenarios, err = scenarioDir(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	z := Full
	if cfg.quick {
		z = Quick
	}
	chosen := curveNames
	if cfg.only != "" {
		chosen = splitList(cfg.only)
	}
	log := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	machine := harness.Machine()
	load := loadAverage()
	start := time.Now()
	var curves []*Curve
	for _, name := range curveNames {
		if !contains(chosen, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var c *Curve
		switch name {
		case "decisions-vs-hosts":
			c, err = decisionsCurve(z.Hosts, z.Baseline, z.Rounds, log)
		case "bytes-per-task":
			c, err = memoryCurve(ctx, cfg.scenarios, z.Tasks, z.TasksPerJob, z.MemoryBudget, log)
		case "placed-vs-clients":
			c, err = clientsCurve(ctx, cfg.scenarios, z.Clients, z.ClientHosts, z.ClientJobs, z.Runs, z.Budget, log)
		case "relocation-vs-tasks":
			c, err = relocationCurve(ctx, z.Relocated, z.RelocPerJob, z.RelocHosts, z.Runs, z.RelocateLimit, log)
		case "entitlement-vs-pools":
			c, err = entitlementCurve(z.Pools, z.Regions, z.Rounds, log)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := c.Check(); err != nil {
			return err
		}
		if err := c.Write(cfg.out, machine+", shared with other work"); err != nil {
			return err
		}
		for _, v := range c.Verdicts() {
			fmt.Fprintf(stdout, "%s: %s\n", c.Name, v)
		}
		curves = append(curves, c)
	}
	if len(curves) < len(curveNames) {
		log("README.md not written: it lists every curve, and -only chose %d of %d", len(curves), len(curveNames))
		return nil
	}
	run := RunInfo{Machine: machine, LoadBefore: load, LoadAfter: loadAverage(), Seconds: time.Since(start).Seconds(), Quick: cfg.quick}
	return os.WriteFile(filepath.Join(cfg.out, "README.md"), readme(curves, run), 0o644)
}

// scenarioDir finds tests/bench/scenarios from the module root above the
// working directory.
func scenarioDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "tests", "bench", "scenarios"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; pass -scenarios")
		}
		dir = parent
	}
}

// loadScenario reads one scenario file of the bench.
func loadScenario(dir, name string) (*harness.Scenario, error) {
	data, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
	if err != nil {
		return nil, err
	}
	return harness.Parse(name+".yaml", data)
}

// loadAverage is the 1-minute load average, or "" where unknown.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
