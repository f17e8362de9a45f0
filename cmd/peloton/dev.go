package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/service"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
)

type devOptions struct {
	dataDir     string
	addr        string
	region      string
	hosts       []string
	simHosts    int
	simCPU      float64
	simMemMB    float64
	simDuration time.Duration
	period      time.Duration
	logLevel    string
	logFormat   string
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

Stop it with Ctrl-C. Tasks started by the local host manager keep running
while it is stopped and are adopted when it starts again on the same data dir.

Host manager kinds for --hosts:
` + pluginHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDev(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", ".peloton-data", "directory for the store and task sandboxes")
	f.StringVar(&o.addr, "addr", "127.0.0.1:5390", "listen address for gRPC and HTTP")
	f.StringVar(&o.region, "region", "local", "region name")
	f.StringArrayVar(&o.hosts, "hosts", []string{"local"}, "host manager cluster KIND[:NAME][,KEY=VALUE...]; repeat for several (kinds below)")
	f.IntVar(&o.simHosts, "sim-hosts", 10, "number of simulated hosts (--hosts sim)")
	f.Float64Var(&o.simCPU, "sim-cpu", 8, "CPU cores per simulated host")
	f.Float64Var(&o.simMemMB, "sim-mem", 32768, "memory MiB per simulated host")
	f.DurationVar(&o.simDuration, "sim-duration", 5*time.Second, "how long a simulated task runs unless its env sets PELOTON_SIM_DURATION")
	f.DurationVar(&o.period, "entitlement-period", time.Second, "how long a pool stays above its entitlement before its preemptible work is preempted")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.logFormat, "log-format", "text", "text or json")
	return cmd
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
	if o.region == "" {
		return errors.New("--region: must not be empty")
	}
	if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	st, err := boltstore.Open(filepath.Join(o.dataDir, "store.db"))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	plugins, err := buildPlugins(o.hosts, pluginEnv{
		DataDir: o.dataDir, Logger: log, Store: st,
		SimHosts: o.simHosts, SimCPU: o.simCPU, SimMemMB: o.simMemMB, SimDuration: o.simDuration,
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.period <= 0 {
		return errors.New("--entitlement-period: must be > 0")
	}
	engine := jobmgr.New(jobmgr.Config{Region: o.region, Store: st, Plugins: plugins, Logger: log, EntitlementPeriod: o.period})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	api := service.New(engine, cli.Version, "")
	gw, err := gateway.New(gateway.Config{
		Addr: o.addr, Logger: log, Registry: reg, Register: api.Register,
		Ready: func() error {
			select {
			case <-engine.Ready():
				return nil
			default:
				return errors.New("recovering state")
			}
		},
	})
	if err != nil {
		return err
	}
	log.Info("peloton dev started", "addr", gw.Addr(), "region", o.region, "data_dir", o.dataDir, "hosts", strings.Join(o.hosts, " "))
	fmt.Fprintf(os.Stderr, "\nPeloton dev cluster: API on %s (gRPC and HTTP)\n  export PELOTON_ADDR=%s\n  peloton job create -f examples/hello.yaml --wait\n\n", gw.Addr(), gw.Addr())

	errc := make(chan error, 2)
	go func() { errc <- engine.Run(ctx) }()
	go func() { errc <- gw.Serve(ctx) }()
	var first error
	for i := 0; i < 2; i++ {
		if err := <-errc; err != nil && first == nil {
			first = err
			stop()
		}
	}
	log.Info("peloton dev stopped")
	return first
}
