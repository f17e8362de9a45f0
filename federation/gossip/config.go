package gossip

import (
	"fmt"
	"log"
	"log/slog"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"
)

// Profile names a memberlist preset. Tunables in Config override the preset.
type Profile string

const (
	// ProfileWAN suits members spread over regions (memberlist's WAN preset:
	// probe every 5s, 3s probe timeout, suspicion multiplier 6).
	ProfileWAN Profile = "wan"
	// ProfileLAN suits members in one datacenter (probe every 1s, 500ms timeout).
	ProfileLAN Profile = "lan"
	// ProfileLocal suits loopback tests (probe every 1s, 200ms timeout,
	// gossip every 100ms, suspicion multiplier 3).
	ProfileLocal Profile = "local"
)

// Limits that come from serf and memberlist, checked before anything is sent.
const (
	// MaxTagBytes is memberlist's limit on a member's encoded tags.
	MaxTagBytes = memberlist.MetaMaxSize
	// MaxNodeNameLen is serf's limit on node names when names are validated.
	MaxNodeNameLen = 128
	// MaxRegionLen bounds a region name so that state replies fit one packet.
	MaxRegionLen = 63
	// MaxStateBytes bounds the blob given to SetState. A state reply travels
	// as one UDP packet; serf refuses query replies above 1024 encoded bytes
	// (QueryResponseSizeLimit) and memberlist's UDP buffer is 1400 bytes, so
	// the blob, the region, the node name and the framing must fit in 1024.
	MaxStateBytes = 640
	// MaxUserEventBytes is serf's default limit on a user event's name plus
	// payload.
	MaxUserEventBytes = 512
)

// Tag keys this package puts on every member. They double as query filters.
const (
	TagRegion  = "region"
	TagRole    = "role"
	TagAPIAddr = "api"
	TagLeader  = "leader"
)

// Config describes one member of the gossip pool.
type Config struct {
	// NodeName is unique in the pool: letters, digits, '-' and '.', at most
	// 128 characters.
	NodeName string
	// Region is the region (shard) this member serves.
	Region string
	// Role is what the member runs, e.g. "server".
	Role string
	// APIAddr is where the member's gRPC API listens (host:port).
	APIAddr string
	// BindAddr is host:port for gossip (UDP and TCP). Port 0 picks a free port.
	BindAddr string
	// AdvertiseAddr is host:port others should use, when it differs from
	// BindAddr (NAT, 0.0.0.0 binds). Optional.
	AdvertiseAddr string
	// Join lists host:port of existing members. Start fails when none of
	// them can be reached; leave it empty to start a new pool.
	Join []string
	// EncryptKey is the initial AES key (16, 24 or 32 bytes). Empty means
	// gossip is not encrypted and the keyring cannot be used.
	EncryptKey []byte
	// Profile picks the memberlist preset; empty means ProfileWAN.
	Profile Profile

	// Tunable timeouts; zero keeps the profile's value.
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	// SuspicionMult scales how long a member stays suspect before it is
	// declared failed: SuspicionMult × max(1, log10(N)) × ProbeInterval.
	SuspicionMult int
	// SuspicionMaxTimeoutMult caps the suspicion timeout when few peers
	// confirm it (memberlist's Lifeguard extension).
	SuspicionMaxTimeoutMult int
	GossipInterval          time.Duration
	// IndirectChecks is how many other members are asked to probe a
	// member whose direct probe went unanswered (the wan and lan presets
	// ask 3, local 1).
	IndirectChecks int

	// Transport, when set, wraps the network transport memberlist sends
	// through: it is given the transport bound to BindAddr and the
	// address it advertises, and returns what memberlist uses instead.
	// Tests put a faulty network here (internal/faultnet).
	Transport func(inner memberlist.NodeAwareTransport, addr string) memberlist.NodeAwareTransport

	// Admission, when set, admits a member only once its identity is
	// verified (see Admission); nil admits every holder of the key.
	Admission Admission

	// EventBuffer is the capacity of the Events channel; events that find
	// it full are dropped and counted (Members stays authoritative).
	// Zero means 256.
	EventBuffer int
	// Now tells the time stamped on events; nil means time.Now.
	Now func() time.Time
	// Logger receives state transitions and serf's own log lines; nil
	// discards them.
	Logger *slog.Logger
}

