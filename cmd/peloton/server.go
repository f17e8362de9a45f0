package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	k8slease "github.com/peloton-federated/peloton/hostmgr-k8s/lease"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
)

// serverConfig is the file `peloton server --config` reads.
type serverConfig struct {
	Region  string   `json:"region"`
	Addr    string   `json:"addr"`
	DataDir string   `json:"dataDir"`
	Hosts   []string `json:"hosts"`
	Store   struct {
		Kind      string `json:"kind"`
		Cassandra struct {
			Hosts       []string `json:"hosts"`
			Keyspace    string   `json:"keyspace"`
			Replication string   `json:"replication"`
			Consistency string   `json:"consistency"`
			Migrate     bool     `json:"migrate"`
			// Timeout bounds each request to Cassandra: how long a call
			// waits for a node that stopped answering before it is refused
			// as Unavailable (default 10s).
			Timeout duration `json:"timeout"`
			// StartWait is how long the server, starting, keeps trying a
			// Cassandra that is unreachable or short of replicas (a
			// cluster starting beside it, a node restarting) before it
			// gives up (default 2m; 0 keeps the default).
			StartWait duration `json:"startWait"`
		} `json:"cassandra"`
	} `json:"store"`
	EntitlementPeriod duration `json:"entitlementPeriod"`
	Events            struct {
		Retention duration `json:"retention"`
	} `json:"events"`
	// HostPools tunes the policy that moves hosts between host pools.
	HostPools struct {
		// Period: how often it runs ("off" turns it off); default 10s.
		Period string `json:"period"`
		// Floors: the fewest hosts in service per host pool.
		Floors map[string]int `json:"floors"`
		// DrainDeadline: how long batch runs on a host drained for a
		// move may go on; default 10m.
		DrainDeadline duration `json:"drainDeadline"`
	} `json:"hostPools"`
	Gossip *struct {
		Node          string   `json:"node"`
		Bind          string   `json:"bind"`
		Advertise     string   `json:"advertise"`
		Join          []string `json:"join"`
		EncryptKey    string   `json:"encryptKey"`
		Profile       string   `json:"profile"`
		ProbeInterval duration `json:"probeInterval"`
		ProbeTimeout  duration `json:"probeTimeout"`
	} `json:"gossip"`
	// History: how long pool figures and regions' health are kept, and
	// how often sampled (defaults: 24h, 10s).
	History struct {
		Window   duration `json:"window"`
		Interval duration `json:"interval"`
	} `json:"history"`
	Health struct {
		SuspectAfter duration `json:"suspectAfter"`
		FailAfter    duration `json:"failAfter"`
		RecoverAfter duration `json:"recoverAfter"`
	} `json:"health"`
	Log struct {
		Level  string `json:"level"`
		Format string `json:"format"`
	} `json:"log"`
	// HA runs several members per region: one leads (holds the region's
	// lease), the others stand by and forward to it.
	// Limits bound request sizes, jobs, pending tasks and the calls
	// served at once (defaults in limits.go).
	Limits limitsConfig `json:"limits"`
	// Names are more host names clients reach the API by over HTTP (a
	// load balancer's, a DNS alias): a request for any other name than
	// these, the address's and the certificate's is refused.
	Names []string `json:"names"`
	HA    *struct {
		LeaseTTL duration `json:"leaseTTL"`
		// Lease is where the lease lives: "store" (the region's Cassandra
		// store, the default) or "kubernetes" (a Lease object
		// "peloton-<region>" in Namespace).
		Lease      string `json:"lease"`
		Kubeconfig string `json:"kubeconfig"`
		Namespace  string `json:"namespace"`
	} `json:"ha"`
	// AllowUnsandboxedLocalTasks lets a secured server run the tasks of
	// local hosts as its own user when it cannot switch users (not root):
	// they can then read its keys, tokens and store.
	AllowUnsandboxedLocalTasks bool `json:"allowUnsandboxedLocalTasks"`
	securityConfig
}

// Where ha.lease keeps the region's lease.
const (
	leaseInStore      = "store"
	leaseInKubernetes = "kubernetes"
)

// kubernetesLeaseName is the Lease object of a region's leader lease.
func kubernetesLeaseName(region string) string { return "peloton-" + region }

// duration reads "30s" style durations.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("must be a duration like 30s")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration like 30s", s)
	}
	*d = duration(v)
	return nil
}

