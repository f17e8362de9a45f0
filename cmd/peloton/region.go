package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/shard/auditlog"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/lease"
	"github.com/peloton-federated/peloton/shard/service"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/credentials"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// regionConfig is what one region's shard needs, whichever role runs it.
type regionConfig struct {
	Name    string
	DataDir string
	Addr    string
	Hosts   []string
	Period  time.Duration
	// EventRetention is how long job and task history is kept (0: the
	// job manager's default).
	EventRetention time.Duration
	// HostPools tunes the host pool policy (zero values: its defaults).
	HostPools   jobmgr.HostPoolConfig
	Reservation jobmgr.ReservationConfig
	SimDefaults pluginEnv
	// Gossip, when set, joins the region to a federation; otherwise the
	// region is alone (or in a static in-process federation).
	Gossip *gossip.Config
	Health policy.HealthConfig
	// OpenStore opens the region's store; nil means the embedded store in
	// DataDir.
	OpenStore func(ctx context.Context) (store.Backend, error)
	// HA, when set, makes this member one of several for the region: the
	// one holding the region's lease runs the shard, the others forward.
	HA *haConfig
	// TLS secures the API port; DialCreds the calls to other regions and
	// to the region's leader; Auth turns authentication and authorisation
	// on. All nil: open (dev mode).
	TLS       *tls.Config
	DialCreds func(region string) credentials.TransportCredentials
	Auth      *gateway.Auth
	// AuditRetention is how long audit records are kept (0: the default).
	AuditRetention time.Duration
	// Limits bound what the region accepts (checked: defaults filled).
	Limits limitsConfig
	// Names are more host names the API answers to over HTTP (see
	// gateway.Config.Names).
	Names []string
	// HistoryWindow is how long pool figures and region health are kept
	// as history, HistoryInterval how often they are sampled (0: a day,
	// every 10 s).
	HistoryWindow, HistoryInterval time.Duration
}

// haConfig tunes leader election.
type haConfig struct {
	TTL time.Duration
	// Leases keeps the region's lease apart from its store (a Kubernetes
	// Lease); nil means the store, under "shard/<region>".
	Leases leaseBackend
	// LeaseName names the lease in Leases.
	LeaseName string
}

// leaseBackend keeps leases apart from the region's store; run closes it.
type leaseBackend interface {
	store.LeaseStore
	Close() error
}

// regionRuntime is a running region member: its store, gateway and
// federation shell, and, while it leads the region (always, without HA),
// its shard's engine.
type regionRuntime struct {
	name     string
	cfg      regionConfig
	log      *slog.Logger
	store    store.Backend
	router   *federation.Router
	gateway  *gateway.Gateway
	dir      *federation.GossipDirectory
	failover *federation.Failover
	// pools and regions are the history of pool figures and regions'
	// health this member keeps, across its terms as leader.
	pools   *service.PoolHistory
	regions *federation.RegionHistory
	// backups serves BackupStore, one at a time across terms.
	backups *service.Backups
	// directory is the router's: gossip's or a static one.
	directory federation.Directory
	elector   *lease.Elector
	// replicas and drills keep the federation's records in the store.
	replicas *federation.ValueReplicas
	drills   *federation.ValueDrills
	audit    *auditlog.Log

	mu     sync.Mutex
	engine *jobmgr.Engine // nil on a standby
	// serving is closed once the region's calls reach engine.
	serving chan struct{}
	fenced  bool
	shares  map[string]jobmgr.PoolShare
}

// leadingEngine is the engine of the term this member leads, nil on a
// standby.
func (r *regionRuntime) leadingEngine() *jobmgr.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.engine
}

// setFenced fences (or unfences) the current engine and any later one.
func (r *regionRuntime) setFenced(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fenced = v
	if r.engine != nil {
		r.engine.SetFenced(v)
	}
}