// validate checks the fields that serf would otherwise reject late or
// silently misuse.
func (c *Config) validate() error {
	if c.NodeName == "" {
		return fmt.Errorf("%w: NodeName is empty", ErrInvalidConfig)
	}
	if !validName(c.NodeName, MaxNodeNameLen) {
		return fmt.Errorf("%w: NodeName %q: use letters, digits, '-' and '.', at most %d characters",
			ErrInvalidConfig, c.NodeName, MaxNodeNameLen)
	}
	if c.Region == "" {
		return fmt.Errorf("%w: Region is empty", ErrInvalidConfig)
	}
	if !validName(c.Region, MaxRegionLen) {
		return fmt.Errorf("%w: Region %q: use letters, digits, '-' and '.', at most %d characters",
			ErrInvalidConfig, c.Region, MaxRegionLen)
	}
	if _, _, err := splitHostPort(c.BindAddr); err != nil {
		return fmt.Errorf("%w: BindAddr: %v", ErrInvalidConfig, err)
	}
	if c.AdvertiseAddr != "" {
		if _, _, err := splitHostPort(c.AdvertiseAddr); err != nil {
			return fmt.Errorf("%w: AdvertiseAddr: %v", ErrInvalidConfig, err)
		}
	}
	switch len(c.EncryptKey) {
	case 0, 16, 24, 32:
	default:
		return fmt.Errorf("%w: EncryptKey has %d bytes, want 16, 24 or 32", ErrInvalidConfig, len(c.EncryptKey))
	}
	if _, err := profileConfig(c.Profile); err != nil {
		return err
	}
	if c.ProbeInterval < 0 || c.ProbeTimeout < 0 || c.GossipInterval < 0 ||
		c.SuspicionMult < 0 || c.SuspicionMaxTimeoutMult < 0 || c.EventBuffer < 0 || c.IndirectChecks < 0 {
		return fmt.Errorf("%w: tunables must not be negative", ErrInvalidConfig)
	}
	probeInterval, probeTimeout := c.ProbeInterval, c.ProbeTimeout
	if base, _ := profileConfig(c.Profile); base != nil {
		if probeInterval == 0 {
			probeInterval = base.ProbeInterval
		}
		if probeTimeout == 0 {
			probeTimeout = base.ProbeTimeout
		}
	}
	if probeTimeout > probeInterval {
		return fmt.Errorf("%w: ProbeTimeout %v exceeds ProbeInterval %v", ErrInvalidConfig, probeTimeout, probeInterval)
	}
	if len(encodeTags(c.tags(false))) > MaxTagBytes {
		return fmt.Errorf("%w: tags exceed %d bytes", ErrInvalidConfig, MaxTagBytes)
	}
	return nil
}

// tags is the tag set this member publishes.
func (c *Config) tags(leader bool) map[string]string {
	t := map[string]string{
		TagRegion:  c.Region,
		TagRole:    c.Role,
		TagAPIAddr: c.APIAddr,
		TagLeader:  "0",
	}
	if leader {
		t[TagLeader] = "1"
	}
	return t
}

// encodeTags estimates the encoded size of tags the way serf lays them out
// (key, NUL, value, NUL); serf's own encoding is within a few bytes of it.
func encodeTags(tags map[string]string) []byte {
	var b []byte
	for k, v := range tags {
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, v...)
		b = append(b, 0)
	}
	return b
}

// profileConfig returns a fresh memberlist preset for p.
func profileConfig(p Profile) (*memberlist.Config, error) {
	switch p {
	case "", ProfileWAN:
		return memberlist.DefaultWANConfig(), nil
	case ProfileLAN:
		return memberlist.DefaultLANConfig(), nil
	case ProfileLocal:
		return memberlist.DefaultLocalConfig(), nil
	default:
		return nil, fmt.Errorf("%w: Profile %q: want wan, lan or local", ErrInvalidConfig, p)
	}
}

