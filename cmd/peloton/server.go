package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	k8slease "github.com/peloton-federated/peloton/hostmgr-k8s/lease"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
)

func newServerCommand() *cobra.Command {
	var path, debugAddr string
	var insecure, check, unsandboxed bool
	cmd := &cobra.Command{
		Use:   "server --config FILE",
		Short: "Run one member of a region: shard, gateway and federation, configured by a file",
		Long: `server is the production role: it runs one region's shard (job manager,
resource manager, placement, host managers), its gateway, and, with a gossip
section, its membership in the federation. The config file names the region,
the API address, the store (embedded or cassandra), the host manager
clusters (same KIND[:NAME][,KEY=VALUE] syntax as dev's --hosts), gossip
(bind, join, encryption key, profile), the health thresholds and, with
several members per region, where their leader lease lives (ha: in the
Cassandra store, or a Kubernetes Lease object "peloton-<region>").

Off loopback, a server needs tls (the region's certificate and the CA),
auth (a token file and a policy) and gossip.encryptKey, or --insecure.
Mutating calls are kept in the audit log for audit.retention (default 30
days). A secured server runs the tasks of local hosts sandboxed, each as
its own uid, and refuses to start when it cannot (not root) unless
--allow-unsandboxed-local-tasks. See docs/security.md.`,
		Example: `  region: east
  addr: 127.0.0.1:5390
  dataDir: /var/lib/peloton
  hosts: ["sim,hosts=100"]
  store: {kind: embedded}
  gossip: {bind: 127.0.0.1:7946, join: ["127.0.0.2:7946"], profile: wan}
  health: {suspectAfter: 5s, failAfter: 30s, recoverAfter: 30s}
  limits: {requestBytes: 1MiB, specRequestBytes: 64MiB, instancesPerJob: 100000, pendingTasksPerPool: 1000000, inFlight: 64, inFlightWait: 50ms}
  # secured (peloton tls init, peloton auth token create):
  # tls: {cert: /etc/peloton/east.crt, key: /etc/peloton/east.key, ca: /etc/peloton/ca.crt}
  # auth: {tokens: /etc/peloton/tokens.yaml, policy: /etc/peloton/policy.yaml}
  # several members of a region (store.kind cassandra), leader lease in Kubernetes:
  # ha: {leaseTTL: 10s, lease: kubernetes, kubeconfig: /etc/peloton/kubeconfig, namespace: peloton}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" {
				return errors.New("--config is required")
			}
			c, err := loadServerConfig(path)
			if err != nil {
				return err
			}
			if err := checkHostSpecs(c.Hosts); err != nil {
				return fmt.Errorf("%s is not a valid server config:\n  %w", path, err)
			}
			if why := exposed(c); why != "" && !insecure {
				return errors.New(why)
			}
			c.AllowUnsandboxedLocalTasks = c.AllowUnsandboxedLocalTasks || unsandboxed
			if check {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: valid (region %s, %d host manager clusters, store %s)\n",
					path, c.Region, len(c.Hosts), orDefault(c.Store.Kind, "embedded"))
				return nil
			}
			return runServer(cmd.Context(), c, debugAddr)
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "server config file (YAML)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "serve off loopback without TLS, authentication or gossip encryption (a network you trust)")
	cmd.Flags().StringVar(&debugAddr, "debug-addr", "", "serve Go profiles (net/http/pprof) on this loopback address, such as 127.0.0.1:6060")
	cmd.Flags().BoolVar(&check, "check-config", false, "check the config file and exit (0 when valid)")
	cmd.Flags().BoolVar(&unsandboxed, strings.TrimPrefix(allowUnsandboxedFlag, "--"), false, "with tls or auth, start even when tasks of local hosts cannot be sandboxed (not root): they run as the server's user")
	return cmd
}

func init() { extraCommands = append(extraCommands, newServerCommand) }

func runServer(parent context.Context, c *serverConfig, debugAddr string) error {
	log, err := newLogger(orDefault(c.Log.Level, "info"), orDefault(c.Log.Format, "text"))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopDebug, err := serveDebug(debugAddr, log)
	if err != nil {
		return err
	}
	defer stopDebug()
	rc, err := c.regionConfig(log)
	if err != nil {
		return err
	}
	rt, err := openRegion(ctx, rc, federation.NewStaticDirectory(c.Region, []federation.Region{{Name: c.Region, Addr: c.Addr}}), log, newRegistry())
	if err != nil {
		return err
	}
	haLease := ""
	if c.HA != nil {
		haLease = c.HA.Lease
	}
	log.Info("peloton server started", "region", c.Region, "addr", rt.gateway.Addr(), "store", orDefault(c.Store.Kind, "embedded"), "gossip", c.Gossip != nil, "ha_lease", haLease,
		"tls", c.TLS != nil, "auth", c.Auth != nil)
	err = withMemoryReleaser(ctx, []*regionRuntime{rt}, log, rt.run)
	log.Info("peloton server stopped")
	return err
}

// regionConfig is what the region member of c runs with: its
// certificates, tokens and policy read, its store and lease as c says.
func (c *serverConfig) regionConfig(log *slog.Logger) (regionConfig, error) {
	rc := regionConfig{
		Name: c.Region, DataDir: c.DataDir, Addr: c.Addr, Hosts: c.Hosts, Period: time.Duration(c.EntitlementPeriod),
		EventRetention: time.Duration(c.Events.Retention),
		HostPools:      serverHostPools(c),
		Reservation:    serverReservation(c),
		SimDefaults: pluginEnv{SimHosts: 10, SimCPU: 8, SimMemMB: 32768, SimDuration: 5 * time.Second,
			Secured: c.TLS != nil || c.Auth != nil, AllowUnsandboxed: c.AllowUnsandboxedLocalTasks},
		Health:         c.healthConfig(),
		AuditRetention: time.Duration(c.Audit.Retention),
		Limits:         c.Limits,
		Names:          c.Names,
		HistoryWindow:  time.Duration(c.History.Window), HistoryInterval: time.Duration(c.History.Interval),
		OpenStore: c.storeOpener(log),
	}
	sec, err := loadSecurity(c, log)
	if err != nil {
		return rc, err
	}
	rc.TLS, rc.DialCreds, rc.Auth = sec.serverTLS, sec.dialCreds, sec.auth
	if rc.HA, err = c.haConfig(); err != nil {
		return rc, err
	}
	rc.Gossip = c.gossipConfig(sec.admission)
	return rc, nil
}

// defaultStartWait is how long a server waits for its Cassandra store at
// start unless store.cassandra.startWait says.
const defaultStartWait = 2 * time.Minute

// storeOpener opens the Cassandra store of c, waiting for it at start; nil
// for the embedded store.
func (c *serverConfig) storeOpener(log *slog.Logger) func(ctx context.Context) (store.Backend, error) {
	if c.Store.Kind != "cassandra" {
		return nil
	}
	cc := c.Store.Cassandra
	repl, _ := cassandra.ParseReplication(orDefault(cc.Replication, "1"))
	cfg := cassandra.Config{Hosts: cc.Hosts, Keyspace: cc.Keyspace, Replication: repl, Consistency: cc.Consistency, Migrate: cc.Migrate, Timeout: time.Duration(cc.Timeout)}
	wait := time.Duration(cc.StartWait)
	if wait <= 0 {
		wait = defaultStartWait
	}
	return func(ctx context.Context) (store.Backend, error) {
		return openStoreWaiting(ctx, log, wait, func(ctx context.Context) (store.Backend, error) { return cassandra.Open(ctx, cfg) })
	}
}

// haConfig is the leader election of c (nil without ha), with the
// Kubernetes lease client made when the lease lives there.
func (c *serverConfig) haConfig() (*haConfig, error) {
	if c.HA == nil {
		return nil, nil
	}
	ha := &haConfig{TTL: time.Duration(c.HA.LeaseTTL)}
	if c.HA.Lease == leaseInKubernetes {
		leases, err := k8slease.New(k8slease.Config{Kubeconfig: c.HA.Kubeconfig, Namespace: c.HA.Namespace})
		if err != nil {
			return nil, fmt.Errorf("ha: %w", err)
		}
		ha.Leases, ha.LeaseName = leases, kubernetesLeaseName(c.Region)
	}
	return ha, nil
}

// gossipConfig is the gossip membership of c (nil without gossip); the
// node is named after the region, the host and the API address unless
// gossip.node says.
func (c *serverConfig) gossipConfig(admission gossip.Admission) *gossip.Config {
	g := c.Gossip
	if g == nil {
		return nil
	}
	key, _ := base64.StdEncoding.DecodeString(g.EncryptKey)
	node := g.Node
	if node == "" {
		host, _ := os.Hostname()
		node = c.Region + "-" + host + "-" + strings.ReplaceAll(c.Addr, ":", "-")
	}
	return &gossip.Config{
		NodeName: node, Region: c.Region, Role: "shard", APIAddr: c.Addr,
		BindAddr: g.Bind, AdvertiseAddr: g.Advertise, Join: g.Join, EncryptKey: key,
		Profile: gossip.Profile(orDefault(g.Profile, "wan")), ProbeInterval: time.Duration(g.ProbeInterval), ProbeTimeout: time.Duration(g.ProbeTimeout),
		Admission: admission,
	}
}
