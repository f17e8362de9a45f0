package inproc

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/service"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// RegionConfig is one in-process region.
type RegionConfig struct {
	Name string
	// IP is the loopback address the region's API and gossip listen on
	// (127.0.0.x); empty means 127.0.0.1.
	IP string
	// Hosts simulated hosts of HostShape, whose runs last a day.
	Hosts     int
	HostShape model.Resources
	// Store is the shard's store; nil means a fresh memstore. The region
	// closes it on Stop.
	Store store.Store
	// Directory is a static view of the federation, used when Gossip is
	// nil; it is given the region's API address once it listens.
	Directory func(apiAddr string) federation.Directory
	// Gossip, when set, makes the region a member of a gossip pool.
	Gossip *GossipConfig
	// FailoverEvery runs the failover shell (relocation, failback, the
	// global entitlement pass) at this interval; zero leaves it to the
	// caller, who calls Failover.Tick.
	FailoverEvery time.Duration
	Logger        *slog.Logger
}

// GossipConfig joins a region to a gossip pool on its IP.
type GossipConfig struct {
	// Join is the gossip address of a member already started.
	Join    []string
	Profile gossip.Profile
	Health  policy.HealthConfig
	// ObserveEvery is how often the directory reads the pool.
	ObserveEvery time.Duration
	// Tuning overrides the profile's memberlist settings (probe interval
	// and timeout, suspicion multipliers, indirect checks) and may wrap
	// the gossip transport (gossip.Config.Transport); nil keeps the
	// profile.
	Tuning func(*gossip.Config)
}

// Region is a running in-process region.
type Region struct {
	Name     string
	Addr     string // the gRPC API, on loopback
	Engine   *jobmgr.Engine
	Router   *federation.Router
	Replicas ValueReplicas
	Failover *federation.Failover
	Gossip   *federation.GossipDirectory // nil with a static directory

	store   store.Store
	server  *grpc.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once
}

// StartRegion starts a region and returns once its shard has recovered and
// every simulated host is in its host cache.
func StartRegion(ctx context.Context, cfg RegionConfig) (*Region, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("region", cfg.Name)
	ip := cfg.IP
	if ip == "" {
		ip = "127.0.0.1"
	}
	st := cfg.Store
	if st == nil {
		st = memstore.New()
	}
	plugin, err := sim.New(sim.Config{Cluster: "sim", DefaultDuration: 24 * time.Hour,
		Generate: sim.Generator{Count: cfg.Hosts, Shape: cfg.HostShape}})
	if err != nil {
		st.Close()
		return nil, err
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		st.Close()
		return nil, err
	}
	r := &Region{Name: cfg.Name, Addr: lis.Addr().String(), store: st, Replicas: NewValueReplicas(st)}
	r.Engine = jobmgr.New(jobmgr.Config{Region: cfg.Name, Store: st, Plugins: []hostmgr.Plugin{plugin}, Logger: log})

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	var dir federation.Directory
	if cfg.Gossip != nil {
		g := cfg.Gossip
		gc := gossip.Config{
			NodeName: cfg.Name + "-0", Region: cfg.Name, Role: "shard", APIAddr: r.Addr,
			BindAddr: net.JoinHostPort(ip, "0"), Join: g.Join, Profile: g.Profile, Logger: log,
		}
		if g.Tuning != nil {
			g.Tuning(&gc)
		}
		r.Gossip, err = federation.NewGossipDirectory(runCtx, gc, g.Health, r.Engine.SetFenced, log)
		if err != nil {
			cancel()
			lis.Close()
			st.Close()
			return nil, err
		}
		dir = r.Gossip
		r.goRun(func() { r.Gossip.Run(runCtx, g.ObserveEvery) })
	} else {
		dir = cfg.Directory(r.Addr)
	}
	r.Router = federation.NewRouter(service.New(r.Engine, "inproc", ""), dir, nil)
	r.Router.SetChooser(r.Router.PolicyChooser())
	r.Router.SetReplicaStore(r.Replicas)
	r.Failover = federation.NewFailover(r.Router, r.Engine.SetFenced, log, cfg.FailoverEvery)
	if cfg.Gossip != nil {
		// Pools are federation-wide: the shard runs on its share.
		r.Failover.SetShareSink(func(shares map[string]policy.RegionShare) {
			m := make(map[string]jobmgr.PoolShare, len(shares))
			for path, sh := range shares {
				m[path] = jobmgr.PoolShare{Reservation: sh.Reservation, Limit: sh.Limit}
			}
			r.Engine.SetPoolShares(m)
		})
	}
	r.server = grpc.NewServer(grpc.MaxRecvMsgSize(federation.MaxMessageBytes))
	r.Router.Register(r.server)
	r.goRun(func() { _ = r.server.Serve(lis) })

	engineDone := make(chan struct{})
	r.goRun(func() {
		defer close(engineDone)
		if err := r.Engine.Run(runCtx); err != nil && runCtx.Err() == nil {
			log.Error("shard stopped", "err", err)
		}
	})
	select {
	case <-r.Engine.Ready():
	case <-engineDone:
		r.Stop()
		return nil, fmt.Errorf("region %s: the shard stopped before it was ready", cfg.Name)
	}
	want := model.Resources{MilliCPU: int64(cfg.Hosts) * cfg.HostShape.MilliCPU}
	if err := WaitFor(ctx, time.Minute, func() bool {
		got, _ := r.Engine.Hosts().Capacity()
		return got.MilliCPU >= want.MilliCPU
	}); err != nil {
		r.Stop()
		return nil, fmt.Errorf("region %s: hosts: %w", cfg.Name, err)
	}
	if cfg.FailoverEvery > 0 {
		r.goRun(func() { r.Failover.Run(runCtx) })
	}
	return r, nil
}

func (r *Region) goRun(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// Crash takes the region down as a lost datacenter would: it drops out of
// gossip without leaving (the others must detect the failure), stops
// answering calls and stops its shard.
func (r *Region) Crash(ctx context.Context) error {
	var err error
	if r.Gossip != nil {
		err = r.Gossip.Isolate(ctx)
	}
	r.Stop()
	return err
}

// Stop stops the region and waits for everything it started, then closes
// its store.
func (r *Region) Stop() {
	r.stopped.Do(func() {
		r.server.Stop()
		r.cancel()
		r.wg.Wait()
		r.Router.Close()
		r.store.Close()
	})
}

// WaitFor polls cond every 5 ms until it holds, the limit passes or ctx
// ends.
func WaitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
