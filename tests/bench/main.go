package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/peloton-federated/peloton/tests/bench/harness"
	"github.com/peloton-federated/peloton/tests/testkit"
)

//go:embed scenarios/*.yaml
var scenarioFiles embed.FS

// loadScenarios reads the embedded scenario files.
func loadScenarios() ([]*harness.Scenario, error) {
	return harness.LoadDir(scenarioFiles, "scenarios")
}

type config struct {
	list        bool
	scenarios   string
	size        string
	json        bool
	cpuProfile  string
	memProfile  string
	parts       string
	budgetScale float64
	bin         string
	profileDir  string
	smallJobs   int
	smallStores string
	smallClient int
	smallHosts  int
	smallProf   string
	cassandraSh string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.list, "list", false, "list the scenarios and exit")
	fs.StringVar(&c.scenarios, "scenario", "", "run only these scenarios (comma-separated names)")
	fs.StringVar(&c.size, "size", harness.SizeFull, "scenario size to run: full or small")
	fs.BoolVar(&c.json, "json", false, "print the results as JSON instead of a table")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&c.memProfile, "memprofile", "", "write a heap profile at the end of the run to this file")
	fs.StringVar(&c.parts, "parts", "core,e2e,memory,api,reserve", "parts to measure, comma-separated: core (always), e2e, memory, api (the API scenarios, through the binary), reserve (host reservations, in simulated time)")
	fs.Float64Var(&c.budgetScale, "budget-scale", 1, "multiply every end-to-end, memory and API time budget")
	fs.StringVar(&c.bin, "bin", "", "peloton binary the API scenarios start (default: build one)")
	fs.StringVar(&c.profileDir, "server-cpuprofile-dir", "", "write a CPU profile of the server over each API scenario's measured span to this directory")
	fs.IntVar(&c.smallJobs, "small-jobs", 0, "instead of the scenarios: create this many single-task jobs over HTTP against `peloton server` on each store of -small-jobs-stores and wait until all SUCCEEDED")
	fs.StringVar(&c.smallStores, "small-jobs-stores", "embedded", "stores of -small-jobs, comma-separated: embedded; NAME=HOST:PORT of a running Cassandra node; NAME=new or NAME=new-durable for a fresh node this run starts with -cassandra-script (--durable: commit log synced before each acknowledgement) on free loopback ports and stops afterwards, its CPU time and conditional writes measured; ratios are against the embedded run")
	fs.StringVar(&c.cassandraSh, "cassandra-script", "deploy/cassandra/cassandra.sh", "the script that starts the nodes of -small-jobs-stores NAME=new")
	fs.IntVar(&c.smallClient, "small-jobs-clients", 32, "concurrent HTTP clients of -small-jobs")
	fs.IntVar(&c.smallHosts, "small-jobs-hosts", 500, "sim hosts of -small-jobs")
	fs.StringVar(&c.smallProf, "small-jobs-profile-dir", "", "write the server's goroutine profile half way through each -small-jobs run to this directory")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	for _, p := range strings.Split(c.parts, ",") {
		if p = strings.TrimSpace(p); p != "core" && p != "e2e" && p != "memory" && p != "api" && p != "reserve" && p != "" {
			return c, fmt.Errorf("-parts: %q is not core, e2e, memory, api or reserve", p)
		}
	}
	if c.budgetScale <= 0 {
		return c, errors.New("-budget-scale must be positive")
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.smallJobs > 0 {
		return runSmallJobs(ctx, cfg, stdout, stderr)
	}
	all, err := loadScenarios()
	if err != nil {
		return err
	}
	if cfg.list {
		for _, s := range all {
			fmt.Fprintf(stdout, "%-18s %s\n", s.Name, s.About)
		}
		return nil
	}
	parts := "," + strings.ReplaceAll(cfg.parts, " ", "") + ","
	chosen, err := chooseScenarios(all, cfg, strings.Contains(parts, ",api,"))
	if err != nil {
		return err
	}
	if cfg.cpuProfile != "" {
		stop, err := startCPUProfile(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	opts := harness.Options{
		Size:             cfg.size,
		SkipEndToEnd:     !strings.Contains(parts, ",e2e,"),
		SkipMemory:       !strings.Contains(parts, ",memory,"),
		BudgetScale:      cfg.budgetScale,
		Binary:           cfg.bin,
		ServerProfileDir: cfg.profileDir,
	}
	if opts.Binary == "" && slices.ContainsFunc(chosen, (*harness.Scenario).IsAPI) {
		fmt.Fprintln(stderr, "building the peloton binary for the API scenarios ...")
		bin, cleanup, err := testkit.BuildPeloton()
		if err != nil {
			return err
		}
		defer cleanup()
		opts.Binary = bin
	}
	fmt.Fprintf(stderr, "machine: %s\n", machine())
	var results []harness.Result
	for _, s := range chosen {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "running %s (%s) ...\n", s.Name, cfg.size)
		r := harness.Run(ctx, s, opts)
		fmt.Fprintf(stderr, "  done in %.1fs %s\n", r.Seconds, r.Notes())
		results = append(results, r)
	}
	if cfg.memProfile != "" {
		if err := writeHeapProfile(cfg.memProfile); err != nil {
			return err
		}
	}
	if cfg.json {
		return harness.JSON(stdout, results)
	}
	var reserve *harness.ReserveResult
	if strings.Contains(parts, ",reserve,") && cfg.scenarios == "" && ctx.Err() == nil {
		fmt.Fprintf(stderr, "running host reservation (%s) ...\n", cfg.size)
		r := harness.RunReservation(ctx, cfg.size)
		reserve = &r
	}
	fmt.Fprintf(stdout, "machine: %s\n", machine())
	if err := harness.Table(stdout, results); err != nil {
		return err
	}
	if reserve != nil {
		return harness.ReserveTable(stdout, *reserve)
	}
	return nil
}

// chooseScenarios returns the scenarios -scenario names (all of them when
// it names none), the API ones only with api among the parts, and checks
// that each has the size asked for.
func chooseScenarios(all []*harness.Scenario, cfg config, api bool) ([]*harness.Scenario, error) {
	chosen := all
	if cfg.scenarios != "" {
		chosen = nil
		for _, name := range strings.Split(cfg.scenarios, ",") {
			s, err := harness.Find(all, strings.TrimSpace(name))
			if err != nil {
				return nil, err
			}
			chosen = append(chosen, s)
		}
	}
	for _, s := range chosen {
		if _, ok := s.Sizes[cfg.size]; !ok {
			return nil, fmt.Errorf("%w: scenario %s has no size %q", harness.ErrUnknownScenario, s.Name, cfg.size)
		}
	}
	if !api {
		chosen = slices.DeleteFunc(slices.Clone(chosen), (*harness.Scenario).IsAPI)
	}
	return chosen, nil
}

// startCPUProfile profiles the process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeHeapProfile writes the heap's profile, after a collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.WriteHeapProfile(f)
}