// memberlistConfig builds the memberlist configuration: the preset, the
// tunables, the addresses and the key.
func (c *Config) memberlistConfig() (*memberlist.Config, error) {
	ml, err := profileConfig(c.Profile)
	if err != nil {
		return nil, err
	}
	if c.ProbeInterval > 0 {
		ml.ProbeInterval = c.ProbeInterval
	}
	if c.ProbeTimeout > 0 {
		ml.ProbeTimeout = c.ProbeTimeout
	}
	if c.SuspicionMult > 0 {
		ml.SuspicionMult = c.SuspicionMult
	}
	if c.SuspicionMaxTimeoutMult > 0 {
		ml.SuspicionMaxTimeoutMult = c.SuspicionMaxTimeoutMult
	}
	if c.GossipInterval > 0 {
		ml.GossipInterval = c.GossipInterval
	}
	if c.IndirectChecks > 0 {
		ml.IndirectChecks = c.IndirectChecks
	}
	host, port, err := splitHostPort(c.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("%w: BindAddr: %v", ErrInvalidConfig, err)
	}
	ml.BindAddr, ml.BindPort = host, port
	ml.AdvertisePort = port
	if c.AdvertiseAddr != "" {
		host, port, err := splitHostPort(c.AdvertiseAddr)
		if err != nil {
			return nil, fmt.Errorf("%w: AdvertiseAddr: %v", ErrInvalidConfig, err)
		}
		ml.AdvertiseAddr, ml.AdvertisePort = host, port
	}
	if len(c.EncryptKey) > 0 {
		ml.SecretKey = append([]byte(nil), c.EncryptKey...)
	}
	return ml, nil
}

// wrapTransport binds memberlist's network transport itself and hands it
// to Config.Transport; without it memberlist binds its own.
func (c *Config) wrapTransport(ml *memberlist.Config, logger *log.Logger) error {
	if c.Transport == nil {
		return nil
	}
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{
		BindAddrs: []string{ml.BindAddr}, BindPort: ml.BindPort, Logger: logger})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStart, err)
	}
	if ml.BindPort == 0 {
		ml.BindPort = nt.GetAutoBindPort()
		if c.AdvertiseAddr == "" {
			ml.AdvertisePort = ml.BindPort
		}
	}
	host := ml.BindAddr
	if ml.AdvertiseAddr != "" {
		host = ml.AdvertiseAddr
	}
	ml.Transport = c.Transport(nt, net.JoinHostPort(host, strconv.Itoa(ml.AdvertisePort)))
	return nil
}

// serfConfig builds the serf configuration around ml. eventCh receives
// serf's events; logs go to the slog bridge, whose lines probes reads, and
// acked probes to probes too (memberlist's ping delegate, which serf would
// otherwise take for its network coordinates, unused here).
func (c *Config) serfConfig(ml *memberlist.Config, eventCh chan<- serf.Event, probes *probeLog) *serf.Config {
	sc := serf.DefaultConfig()
	sc.NodeName = c.NodeName
	sc.Tags = c.tags(false)
	sc.MemberlistConfig = ml
	sc.EventCh = eventCh
	sc.ValidateNodeNames = true
	sc.UserEventSizeLimit = MaxUserEventBytes
	sc.DisableCoordinates = true
	ml.Ping = pingDelegate{log: probes}
	logger := newSerfLogger(c.Logger, probes.observe)
	sc.LogOutput = nil
	sc.Logger = logger
	ml.LogOutput = nil
	ml.Logger = logger
	return sc
}

// DetectionEstimate is how long, typically at most, memberlist takes to
// declare a silent member failed in a pool of n members under cfg:
//
//   - up to one probe interval until some member probes it (each member
//     probes one peer per interval, in a shuffled round-robin, so in a
//     small pool this is occasionally longer);
//   - one probe interval for the direct and indirect probes to fail;
//   - the suspicion timeout, SuspicionMult × max(1, log10(n)) ×
//     ProbeInterval. When the pool is large enough for peers to confirm
//     the suspicion (n-2 ≥ SuspicionMult-2) the timer starts at
//     SuspicionMaxTimeoutMult times that and shrinks as confirmations
//     arrive, so the estimate uses the maximum;
//   - one gossip interval to spread the verdict.
//
// It is an estimate, not a guarantee: the layer that declares regions
// failed should add its own margin.
func DetectionEstimate(cfg Config, n int) (time.Duration, error) {
	ml, err := cfg.memberlistConfig()
	if err != nil {
		return 0, err
	}
	scale := math.Max(1, math.Log10(math.Max(1, float64(n))))
	minTimeout := time.Duration(float64(ml.SuspicionMult) * scale * float64(ml.ProbeInterval))
	timeout := minTimeout
	if expected := ml.SuspicionMult - 2; expected > 0 && n-2 >= expected {
		timeout = time.Duration(ml.SuspicionMaxTimeoutMult) * minTimeout
	}
	return 2*ml.ProbeInterval + timeout + ml.GossipInterval, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host", addr)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q has a bad port", addr)
	}
	return host, port, nil
}

// validName accepts what serf's ValidateNodeNames accepts.
func validName(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}
