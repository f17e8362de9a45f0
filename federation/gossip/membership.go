package gossip

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/serf/serf"
)

// serfEventBuffer sizes the channel serf writes to. Serf blocks on it, so
// the pump drains it promptly and never blocks on the consumer.
const serfEventBuffer = 1024

// Membership is this process's member of the gossip pool.
type Membership struct {
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	serf   *serf.Serf

	probes *probeLog
	// suspicion is the longest memberlist keeps a member suspect.
	suspicion time.Duration

	serfEvents chan serf.Event
	events     chan Event
	dropped    atomic.Uint64

	// tagsMu serialises tag updates; serf's SetTags is not safe to call
	// concurrently with itself.
	tagsMu sync.Mutex
	leader atomic.Bool
	proof  string    // TagProof's value, with Config.Admission
	admit  *admitter // nil without Config.Admission

	// stateMu guards the state blob answered to state queries.
	stateMu    sync.Mutex
	state      []byte
	hasState   bool
	stateLTime uint64
	stateClock serf.LamportClock

	done      chan struct{}
	pumpDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Start creates the member, starts gossiping on cfg.BindAddr and joins
// cfg.Join. It fails with ErrInvalidConfig for a bad config, ErrStart when
// serf cannot start (e.g. the address is taken) and ErrJoin when none of
// cfg.Join could be reached.
func Start(ctx context.Context, cfg Config) (*Membership, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ml, err := cfg.memberlistConfig()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("node", cfg.NodeName, "region", cfg.Region)
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	buffer := cfg.EventBuffer
	if buffer == 0 {
		buffer = 256
	}
	m := &Membership{
		cfg:        cfg,
		logger:     logger,
		now:        now,
		serfEvents: make(chan serf.Event, serfEventBuffer),
		events:     make(chan Event, buffer),
		done:       make(chan struct{}),
		pumpDone:   make(chan struct{}),
		probes:     newProbeLog(now),
		suspicion:  time.Duration(ml.SuspicionMult*ml.SuspicionMaxTimeoutMult) * ml.ProbeInterval,
	}
	sc := cfg.serfConfig(ml, m.serfEvents, m.probes)
	if err := cfg.wrapTransport(ml, sc.Logger); err != nil {
		return nil, err
	}
	if cfg.Admission != nil {
		m.admit = newAdmitter(cfg.Admission, cfg.NodeName, logger, now)
		sc.Merge = m.admit
	}
	s, err := serf.Create(sc)
	if err != nil {
		if cfg.Transport != nil && ml.Transport != nil {
			_ = ml.Transport.Shutdown()
		}
		if m.admit != nil {
			m.admit.stop()
		}
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	m.serf = s
	go m.pump()
	if cfg.Admission != nil {
		// The proof covers the gossip address, known only now (port 0).
		if err := m.publishProof(); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	logger.Info("gossip member started", "addr", m.Addr(), "profile", profileName(cfg.Profile),
		"encrypted", len(cfg.EncryptKey) > 0)
	if len(cfg.Join) > 0 {
		if _, err := m.Join(ctx, cfg.Join); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	return m, nil
}

// Join contacts the given members (host:port) and returns how many
// answered. It fails with ErrJoin when none did.
func (m *Membership) Join(ctx context.Context, addrs []string) (int, error) {
	if m.isClosed() {
		return 0, ErrClosed
	}
	var contacted int
	err := runWithContext(ctx, func() error {
		n, err := m.serf.Join(addrs, true)
		contacted = n
		return err
	})
	if err != nil && contacted == 0 {
		return 0, fmt.Errorf("%w: %v: %w", ErrJoin, addrs, err)
	}
	m.logger.Info("gossip joined", "contacted", contacted)
	return contacted, nil
}

// Leave announces that this member is leaving, so the others see it as
// left rather than failed, and waits for the announcement to spread.
// Call Close afterwards.
func (m *Membership) Leave(ctx context.Context) error {
	if m.isClosed() {
		return ErrClosed
	}
	err := runWithContext(ctx, m.serf.Leave)
	if err != nil {
		return fmt.Errorf("gossip: leave: %w", err)
	}
	m.logger.Info("gossip member left")
	return nil
}

// Close stops gossiping without announcing it: the others declare this
// member failed after their suspicion timeout. Events is closed once the
// pump has stopped. Close is idempotent.
func (m *Membership) Close() error {
	m.closeOnce.Do(func() {
		if err := m.serf.Shutdown(); err != nil {
			m.closeErr = fmt.Errorf("gossip: shutdown: %w", err)
		}
		if m.admit != nil {
			m.admit.stop()
		}
		close(m.done)
		<-m.pumpDone
		close(m.events)
		m.logger.Info("gossip member stopped")
	})
	return m.closeErr
}

func (m *Membership) isClosed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// Events delivers membership changes and user events, in the order this
// member learned of them. It is closed by Close. Events that find the
// channel full are dropped and counted by DroppedEvents.
func (m *Membership) Events() <-chan Event { return m.events }

// DroppedEvents counts events dropped because Events was full.
func (m *Membership) DroppedEvents() uint64 { return m.dropped.Load() }

// Name is this member's node name.
func (m *Membership) Name() string { return m.cfg.NodeName }

// Addr is this member's advertised gossip address (host:port), the one
// others pass to Join.
func (m *Membership) Addr() string {
	return memberFromSerf(m.serf.LocalMember()).Addr
}

// Local is this member as the pool sees it.
func (m *Membership) Local() Member {
	return memberFromSerf(m.serf.LocalMember())
}

// Members lists every member this one knows of, itself included, sorted
// by name. Failed and left members stay listed until serf reaps them.
// Suspect is this member's own suspicion (see Member.Suspect).
func (m *Membership) Members() []Member {
	raw := m.serf.Members()
	now := m.now()
	out := make([]Member, 0, len(raw))
	for _, sm := range raw {
		mem := memberFromSerf(sm)
		if mem.Status == StatusAlive {
			mem.Suspect = m.probes.suspect(mem.Name, now, m.suspicion)
		}
		out = append(out, mem)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Probes is what this member saw of its probes of the named member over
// the last window (at most ProbeWindow).
func (m *Membership) Probes(name string, window time.Duration) Probes {
	return m.probes.probes(name, window)
}

// HealthScore is memberlist's view of this member's own health (its
// awareness score, 0 is healthy): it rises when this member's probes fail
// in a way that suggests the fault is its own, and stretches its probe
// interval and timeouts.
func (m *Membership) HealthScore() int { return m.serf.Memberlist().GetHealthScore() }

// Regions groups Members by region.
func (m *Membership) Regions() map[string][]Member {
	return groupByRegion(m.Members())
}

func groupByRegion(members []Member) map[string][]Member {
	out := make(map[string][]Member)
	for _, mem := range members {
		out[mem.Region] = append(out[mem.Region], mem)
	}
	return out
}

// SetLeader publishes whether this member leads its region's shard. It
// returns once the new tags are queued for gossip (bounded by serf's
// broadcast timeout) or ctx is done.
func (m *Membership) SetLeader(ctx context.Context, leader bool) error {
	if m.isClosed() {
		return ErrClosed
	}
	return runWithContext(ctx, func() error {
		m.tagsMu.Lock()
		defer m.tagsMu.Unlock()
		if err := m.serf.SetTags(m.tags(leader)); err != nil {
			return fmt.Errorf("gossip: set tags: %w", err)
		}
		if m.leader.Swap(leader) != leader {
			m.logger.Info("gossip leader flag changed", "leader", leader)
		}
		return nil
	})
}

// tags is the tag set this member publishes: the config's and the proof.
func (m *Membership) tags(leader bool) map[string]string {
	t := m.cfg.tags(leader)
	if m.proof != "" {
		t[TagProof] = m.proof
	}
	return t
}

// publishProof makes this member's proof of identity and publishes it.
func (m *Membership) publishProof() error {
	local := m.Local()
	proof, err := m.cfg.Admission.Prove(Claim{Name: local.Name, Region: m.cfg.Region, APIAddr: m.cfg.APIAddr, Addr: local.Addr})
	if err != nil {
		return fmt.Errorf("%w: proof of identity: %v", ErrStart, err)
	}
	m.tagsMu.Lock()
	defer m.tagsMu.Unlock()
	m.proof = proof
	tags := m.tags(m.leader.Load())
	if n := len(encodeTags(tags)); n > MaxTagBytes {
		return fmt.Errorf("%w: tags with the proof of identity take %d bytes, limit %d (use an ECDSA or Ed25519 key, or shorter names)", ErrInvalidConfig, n, MaxTagBytes)
	}
	if err := m.serf.SetTags(tags); err != nil {
		return fmt.Errorf("%w: set tags: %v", ErrStart, err)
	}
	return nil
}

// Broadcast sends a user event to every member (including this one) by
// gossip. Name plus payload must not exceed MaxUserEventBytes.
func (m *Membership) Broadcast(name string, payload []byte) error {
	if m.isClosed() {
		return ErrClosed
	}
	if len(name)+len(payload) > MaxUserEventBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrPayloadTooLarge, len(name)+len(payload), MaxUserEventBytes)
	}
	if err := m.serf.UserEvent(name, payload, false); err != nil {
		return fmt.Errorf("gossip: user event: %w", err)
	}
	return nil
}

// pump moves serf's events to Events, answers state queries, and logs
// membership transitions. It never blocks on the consumer.
func (m *Membership) pump() {
	defer close(m.pumpDone)
	for {
		select {
		case <-m.done:
			return
		case ev := <-m.serfEvents:
			if q, ok := ev.(*serf.Query); ok {
				m.answerQuery(q)
				continue
			}
			out, ok := translate(ev, m.now())
			if !ok {
				continue
			}
			for _, e := range out {
				m.logTransition(e)
				select {
				case m.events <- e:
				default:
					m.dropped.Add(1)
				}
			}
		}
	}
}

func (m *Membership) logTransition(e Event) {
	switch e := e.(type) {
	case MemberUp:
		m.logger.Info("gossip member up", "member", e.Member.Name, "member_region", e.Member.Region)
	case MemberDown:
		m.logger.Warn("gossip member failed", "member", e.Member.Name, "member_region", e.Member.Region)
	case MemberLeft:
		m.logger.Info("gossip member left", "member", e.Member.Name, "member_region", e.Member.Region)
	case MemberReaped:
		m.logger.Info("gossip member reaped", "member", e.Member.Name, "member_region", e.Member.Region)
	case MemberUpdated:
		m.logger.Debug("gossip member updated", "member", e.Member.Name, "leader", e.Member.Leader)
	}
}

// runWithContext runs fn and returns its error, or ctx's error if ctx is
// done first (fn then finishes in the background; serf bounds it).
func runWithContext(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	result := make(chan error, 1)
	go func() { result <- fn() }()
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func profileName(p Profile) Profile {
	if p == "" {
		return ProfileWAN
	}
	return p
}
