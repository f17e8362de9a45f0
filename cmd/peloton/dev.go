package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type devOptions struct {
	dataDir      string
	addr         string
	region       string
	hosts        []string
	simHosts     int
	simCPU       float64
	simMemMB     float64
	simDuration  time.Duration
	period       time.Duration
	hostPools    hostPoolFlags
	limits       limitsConfig
	regions      string
	suspectAfter time.Duration
	// historyWindow and historyInterval: how long pool figures and
	// regions' health are kept, and how often sampled.
	historyWindow, historyInterval time.Duration
	failAfter                      time.Duration
	recoverAfter                   time.Duration
	logLevel                       string
	logFormat                      string
	insecure                       bool
	debugAddr                      string
	cpuProfile                     string
}

func newDevCommand() *cobra.Command {
	o := devOptions{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Start a one-process dev cluster: gateway, one region's shard, embedded store, host manager",
		Long: `dev starts everything in one process: the gRPC and HTTP/JSON gateway, one
region's shard (job manager, resource manager, placement), the embedded
store in --data-dir, and a host manager: "local" runs every task as a real
process on this machine; "sim" simulates --sim-hosts hosts.

It makes a token at start and refuses every call without it (loopback is
no identity: browsers and the machine's other users reach it too). The
token is kept, readable by this user only, in --data-dir/token and where
the CLI and the Python and Java clients look for it, so they need no flag;
the web UI's sign-in link is printed at start.

Stop it with Ctrl-C. Tasks started by the local host manager keep running
while it is stopped and are adopted when it starts again on the same data dir.

Host manager kinds for --hosts:
` + pluginHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDev(cmd.Context(), o) },
	}
	o.register(cmd.Flags())
	return cmd
}

// register adds dev's flags to f, with their defaults.
func (o *devOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.dataDir, "data-dir", ".peloton-data", "directory for the store and task sandboxes")
	f.StringVar(&o.addr, "addr", "127.0.0.1:5390", "listen address for gRPC and HTTP")
	f.StringVar(&o.region, "region", "local", "region name")
	f.StringVar(&o.regions, "regions", "", "run several regions in this process: a count (3 → east, west, central) or names a,b,c; region i listens on --addr's port + i")
	f.StringArrayVar(&o.hosts, "hosts", []string{"local"}, "host manager cluster KIND[:NAME][,KEY=VALUE...]; repeat for several (kinds below)")
	f.IntVar(&o.simHosts, "sim-hosts", 10, "number of simulated hosts (--hosts sim)")
	f.Float64Var(&o.simCPU, "sim-cpu", 8, "CPU cores per simulated host")
	f.Float64Var(&o.simMemMB, "sim-mem", 32768, "memory MiB per simulated host")
	f.DurationVar(&o.simDuration, "sim-duration", 5*time.Second, "how long a simulated task runs unless its env sets PELOTON_SIM_DURATION")
	f.DurationVar(&o.period, "entitlement-period", time.Second, "how long a pool stays above its entitlement before its preemptible work is preempted")
	o.hostPools.register(f)
	o.limits.register(f)
	f.DurationVar(&o.suspectAfter, "suspect-after", 2*time.Second, "with --regions: a region no member of which is reachable for this long is suspect")
	f.DurationVar(&o.failAfter, "fail-after", 5*time.Second, "with --regions: ... and failed (its relocatable jobs move) after this long")
	f.DurationVar(&o.recoverAfter, "recover-after", 3*time.Second, "with --regions: a region must be reachable this long before it counts as alive again")
	f.DurationVar(&o.historyWindow, "history-window", 24*time.Hour, "how long pool figures and regions' health are kept as history")
	f.DurationVar(&o.historyInterval, "history-interval", 10*time.Second, "how often pool figures and regions' health are sampled for history")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.logFormat, "log-format", "text", "text or json")
	f.BoolVar(&o.insecure, "insecure", false, "listen off loopback although dev mode has no TLS (its token then crosses the network in the clear)")
	f.StringVar(&o.debugAddr, "debug-addr", "", "serve Go profiles (net/http/pprof) on this loopback address, such as 127.0.0.1:6060")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (for benchmarks)")
}

func newLogger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: must be text or json, not %q", format)
}

