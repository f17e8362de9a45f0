package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/peloton-federated/peloton/federation/policy"
	k8slease "github.com/peloton-federated/peloton/hostmgr-k8s/lease"
	"github.com/peloton-federated/peloton/shard/model"
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
	// Reservation tunes host reservations for tasks that fit no host.
	Reservation struct {
		// After: how long such a task waits before a host is reserved
		// for it ("off" turns reservations off); default 1m.
		After string `json:"after"`
		// PerPool: the most hosts held for one pool's tasks; default 2.
		PerPool int `json:"perPool"`
	} `json:"reservation"`
	Gossip *gossipSection `json:"gossip"`
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

// gossipSection is the gossip section of a server config: the region's
// membership in the federation.
type gossipSection struct {
	Node          string   `json:"node"`
	Bind          string   `json:"bind"`
	Advertise     string   `json:"advertise"`
	Join          []string `json:"join"`
	EncryptKey    string   `json:"encryptKey"`
	Profile       string   `json:"profile"`
	ProbeInterval duration `json:"probeInterval"`
	ProbeTimeout  duration `json:"probeTimeout"`
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
	c, err := parseServerConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if problems := c.check(); len(problems) > 0 {
		return nil, fmt.Errorf("%s is not a valid server config:\n  %s", path, strings.Join(problems, "\n  "))
	}
	return c, nil
}

