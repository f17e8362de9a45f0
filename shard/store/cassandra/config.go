package cassandra

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// Defaults for the zero values of Config.
const (
	DefaultKeyspace          = "peloton"
	DefaultTimeout           = 10 * time.Second
	DefaultConnectTimeout    = 5 * time.Second
	DefaultReconnectInterval = 2 * time.Second
)

// Config says where the store's Cassandra is and how to talk to it.
type Config struct {
	// Hosts are the contact points, "host" or "host:port" (port 9042 when
	// none is given).
	Hosts []string
	// Keyspace holds every table; DefaultKeyspace when empty.
	Keyspace string
	// Replication is the keyspace's replication, used only when Migrate
	// (or the migrate command) creates the keyspace. Zero means
	// SimpleStrategy with factor 1.
	Replication Replication
	// Consistency of reads and plain writes, by name ("LOCAL_QUORUM",
	// "QUORUM", "ONE", ...); LOCAL_QUORUM when empty. Compare-and-set
	// statements always use LOCAL_SERIAL for their Paxos phase.
	Consistency string
	// Timeout bounds each request to Cassandra; DefaultTimeout when zero.
	Timeout time.Duration
	// ConnectTimeout bounds each connection attempt; DefaultConnectTimeout
	// when zero.
	ConnectTimeout time.Duration
	// ReconnectInterval is how often a host marked down is tried again;
	// DefaultReconnectInterval when zero.
	ReconnectInterval time.Duration
	// Migrate applies missing schema migrations when the store opens.
	// Without it, Open fails unless the keyspace is at this build's schema
	// version.
	Migrate bool
}

// Replication is a keyspace's replication: SimpleStrategy with Factor
// copies when DataCenters is empty, else NetworkTopologyStrategy with the
// given number of copies per data center (one per region).
type Replication struct {
	Factor      int
	DataCenters map[string]int
}

var (
	identifier     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)
	dataCenterName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// ParseReplication reads the migrate command's --replication value: a
// number N for SimpleStrategy with N copies, or "dc1=3,dc2=3" for
// NetworkTopologyStrategy.
func ParseReplication(s string) (Replication, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Replication{}, fmt.Errorf("%w: replication is empty", store.ErrInvalid)
	}
	if n, err := strconv.Atoi(s); err == nil {
		r := Replication{Factor: n}
		return r, r.validate()
	}
	r := Replication{DataCenters: map[string]int{}}
	for _, part := range strings.Split(s, ",") {
		dc, count, ok := strings.Cut(strings.TrimSpace(part), "=")
		dc = strings.TrimSpace(dc)
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err != nil {
			return Replication{}, fmt.Errorf("%w: replication %q: want N or DC=N[,DC=N...], got %q", store.ErrInvalid, s, part)
		}
		if _, dup := r.DataCenters[dc]; dup {
			return Replication{}, fmt.Errorf("%w: replication %q: data center %q given twice", store.ErrInvalid, s, dc)
		}
		r.DataCenters[dc] = n
	}
	return r, r.validate()
}

func (r Replication) validate() error {
	if len(r.DataCenters) == 0 {
		if r.Factor < 0 || r.Factor > 32 {
			return fmt.Errorf("%w: replication factor %d, want 1 to 32", store.ErrInvalid, r.Factor)
		}
		return nil
	}
	if r.Factor != 0 {
		return fmt.Errorf("%w: replication has both a factor and data centers", store.ErrInvalid)
	}
	for dc, n := range r.DataCenters {
		if !dataCenterName.MatchString(dc) {
			return fmt.Errorf("%w: replication data center name %q", store.ErrInvalid, dc)
		}
		if n < 1 || n > 32 {
			return fmt.Errorf("%w: replication factor %d for data center %q, want 1 to 32", store.ErrInvalid, n, dc)
		}
	}
	return nil
}

// CQL is the replication map as CQL, for CREATE KEYSPACE.
func (r Replication) CQL() string {
	if len(r.DataCenters) == 0 {
		return fmt.Sprintf("{'class': 'SimpleStrategy', 'replication_factor': %d}", max(r.Factor, 1))
	}
	var b strings.Builder
	b.WriteString("{'class': 'NetworkTopologyStrategy'")
	for _, dc := range slices.Sorted(maps.Keys(r.DataCenters)) {
		fmt.Fprintf(&b, ", '%s': %d", dc, r.DataCenters[dc])
	}
	b.WriteString("}")
	return b.String()
}