func (r *regionRuntime) setShares(shares map[string]policy.RegionShare) {
	m := make(map[string]jobmgr.PoolShare, len(shares))
	for path, sh := range shares {
		m[path] = jobmgr.PoolShare{Reservation: sh.Reservation, Limit: sh.Limit}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shares = m
	if r.engine != nil {
		r.engine.SetPoolShares(m)
	}
}

// openRegion opens a region's store and binds its gateway; run starts it.
func openRegion(ctx context.Context, cfg regionConfig, dir federation.Directory, log *slog.Logger, reg *prometheus.Registry) (_ *regionRuntime, err error) {
	log = log.With("region", cfg.Name)
	if err := privateDir(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	st, err := openRegionStore(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	if err := checkPlugins(cfg, st); err != nil {
		return nil, err
	}
	r := &regionRuntime{name: cfg.Name, cfg: cfg, log: log, store: st,
		replicas: federation.NewValueReplicas(st, clock.Real{}), drills: federation.NewValueDrills(st)}
	// The server copies the embedded store for a backup; Cassandra's is
	// not its to copy (nil).
	copier, _ := st.(service.StoreCopier)
	r.backups = service.NewBackups(cfg.Name, copier, cfg.DataDir, clock.Real{}, log)
	if cfg.Gossip != nil {
		g := *cfg.Gossip
		g.Logger = log
		if r.dir, err = federation.NewGossipDirectory(ctx, g, cfg.Health, r.setFenced, log); err != nil {
			return nil, err
		}
		dir = r.dir
	}
	if cfg.HA != nil {
		if r.elector, err = newElector(cfg, st, log); err != nil {
			return nil, err
		}
	}
	r.newFederation(dir)
	if err := loadStoredPolicy(ctx, cfg.Auth, st); err != nil {
		return nil, fmt.Errorf("stored policy: %w", err)
	}
	if r.gateway, err = r.newGateway(reg); err != nil {
		return nil, err
	}
	registerRegionMetrics(reg, r)
	return r, nil
}

// openRegionStore opens the region's store: cfg.OpenStore's, or the
// embedded one in the data dir.
func openRegionStore(ctx context.Context, cfg regionConfig) (store.Backend, error) {
	if cfg.OpenStore != nil {
		return cfg.OpenStore(ctx)
	}
	return boltstore.Open(filepath.Join(cfg.DataDir, "store.db"))
}

// checkPlugins checks the host manager configuration at start, so that a
// bad --hosts fails then rather than at election; what the plugins say
// of themselves is logged once, when the region leads.
func checkPlugins(cfg regionConfig, st store.Store) error {
	env := cfg.SimDefaults
	env.DataDir, env.Logger, env.Store = cfg.DataDir, slog.New(slog.DiscardHandler), st
	_, err := buildPlugins(cfg.Hosts, env)
	return err
}

// newElector elects the region's leader among its members, with the lease
// in cfg.HA.Leases or else in the store, under "shard/<region>".
func newElector(cfg regionConfig, st store.Backend, log *slog.Logger) (*lease.Elector, error) {
	var ls store.LeaseStore = cfg.HA.Leases
	name := cfg.HA.LeaseName
	if cfg.HA.Leases == nil {
		ls, name = st, "shard/"+cfg.Name
	}
	e, err := lease.New(lease.Config{Store: ls, Name: name, Holder: cfg.Addr, TTL: cfg.HA.TTL, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("ha: %w", err)
	}
	return e, nil
}

// newFederation makes the member's federation shell: the router in front
// of the shard (its replicas and drills kept in the store), the histories
// of pools and regions, and the failover loop.
func (r *regionRuntime) newFederation(dir federation.Directory) {
	cfg := r.cfg
	r.router = federation.NewRouter(nil, dir, nil)
	r.pools = service.NewPoolHistory(cfg.HistoryWindow, cfg.HistoryInterval)
	r.regions = federation.NewRegionHistory(r.pools.Window(), r.pools.Interval())
	r.router.SetRegionHistory(r.regions)
	r.directory = dir
	if cfg.DialCreds != nil {
		r.router.SetDialCredentials(cfg.DialCreds)
	}
	r.router.SetLeader(r.leaderAddr)
	r.router.SetChooser(r.router.PolicyChooser())
	r.router.SetReplicaStore(r.replicas)
	var iso federation.Isolation
	if r.dir != nil {
		iso = r.dir
	}
	r.router.SetDrills(r.drills, iso)
	r.failover = federation.NewFailover(r.router, r.setFenced, r.log, time.Second)
	if r.dir != nil {
		// Pools are federation-wide: this region's shard runs on its share.
		r.failover.SetShareSink(r.setShares)
	}
}

// loadStoredPolicy puts the policy set through the API, kept in the
// store, in force, and gives the gateway the store to keep the next one
// in; nothing when the policy is not editable.
func loadStoredPolicy(ctx context.Context, a *gateway.Auth, st store.RecordStore) error {
	if a == nil || !a.Policy.Editable() {
		return nil
	}
	ps := storedPolicies{st: st}
	sp, err := ps.load(ctx)
	if err != nil {
		return err
	}
	if sp != nil {
		a.Policy.SetStored(sp)
	}
	a.PolicyStore = ps
	return nil
}

// newGateway binds the member's API: the router's services, audited in
// the store.
func (r *regionRuntime) newGateway(reg *prometheus.Registry) (*gateway.Gateway, error) {
	cfg := r.cfg
	r.audit = auditlog.New(r.store, cmp.Or(cfg.AuditRetention, auditlog.DefaultRetention), r.log)
	return gateway.New(gateway.Config{
		Addr: cfg.Addr, Logger: r.log, Registry: reg, Register: r.router.Register,
		TLS: cfg.TLS, Auth: cfg.Auth, Audit: r.audit, Region: cfg.Name, Limits: cfg.Limits.gateway(),
		Names: cfg.Names, RegionMoves: r.router, JobPool: r.jobPool, Ready: r.ready,
	})
}

// jobPool is the pool of a job, wherever the federation keeps it.
func (r *regionRuntime) jobPool(ctx context.Context, job string) (string, error) {
	resp, err := r.router.Jobs().GetJob(ctx, &pb.GetJobRequest{Id: job})
	return resp.GetJob().GetSpec().GetPool(), err
}

// ready says whether the member serves: a leader once its engine has
// recovered its state, a standby once some member holds the lease.
func (r *regionRuntime) ready() error {
	r.mu.Lock()
	e, serving := r.engine, r.serving
	r.mu.Unlock()
	if e == nil {
		if r.elector != nil && r.leaderAddr() != "" {
			return nil // a standby serves by forwarding to the leader
		}
		if r.elector != nil {
			return errors.New("standby: no leader holds the region's lease yet")
		}
		return errors.New("starting")
	}
	// Ready once the region's calls reach the recovered engine, not
	// merely once it recovered: between the two, calls are still refused.
	select {
	case <-serving:
		return nil
	default:
		return errors.New("recovering state")
	}
}

// leaderAddr is where a standby forwards: the lease holder's API address.
func (r *regionRuntime) leaderAddr() string {
	if r.elector == nil {
		return ""
	}
	holder, _ := r.elector.Leader()
	if holder == r.cfg.Addr {
		return "" // this member, between terms
	}
	return holder
}

// lead runs the region's shard for one term: fresh host manager plugins and
// engine, recovered from the store and reconciled with the clusters.
func (r *regionRuntime) lead(ctx context.Context, term uint64) error {
	st, err := r.fencedStore(ctx, term)
	if err != nil {
		return err
	}
	env := r.cfg.SimDefaults
	env.DataDir, env.Logger, env.Store = r.cfg.DataDir, r.log, st
	plugins, err := buildPlugins(r.cfg.Hosts, env)
	if err != nil {
		return err
	}
	engine := jobmgr.New(jobmgr.Config{Region: r.cfg.Name, Store: st, Plugins: plugins, Logger: r.log, EntitlementPeriod: r.cfg.Period,
		EventRetention: r.cfg.EventRetention, HostPools: r.cfg.HostPools, Reservation: r.cfg.Reservation, APIAddr: r.cfg.Addr, Limits: r.cfg.Limits.shard()})
	serving := make(chan struct{})
	r.mu.Lock()
	r.engine, r.serving = engine, serving
	engine.SetFenced(r.fenced)
	if r.shares != nil {
		engine.SetPoolShares(r.shares)
	}
	r.mu.Unlock()
	// The region's calls reach the engine once it has recovered its state
	// (as /healthz says): before, it would answer from an empty state (no
	// pools, no jobs), and the federation would plan on that. Until then
	// they are refused as Unavailable.
	runDone, localSet := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(localSet)
		select {
		case <-engine.Ready():
			r.router.SetLocal(service.New(engine, cli.Version, "").WithHistory(r.pools).WithBackups(r.backups).WithCaller(callerName))
			close(serving)
		case <-runDone:
		}
	}()
	if r.dir != nil {
		r.dir.SetLeader(ctx, true)
	}
	r.log.Info("leading the region's shard", "term", term)
	err = engine.Run(ctx)
	close(runDone)
	<-localSet
	r.router.SetLeader(r.leaderAddr)
	r.mu.Lock()
	r.engine = nil
	r.mu.Unlock()
	if r.dir != nil {
		r.dir.SetLeader(context.WithoutCancel(ctx), false)
	}
	r.log.Info("stopped leading the region's shard", "term", term)
	return err
}

// fencedStore is the store as the shard leading at term writes to it:
// with HA, every write carries the term, and once another member takes
// the region's lease at a newer term the store refuses it (store.ErrFenced),
// so a leader paused past its lease cannot write after a takeover.
func (r *regionRuntime) fencedStore(ctx context.Context, term uint64) (store.Store, error) {
	if r.elector == nil {
		return r.store, nil
	}
	st, err := r.store.Fence(ctx, "shard/"+r.cfg.Name, term)
	if err != nil {
		return nil, fmt.Errorf("fence the store at term %d: %w", term, err)
	}
	return st, nil
}

// run serves the region until ctx ends.
func (r *regionRuntime) run(ctx context.Context) error {
	r.startLoops(ctx)
	errc := make(chan error, 2)
	go func() { errc <- r.serveShard(ctx) }()
	go func() { errc <- r.gateway.Serve(ctx) }()
	var first error
	for range 2 {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return r.close(first)
}

// startLoops starts the member's background loops, which end with ctx:
// gossip, failover, history, the audit log's and the stored policy's.
func (r *regionRuntime) startLoops(ctx context.Context) {
	if r.dir != nil {
		go r.dir.Run(ctx, 250*time.Millisecond)
	}
	go r.failover.Run(ctx)
	go r.pools.Run(ctx, clock.Real{}, r.leadingEngine)
	go r.regions.Run(ctx, clock.Real{}, r.directory)
	go r.audit.Prune(ctx)
	go r.audit.Run(ctx)
	if a := r.cfg.Auth; a != nil && a.Policy.Editable() {
		go watchPolicy(ctx, storedPolicies{st: r.store}, a.Policy, 5*time.Second, r.log)
	}
}

// serveShard leads the region's shard until ctx ends: at once without
// HA, else for every term this member is elected.
func (r *regionRuntime) serveShard(ctx context.Context) error {
	if r.elector == nil {
		return r.lead(ctx, 0)
	}
	return r.elector.Run(ctx, func(ctx context.Context, term uint64) {
		if err := r.lead(ctx, term); err != nil && ctx.Err() == nil {
			r.log.Error("shard stopped while leading", "err", err)
		}
	}, nil)
}

// close releases what the member holds once it stopped serving, and
// returns first, else the first error closing.
func (r *regionRuntime) close(first error) error {
	r.router.Close()
	if r.cfg.HA != nil && r.cfg.HA.Leases != nil {
		if err := r.cfg.HA.Leases.Close(); err != nil && first == nil {
			first = err
		}
	}
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

// privateDir makes dir (and its missing parents) for the server alone
// (0700): a directory that exists loses the read and write bits of group
// and others. The search bits stay: the local host manager opens the path
// to its runs for traversal only (0711, shard/hostmgr/local), and tasks
// running while the server restarts must still reach their sandboxes.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o066 != 0 {
		return os.Chmod(dir, st.Mode().Perm()&^0o066)
	}
	return nil
}