// machine describes where the figures come from: cores, CPU model, memory.
func machine() string { return harness.Machine() }

// runSmallJobs runs the -small-jobs sitting.
func runSmallJobs(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	var stores []harness.SmallJobsStore
	for _, v := range strings.Split(cfg.smallStores, ",") {
		v = strings.TrimSpace(v)
		name, addr, ok := strings.Cut(v, "=")
		switch {
		case v == "embedded":
			stores = append(stores, harness.SmallJobsStore{Name: v})
		case ok && name != "" && (addr == "new" || addr == "new-durable"):
			stores = append(stores, harness.SmallJobsStore{Name: name, Start: true, Durable: addr == "new-durable"})
		case ok && name != "" && strings.Contains(addr, ":"):
			stores = append(stores, harness.SmallJobsStore{Name: name, Cassandra: addr})
		default:
			return fmt.Errorf("-small-jobs-stores: %q is not embedded, NAME=HOST:PORT, NAME=new nor NAME=new-durable", v)
		}
	}
	if slices.ContainsFunc(stores, func(s harness.SmallJobsStore) bool { return s.Start }) {
		if _, err := os.Stat(cfg.cassandraSh); err != nil {
			return fmt.Errorf("-cassandra-script: %w (run from the repository's root, or name the script)", err)
		}
		var err error
		if cfg.cassandraSh, err = filepath.Abs(cfg.cassandraSh); err != nil {
			return err
		}
	}
	bin := cfg.bin
	if bin == "" {
		fmt.Fprintln(stderr, "building the peloton binary ...")
		b, cleanup, err := testkit.BuildPeloton()
		if err != nil {
			return err
		}
		defer cleanup()
		bin = b
	}
	dir, err := os.MkdirTemp("", "peloton-small-jobs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(stdout, "machine: %s\n", machine())
	figs := harness.RunSmallJobs(ctx, harness.SmallJobsConfig{Bin: bin, Dir: dir, Jobs: cfg.smallJobs, Clients: cfg.smallClient,
		Hosts: cfg.smallHosts, Stores: stores, ProfileDir: cfg.smallProf, CassandraScript: cfg.cassandraSh}, stdout)
	for _, f := range figs {
		if f.Err != "" {
			return fmt.Errorf("small-jobs %s: %s", f.Store, f.Err)
		}
	}
	return nil
}
