package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/service"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// regionConfig is what one region's shard needs, whichever role runs it.
type regionConfig struct {
	Name        string
	DataDir     string
	Addr        string
	Hosts       []string
	Period      time.Duration
	SimDefaults pluginEnv
	// Gossip, when set, joins the region to a federation; otherwise the
	// region is alone (or in a static in-process federation).
	Gossip *gossip.Config
	Health policy.HealthConfig
	// OpenStore opens the region's store; nil means the embedded store in
	// DataDir.
	OpenStore func(ctx context.Context) (store.Store, error)
}

// regionRuntime is a running region: its store, shard and gateway.
type regionRuntime struct {
	name     string
	store    store.Store
	engine   *jobmgr.Engine
	shard    *service.Server
	router   *federation.Router
	gateway  *gateway.Gateway
	dir      *federation.GossipDirectory
	failover *federation.Failover
}

// openRegion opens a region's store and plugins and binds its gateway; run
// starts it.
func openRegion(ctx context.Context, cfg regionConfig, dir federation.Directory, log *slog.Logger, reg *prometheus.Registry) (*regionRuntime, error) {
	log = log.With("region", cfg.Name)
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	var st store.Store
	var err error
	if cfg.OpenStore != nil {
		st, err = cfg.OpenStore(ctx)
	} else {
		st, err = boltstore.Open(filepath.Join(cfg.DataDir, "store.db"))
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	env := cfg.SimDefaults
	env.DataDir, env.Logger, env.Store = cfg.DataDir, log, st
	plugins, err := buildPlugins(cfg.Hosts, env)
	if err != nil {
		st.Close()
		return nil, err
	}
	engine := jobmgr.New(jobmgr.Config{Region: cfg.Name, Store: st, Plugins: plugins, Logger: log, EntitlementPeriod: cfg.Period})
	shard := service.New(engine, cli.Version, "")
	var gd *federation.GossipDirectory
	if cfg.Gossip != nil {
		g := *cfg.Gossip
		g.Logger = log
		if gd, err = federation.NewGossipDirectory(ctx, g, cfg.Health, engine.SetFenced, log); err != nil {
			st.Close()
			return nil, err
		}
		dir = gd
	}
	router := federation.NewRouter(shard, dir, nil)
	router.SetChooser(router.PolicyChooser())
	router.SetReplicaStore(valueReplicas{st})
	var iso federation.Isolation
	if gd != nil {
		iso = gd
	}
	router.SetDrills(valueDrills{st}, iso)
	failover := federation.NewFailover(router, engine.SetFenced, log, time.Second)
	if gd != nil {
		// Pools are federation-wide: this region's shard runs on its share.
		failover.SetShareSink(func(shares map[string]policy.RegionShare) {
			m := make(map[string]jobmgr.PoolShare, len(shares))
			for path, sh := range shares {
				m[path] = jobmgr.PoolShare{Reservation: sh.Reservation, Limit: sh.Limit}
			}
			engine.SetPoolShares(m)
		})
	}
	gw, err := gateway.New(gateway.Config{
		Addr: cfg.Addr, Logger: log, Registry: reg, Register: router.Register,
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
		st.Close()
		return nil, err
	}
	return &regionRuntime{name: cfg.Name, store: st, engine: engine, shard: shard, router: router, gateway: gw, dir: gd, failover: failover}, nil
}

// run serves the region until ctx ends.
func (r *regionRuntime) run(ctx context.Context) error {
	if r.dir != nil {
		go r.dir.Run(ctx, 250*time.Millisecond)
	}
	go r.failover.Run(ctx)
	errc := make(chan error, 2)
	go func() { errc <- r.engine.Run(ctx) }()
	go func() { errc <- r.gateway.Serve(ctx) }()
	var first error
	for i := 0; i < 2; i++ {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	r.router.Close()
	if err := r.store.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// newRegistry is the Prometheus registry of a process.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