// loadServerConfig reads and checks a server config, naming the field of
// every problem.
func loadServerConfig(path string) (*serverConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err = expandEnv(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var c serverConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	add := func(field, msg string) { problems = append(problems, field+": "+msg) }
	if c.Region == "" {
		add("region", "is required")
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:5390"
	}
	if c.DataDir == "" {
		add("dataDir", "is required")
	}
	if len(c.Hosts) == 0 {
		add("hosts", "at least one host manager cluster is required (KIND[:NAME][,KEY=VALUE...])")
	}
	switch c.Store.Kind {
	case "", "embedded":
	case "cassandra":
		if len(c.Store.Cassandra.Hosts) == 0 {
			add("store.cassandra.hosts", "is required with store.kind cassandra")
		}
		if _, err := cassandra.ParseReplication(orDefault(c.Store.Cassandra.Replication, "1")); err != nil {
			add("store.cassandra.replication", err.Error())
		}
		if t := time.Duration(c.Store.Cassandra.Timeout); t != 0 && (t < 100*time.Millisecond || t > 5*time.Minute) {
			add("store.cassandra.timeout", fmt.Sprintf("must be between 100ms and 5m, not %s", t))
		}
	default:
		add("store.kind", fmt.Sprintf("must be embedded or cassandra, not %q", c.Store.Kind))
	}
	if c.HA != nil {
		if c.Store.Kind != "cassandra" {
			add("ha", "needs store.kind cassandra: the members of a region share its store")
		}
		if c.HA.LeaseTTL == 0 {
			c.HA.LeaseTTL = duration(10 * time.Second)
		}
		if c.HA.LeaseTTL < duration(time.Second) {
			add("ha.leaseTTL", "must be at least 1s")
		}
		checkHALease(&c, add)
	}
	if c.EntitlementPeriod == 0 {
		c.EntitlementPeriod = duration(time.Second)
	}
	if field, msg := checkHistory(time.Duration(c.History.Window), time.Duration(c.History.Interval)); msg != "" {
		add("history."+field, msg)
	}
	if c.EntitlementPeriod < 0 {
		add("entitlementPeriod", "must be > 0")
	}
	if c.Events.Retention != 0 && c.Events.Retention < duration(time.Minute) {
		add("events.retention", "must be at least 1m")
	}
	if _, err := hostPoolPeriod(c.HostPools.Period); err != nil {
		add("hostPools.period", err.Error())
	}
	for name, n := range c.HostPools.Floors {
		if !model.ValidHostPoolName(name) {
			add("hostPools.floors."+name, "not a host pool name (lowercase letters, digits and -, starting with a letter)")
		} else if n < 0 {
			add("hostPools.floors."+name, "must be >= 0")
		}
	}
	if c.HostPools.DrainDeadline < 0 {
		add("hostPools.drainDeadline", "must be >= 0")
	}
	if g := c.Gossip; g != nil {
		if g.Bind == "" {
			add("gossip.bind", "is required (host:port)")
		}
		if g.EncryptKey != "" {
			if k, err := base64.StdEncoding.DecodeString(g.EncryptKey); err != nil || (len(k) != 16 && len(k) != 24 && len(k) != 32) {
				add("gossip.encryptKey", "must be base64 of 16, 24 or 32 bytes")
			}
		}
		switch g.Profile {
		case "", "wan", "lan", "local":
		default:
			add("gossip.profile", fmt.Sprintf("must be wan, lan or local, not %q", g.Profile))
		}
	}
	c.Limits.check(add)
	checkSecurity(&c, add)
	h := policy.HealthConfig{SuspectAfter: time.Duration(c.Health.SuspectAfter), FailAfter: time.Duration(c.Health.FailAfter), RecoverAfter: time.Duration(c.Health.RecoverAfter)}
	if h == (policy.HealthConfig{}) {
		h = policy.DefaultHealthConfig()
		c.Health.SuspectAfter, c.Health.FailAfter, c.Health.RecoverAfter = duration(h.SuspectAfter), duration(h.FailAfter), duration(h.RecoverAfter)
	} else if err := h.Validate(); err != nil {
		add("health", err.Error())
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s is not a valid server config:\n  %s", path, strings.Join(problems, "\n  "))
	}
	return &c, nil
}

// checkHALease checks ha.lease and the fields that go with it.
func checkHALease(c *serverConfig, add func(field, msg string)) {
	ha := c.HA
	switch ha.Lease {
	case "", leaseInStore:
		ha.Lease = leaseInStore
		if ha.Kubeconfig != "" {
			add("ha.kubeconfig", "is only read with ha.lease kubernetes")
		}
		if ha.Namespace != "" {
			add("ha.namespace", "is only read with ha.lease kubernetes")
		}
	case leaseInKubernetes:
		if ha.Namespace == "" {
			add("ha.namespace", "is required with ha.lease kubernetes (the namespace of the region's Lease object)")
		} else if len(validation.IsDNS1123Label(ha.Namespace)) > 0 {
			add("ha.namespace", fmt.Sprintf("%q is not a Kubernetes namespace name (lowercase letters, digits and '-', at most 63)", ha.Namespace))
		}
		if c.Region != "" && len(validation.IsDNS1123Subdomain(kubernetesLeaseName(c.Region))) > 0 {
			add("region", fmt.Sprintf("%q cannot name the Lease %q of ha.lease kubernetes (lowercase letters, digits, '-' and '.')",
				c.Region, kubernetesLeaseName(c.Region)))
		}
		if _, err := k8slease.RESTConfig(ha.Kubeconfig); err != nil {
			add("ha.kubeconfig", err.Error())
		}
	default:
		add("ha.lease", fmt.Sprintf("must be store or kubernetes, not %q", ha.Lease))
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// envRef is a reference to an environment variable in a config file.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${NAME} with the variable's value (a pod's IP in a
// StatefulSet); an unset variable is an error. A lone $ stays as it is.
func expandEnv(raw []byte) ([]byte, error) {
	var missing []string
	out := envRef.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(envRef.FindSubmatch(m)[1])
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("environment variables not set: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// checkHostSpecs checks the syntax of host manager cluster specs: a known
// kind and a name used once each. Their parameters are read when the
// plugins are built (on start), which may need files and connections.
func checkHostSpecs(values []string) error {
	names := map[string]bool{}
	for _, v := range values {
		spec, err := parsePluginSpec(v)
		if err != nil {
			return err
		}
		if _, ok := pluginKinds[spec.Kind]; !ok {
			return fmt.Errorf("hosts: %q: unknown kind %q (one of %s)", v, spec.Kind, strings.Join(pluginKindNames(), ", "))
		}
		if names[spec.Name] {
			return fmt.Errorf("hosts: %q: cluster name %q used twice", v, spec.Name)
		}
		names[spec.Name] = true
	}
	return nil
}

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
	rc := regionConfig{
		Name: c.Region, DataDir: c.DataDir, Addr: c.Addr, Hosts: c.Hosts, Period: time.Duration(c.EntitlementPeriod),
		EventRetention: time.Duration(c.Events.Retention),
		HostPools:      serverHostPools(c),
		SimDefaults: pluginEnv{SimHosts: 10, SimCPU: 8, SimMemMB: 32768, SimDuration: 5 * time.Second,
			Secured: c.TLS != nil || c.Auth != nil, AllowUnsandboxed: c.AllowUnsandboxedLocalTasks},
		Health:         policy.HealthConfig{SuspectAfter: time.Duration(c.Health.SuspectAfter), FailAfter: time.Duration(c.Health.FailAfter), RecoverAfter: time.Duration(c.Health.RecoverAfter)},
		AuditRetention: time.Duration(c.Audit.Retention),
		Limits:         c.Limits,
		Names:          c.Names,
		HistoryWindow:  time.Duration(c.History.Window), HistoryInterval: time.Duration(c.History.Interval),
	}
	sec, err := loadSecurity(c, log)
	if err != nil {
		return err
	}
	rc.TLS, rc.DialCreds, rc.Auth = sec.serverTLS, sec.dialCreds, sec.auth
	if c.Store.Kind == "cassandra" {
		cc := c.Store.Cassandra
		repl, _ := cassandra.ParseReplication(orDefault(cc.Replication, "1"))
		cfg := cassandra.Config{Hosts: cc.Hosts, Keyspace: cc.Keyspace, Replication: repl, Consistency: cc.Consistency, Migrate: cc.Migrate, Timeout: time.Duration(cc.Timeout)}
		wait := time.Duration(cc.StartWait)
		if wait <= 0 {
			wait = 2 * time.Minute
		}
		rc.OpenStore = func(ctx context.Context) (store.Store, error) {
			return openStoreWaiting(ctx, log, wait, func(ctx context.Context) (store.Store, error) { return cassandra.Open(ctx, cfg) })
		}
	}
	if c.HA != nil {
		rc.HA = &haConfig{TTL: time.Duration(c.HA.LeaseTTL)}
		if c.HA.Lease == leaseInKubernetes {
			leases, err := k8slease.New(k8slease.Config{Kubeconfig: c.HA.Kubeconfig, Namespace: c.HA.Namespace})
			if err != nil {
				return fmt.Errorf("ha: %w", err)
			}
			rc.HA.Leases, rc.HA.LeaseName = leases, kubernetesLeaseName(c.Region)
		}
	}
	if g := c.Gossip; g != nil {
		key, _ := base64.StdEncoding.DecodeString(g.EncryptKey)
		node := g.Node
		if node == "" {
			host, _ := os.Hostname()
			node = c.Region + "-" + host + "-" + strings.ReplaceAll(c.Addr, ":", "-")
		}
		rc.Gossip = &gossip.Config{
			NodeName: node, Region: c.Region, Role: "shard", APIAddr: c.Addr,
			BindAddr: g.Bind, AdvertiseAddr: g.Advertise, Join: g.Join, EncryptKey: key,
			Profile: gossip.Profile(orDefault(g.Profile, "wan")), ProbeInterval: time.Duration(g.ProbeInterval), ProbeTimeout: time.Duration(g.ProbeTimeout),
			Admission: sec.admission,
		}
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