// parseServerConfig reads a config's YAML, ${NAME} replaced by the
// environment variable's value; a field it does not know is an error.
func parseServerConfig(raw []byte) (*serverConfig, error) {
	raw, err := expandEnv(raw)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var c serverConfig
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

// configCheck checks a part of a server config: it fills the part's
// defaults and adds every problem, naming its field.
type configCheck func(c *serverConfig, add func(field, msg string))

// serverChecks check a server config, part after part, in the order its
// problems are listed.
var serverChecks = []configCheck{
	checkPlace,      // region, addr, dataDir, hosts
	checkStore,      // store
	checkHA,         // ha
	checkScheduling, // entitlementPeriod, history, events
	checkHostPools,  // hostPools, reservation
	checkGossip,     // gossip
	func(c *serverConfig, add func(field, msg string)) { c.Limits.check(add) },
	checkSecurity, // tls, auth, audit
	checkHealth,   // health
}

// check fills the defaults of c and lists its problems, each as
// "field: what is wrong".
func (c *serverConfig) check() []string {
	var problems []string
	add := func(field, msg string) { problems = append(problems, field+": "+msg) }
	for _, check := range serverChecks {
		check(c, add)
	}
	return problems
}

// defaultServerAddr is where a server listens unless addr says.
const defaultServerAddr = "127.0.0.1:5390"

// checkPlace checks what the region is and where it runs.
func checkPlace(c *serverConfig, add func(field, msg string)) {
	if c.Region == "" {
		add("region", "is required")
	}
	if c.Addr == "" {
		c.Addr = defaultServerAddr
	}
	if c.DataDir == "" {
		add("dataDir", "is required")
	}
	if len(c.Hosts) == 0 {
		add("hosts", "at least one host manager cluster is required (KIND[:NAME][,KEY=VALUE...])")
	}
}

// Bounds of store.cassandra.timeout.
const (
	minCassandraTimeout = 100 * time.Millisecond
	maxCassandraTimeout = 5 * time.Minute
)

func checkStore(c *serverConfig, add func(field, msg string)) {
	switch c.Store.Kind {
	case "", "embedded":
	case "cassandra":
		checkCassandra(c, add)
	default:
		add("store.kind", fmt.Sprintf("must be embedded or cassandra, not %q", c.Store.Kind))
	}
}

func checkCassandra(c *serverConfig, add func(field, msg string)) {
	cc := &c.Store.Cassandra
	if len(cc.Hosts) == 0 {
		add("store.cassandra.hosts", "is required with store.kind cassandra")
	}
	if _, err := cassandra.ParseReplication(orDefault(cc.Replication, "1")); err != nil {
		add("store.cassandra.replication", err.Error())
	}
	if t := time.Duration(cc.Timeout); t != 0 && (t < minCassandraTimeout || t > maxCassandraTimeout) {
		add("store.cassandra.timeout", fmt.Sprintf("must be between 100ms and 5m, not %s", t))
	}
}

// defaultLeaseTTL is ha.leaseTTL unless set.
const defaultLeaseTTL = 10 * time.Second

func checkHA(c *serverConfig, add func(field, msg string)) {
	if c.HA == nil {
		return
	}
	if c.Store.Kind != "cassandra" {
		add("ha", "needs store.kind cassandra: the members of a region share its store")
	}
	if c.HA.LeaseTTL == 0 {
		c.HA.LeaseTTL = duration(defaultLeaseTTL)
	}
	if c.HA.LeaseTTL < duration(time.Second) {
		add("ha.leaseTTL", "must be at least 1s")
	}
	switch c.HA.Lease {
	case "", leaseInStore:
		c.HA.Lease = leaseInStore
		checkStoreLease(c, add)
	case leaseInKubernetes:
		checkKubernetesLease(c, add)
	default:
		add("ha.lease", fmt.Sprintf("must be store or kubernetes, not %q", c.HA.Lease))
	}
}

// checkStoreLease checks the ha section of a lease kept in the store.
func checkStoreLease(c *serverConfig, add func(field, msg string)) {
	if c.HA.Kubeconfig != "" {
		add("ha.kubeconfig", "is only read with ha.lease kubernetes")
	}
	if c.HA.Namespace != "" {
		add("ha.namespace", "is only read with ha.lease kubernetes")
	}
}

// checkKubernetesLease checks the ha section of a lease kept as a
// Kubernetes Lease object, and that the region can name it.
func checkKubernetesLease(c *serverConfig, add func(field, msg string)) {
	ha := c.HA
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
}

// defaultEntitlementPeriod is entitlementPeriod unless set.
const defaultEntitlementPeriod = time.Second

// checkScheduling checks the shard's periods and how long it keeps
// history and events.
func checkScheduling(c *serverConfig, add func(field, msg string)) {
	if c.EntitlementPeriod == 0 {
		c.EntitlementPeriod = duration(defaultEntitlementPeriod)
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
}

func checkHostPools(c *serverConfig, add func(field, msg string)) {
	hp := c.HostPools
	if _, err := hostPoolPeriod(hp.Period); err != nil {
		add("hostPools.period", err.Error())
	}
	for name, n := range hp.Floors {
		if !model.ValidHostPoolName(name) {
			add("hostPools.floors."+name, "not a host pool name (lowercase letters, digits and -, starting with a letter)")
		} else if n < 0 {
			add("hostPools.floors."+name, "must be >= 0")
		}
	}
	if hp.DrainDeadline < 0 {
		add("hostPools.drainDeadline", "must be >= 0")
	}
	if _, err := reserveAfter(c.Reservation.After); err != nil {
		add("reservation.after", err.Error())
	}
	if n := c.Reservation.PerPool; n < 0 || n > maxReservePerPool {
		add("reservation.perPool", fmt.Sprintf("must be between 0 (the default, 2) and %d", maxReservePerPool))
	}
}

func checkGossip(c *serverConfig, add func(field, msg string)) {
	g := c.Gossip
	if g == nil {
		return
	}
	if g.Bind == "" {
		add("gossip.bind", "is required (host:port)")
	}
	if g.EncryptKey != "" && !validEncryptKey(g.EncryptKey) {
		add("gossip.encryptKey", "must be base64 of 16, 24 or 32 bytes")
	}
	switch g.Profile {
	case "", "wan", "lan", "local":
	default:
		add("gossip.profile", fmt.Sprintf("must be wan, lan or local, not %q", g.Profile))
	}
}

// validEncryptKey tells a gossip key: base64 of an AES-128, -192 or -256
// key.
func validEncryptKey(s string) bool {
	k, err := base64.StdEncoding.DecodeString(s)
	return err == nil && (len(k) == 16 || len(k) == 24 || len(k) == 32)
}

// checkHealth checks the health thresholds: all unset takes the defaults.
func checkHealth(c *serverConfig, add func(field, msg string)) {
	h := c.healthConfig()
	if h == (policy.HealthConfig{}) {
		h = policy.DefaultHealthConfig()
		c.Health.SuspectAfter, c.Health.FailAfter, c.Health.RecoverAfter = duration(h.SuspectAfter), duration(h.FailAfter), duration(h.RecoverAfter)
	} else if err := h.Validate(); err != nil {
		add("health", err.Error())
	}
}

// healthConfig is the health section as the federation takes it.
func (c *serverConfig) healthConfig() policy.HealthConfig {
	return policy.HealthConfig{SuspectAfter: time.Duration(c.Health.SuspectAfter), FailAfter: time.Duration(c.Health.FailAfter), RecoverAfter: time.Duration(c.Health.RecoverAfter)}
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