// String is the form ParseReplication reads.
func (r Replication) String() string {
	if len(r.DataCenters) == 0 {
		return strconv.Itoa(max(r.Factor, 1))
	}
	parts := make([]string, 0, len(r.DataCenters))
	for _, dc := range slices.Sorted(maps.Keys(r.DataCenters)) {
		parts = append(parts, fmt.Sprintf("%s=%d", dc, r.DataCenters[dc]))
	}
	return strings.Join(parts, ",")
}

// withDefaults returns c with its zero values filled in, or ErrInvalid
// naming the bad field.
func (c Config) withDefaults() (Config, error) {
	if len(c.Hosts) == 0 {
		return c, fmt.Errorf("%w: cassandra hosts: none given", store.ErrInvalid)
	}
	for _, h := range c.Hosts {
		if strings.TrimSpace(h) == "" {
			return c, fmt.Errorf("%w: cassandra hosts: empty host in %q", store.ErrInvalid, c.Hosts)
		}
	}
	if c.Keyspace == "" {
		c.Keyspace = DefaultKeyspace
	}
	if !identifier.MatchString(c.Keyspace) {
		return c, fmt.Errorf("%w: keyspace %q: want a letter then up to 47 letters, digits or _", store.ErrInvalid, c.Keyspace)
	}
	if err := c.Replication.validate(); err != nil {
		return c, err
	}
	if c.Consistency == "" {
		c.Consistency = "LOCAL_QUORUM"
	}
	if _, err := gocql.ParseConsistencyWrapper(c.Consistency); err != nil {
		return c, fmt.Errorf("%w: consistency %q", store.ErrInvalid, c.Consistency)
	}
	if c.Timeout < 0 || c.ConnectTimeout < 0 || c.ReconnectInterval < 0 {
		return c, fmt.Errorf("%w: negative timeout", store.ErrInvalid)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ReconnectInterval == 0 {
		c.ReconnectInterval = DefaultReconnectInterval
	}
	return c, nil
}

// cluster builds the driver's configuration; keyspace may be empty for a
// session that only manages keyspaces.
func (c Config) cluster(keyspace string) *gocql.ClusterConfig {
	cl := gocql.NewCluster(c.Hosts...)
	cl.Keyspace = keyspace
	// The driver finds the cluster's other nodes (system.peers, which has
	// no port) and reaches them at cl.Port: the port the contact points
	// share, when they name one.
	if port, ok := sharedPort(c.Hosts); ok {
		cl.Port = port
	}
	cons, _ := gocql.ParseConsistencyWrapper(c.Consistency) // checked by withDefaults
	cl.Consistency = cons
	cl.SerialConsistency = gocql.LocalSerial
	cl.Timeout = c.Timeout
	cl.ConnectTimeout = c.ConnectTimeout
	cl.ReconnectInterval = c.ReconnectInterval
	cl.ReconnectionPolicy = &gocql.ConstantReconnectionPolicy{MaxRetries: 3, Interval: time.Second}
	// Retries of a compare-and-set could apply it twice; the store maps
	// failures to ErrUnavailable and lets its caller decide.
	cl.RetryPolicy = nil
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cl.DisableInitialHostLookup = false
	cl.Logger = discardLogger{}
	return cl
}

// sharedPort is the port every host names, if they all name the same.
func sharedPort(hosts []string) (int, bool) {
	port := 0
	for _, h := range hosts {
		_, p, err := net.SplitHostPort(strings.TrimSpace(h))
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || (port != 0 && n != port) {
			return 0, false
		}
		port = n
	}
	return port, port != 0
}

// hostsString names the configured hosts in error messages.
func (c Config) hostsString() string { return strings.Join(c.Hosts, ",") }

// discardLogger keeps the driver quiet: failures reach the caller as
// errors, and reconnect attempts are not worth a log line each.
type discardLogger struct{}

func (discardLogger) Print(...any)          {}
func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}