func runDev(parent context.Context, o devOptions) error {
	log, err := newLogger(o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	plan, err := o.plan()
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopDebug, err := serveDebug(o.debugAddr, log)
	if err != nil {
		return err
	}
	defer stopDebug()
	devAuth, err := newDevAuth(plan.names())
	if err != nil {
		return err
	}
	runtimes, err := openDevRegions(ctx, o, plan, devAuth, log)
	if err != nil {
		return err
	}
	unpublish, err := devAuth.publish(o.dataDir, gatewayAddrs(runtimes))
	if err != nil {
		closeStores(runtimes)
		return err
	}
	defer unpublish()
	announceDev(o, runtimes, devAuth, log)
	err = withMemoryReleaser(ctx, runtimes, log, func(ctx context.Context) error { return runRegions(ctx, runtimes, stop) })
	log.Info("peloton dev stopped")
	return err
}

// devPlan is what dev's flags ask for, checked.
type devPlan struct {
	hostPools   jobmgr.HostPoolConfig
	reservation jobmgr.ReservationConfig
	// regions are the regions to run, each with its API address.
	regions []federation.Region
}

func (p devPlan) names() []string {
	names := make([]string, len(p.regions))
	for i, r := range p.regions {
		names[i] = r.Name
	}
	return names
}

// plan checks dev's flags, filling the limits' defaults, and says what to
// start; an error names the flag at fault.
func (o *devOptions) plan() (devPlan, error) {
	if o.period <= 0 {
		return devPlan{}, errors.New("--entitlement-period: must be > 0")
	}
	if field, msg := checkHistory(o.historyWindow, o.historyInterval); msg != "" {
		return devPlan{}, fmt.Errorf("--history-%s: %s", field, msg)
	}
	hostPools, err := o.hostPools.config()
	if err != nil {
		return devPlan{}, err
	}
	reservation, err := o.hostPools.reservation()
	if err != nil {
		return devPlan{}, err
	}
	var bad []string
	o.limits.check(func(field, msg string) {
		bad = append(bad, "--limit-"+kebab(strings.TrimPrefix(field, "limits."))+": "+msg)
	})
	if len(bad) > 0 {
		return devPlan{}, errors.New(strings.Join(bad, "\n"))
	}
	regions, err := o.devRegions()
	if err != nil {
		return devPlan{}, err
	}
	return devPlan{hostPools: hostPools, reservation: reservation, regions: regions}, nil
}

// devRegions names the regions to run and their API addresses: region i
// listens on the port after region i-1's, the first one on --addr.
func (o *devOptions) devRegions() ([]federation.Region, error) {
	names, err := regionNames(o.region, o.regions)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(o.addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	if !isLoopback(o.addr) && !o.insecure {
		return nil, fmt.Errorf("refusing to serve dev mode (no TLS: its token would cross the network in the clear) on %s: use a loopback address, peloton server with tls and auth (docs/security.md), or --insecure", o.addr)
	}
	first, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("--addr: port %q is not a number", port)
	}
	regions := make([]federation.Region, len(names))
	for i, name := range names {
		addr := o.addr
		if len(names) > 1 {
			addr = net.JoinHostPort(host, strconv.Itoa(first+i))
		}
		regions[i] = federation.Region{Name: name, Addr: addr}
	}
	return regions, nil
}

// startCPUProfile profiles the whole run into path ("" profiles nothing);
// the function returned stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// openDevRegions opens the regions of plan, each in a data dir of its own
// when there are several; on failure none stays open.
func openDevRegions(ctx context.Context, o devOptions, plan devPlan, devAuth *devAuth, log *slog.Logger) ([]*regionRuntime, error) {
	reg := newRegistry()
	var runtimes []*regionRuntime
	for i, region := range plan.regions {
		rc := o.regionConfig(plan, i)
		rc.Auth = devAuth.gatewayAuth()
		if len(plan.regions) > 1 {
			rc.Gossip = devGossip(region, o.addr, runtimes)
		}
		rt, err := openRegion(ctx, rc, federation.NewStaticDirectory(region.Name, plan.regions), log, regionRegistry(reg, i))
		if err != nil {
			closeStores(runtimes)
			return nil, fmt.Errorf("region %s: %w", region.Name, err)
		}
		rt.router.AddDialOptions(devAuth.dialOption(region.Name))
		runtimes = append(runtimes, rt)
	}
	return runtimes, nil
}

// regionConfig is region i of a dev cluster.
func (o devOptions) regionConfig(plan devPlan, i int) regionConfig {
	region := plan.regions[i]
	dataDir := o.dataDir
	if len(plan.regions) > 1 {
		dataDir = filepath.Join(o.dataDir, region.Name)
	}
	return regionConfig{
		Name: region.Name, DataDir: dataDir, Addr: region.Addr, Hosts: o.hosts, Period: o.period, HostPools: plan.hostPools, Reservation: plan.reservation, Limits: o.limits,
		SimDefaults:   pluginEnv{SimHosts: o.simHosts, SimCPU: o.simCPU, SimMemMB: o.simMemMB, SimDuration: o.simDuration},
		Health:        policy.HealthConfig{SuspectAfter: o.suspectAfter, FailAfter: o.failAfter, RecoverAfter: o.recoverAfter},
		HistoryWindow: o.historyWindow, HistoryInterval: o.historyInterval,
	}
}

// devGossip is the gossip of a region among several in one process: they
// still find each other through gossip, each on a free port; the later
// ones join the first of opened.
func devGossip(region federation.Region, addr string, opened []*regionRuntime) *gossip.Config {
	host, _, _ := net.SplitHostPort(addr)
	var join []string
	if len(opened) > 0 {
		join = []string{opened[0].dir.GossipAddr()}
	}
	return &gossip.Config{
		NodeName: region.Name + "-0", Region: region.Name, Role: "shard", APIAddr: region.Addr,
		BindAddr: net.JoinHostPort(host, "0"), Join: join, Profile: gossip.ProfileLocal,
	}
}

func closeStores(runtimes []*regionRuntime) {
	for _, r := range runtimes {
		r.store.Close()
	}
}

func gatewayAddrs(runtimes []*regionRuntime) []string {
	addrs := make([]string, len(runtimes))
	for i, r := range runtimes {
		addrs[i] = r.gateway.Addr()
	}
	return addrs
}

// announceDev logs the start and tells the user where the cluster listens
// and how to reach it.
func announceDev(o devOptions, runtimes []*regionRuntime, devAuth *devAuth, log *slog.Logger) {
	names := make([]string, len(runtimes))
	for i, r := range runtimes {
		names[i] = r.name
	}
	addr := runtimes[0].gateway.Addr()
	log.Info("peloton dev started", "regions", strings.Join(names, " "), "addr", addr, "data_dir", o.dataDir, "hosts", strings.Join(o.hosts, " "))
	fmt.Fprintf(os.Stderr, "\nPeloton dev cluster: API on %s (gRPC and HTTP)\n", addr)
	for _, r := range runtimes[1:] {
		fmt.Fprintf(os.Stderr, "  region %s on %s\n", r.name, r.gateway.Addr())
	}
	fmt.Fprintf(os.Stderr, "  every call needs its token, in %s (the CLI and the clients find it)\n", filepath.Join(o.dataDir, "token"))
	fmt.Fprintf(os.Stderr, "  web UI, signed in: %s\n", devAuth.signInURL(addr))
	fmt.Fprintf(os.Stderr, "  export PELOTON_ADDR=%s\n  peloton job create -f examples/hello.yaml --wait\n\n", addr)
}

// runRegions runs every region until ctx ends or one fails, which stops
// the others; it returns the first error.
func runRegions(ctx context.Context, runtimes []*regionRuntime, stop context.CancelFunc) error {
	errc := make(chan error, len(runtimes))
	for _, r := range runtimes {
		go func() { errc <- r.run(ctx) }()
	}
	var first error
	for range runtimes {
		if err := <-errc; err != nil && first == nil {
			first = err
			stop()
		}
	}
	return first
}

// regionNames turns --region and --regions into the list of regions: one
// region named --region, or N regions, or the names given.
func regionNames(single, regions string) ([]string, error) {
	if regions == "" {
		if single == "" {
			return nil, errors.New("--region: must not be empty")
		}
		return []string{single}, nil
	}
	if n, err := strconv.Atoi(regions); err == nil {
		if n < 1 || n > 9 {
			return nil, fmt.Errorf("--regions: %d is not between 1 and 9", n)
		}
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, []string{"east", "west", "central", "north", "south", "apac", "emea", "latam", "polar"}[i])
		}
		return out, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, name := range strings.Split(regions, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			return nil, fmt.Errorf("--regions: %q: names must be non-empty and unique", regions)
		}
		seen[name] = true
		out = append(out, name)
	}
	return out, nil
}

// regionRegistry gives every region but the first a registry of its own, so
// their metrics do not collide in one process.
func regionRegistry(shared *prometheus.Registry, i int) *prometheus.Registry {
	if i == 0 {
		return shared
	}
	return prometheus.NewRegistry()
}

// checkHistory checks history settings (zero: the default) and names the
// one at fault, "window" or "interval".
func checkHistory(window, interval time.Duration) (field, msg string) {
	switch {
	case interval != 0 && interval < time.Second:
		return "interval", "must be at least 1s"
	case window != 0 && window < time.Minute:
		return "window", "must be at least 1m"
	case window != 0 && window > 90*24*time.Hour:
		return "window", "must be at most 90 days (2160h)"
	case window != 0 && interval != 0 && interval > window:
		return "interval", "must not be longer than the window"
	}
	return "", ""
}
