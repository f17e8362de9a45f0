package federation

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
)

// GossipDirectory is the directory of a federation member: regions and
// their API addresses from gossip tags, their health from a tracker fed
// with how many of each region's members are reachable. It also isolates
// its region for drills by leaving gossip (without a graceful leave, so
// the others detect a failure) and rejoining.
type GossipDirectory struct {
	cfg   gossip.Config
	log   *slog.Logger
	fence func(bool)

	mu      sync.Mutex
	mem     *gossip.Membership
	tracker *policy.HealthTracker
	known   map[string]Region // every region ever seen, by name
	// suspect holds the members suspect at the last observation, and
	// those confirmed failed after it, with when each was first seen
	// suspect: a member confirmed failed was unreachable from then on.
	suspect   map[string]time.Time
	peers     []string // gossip addresses seen, to rejoin
	isolated  bool
	listeners []func(policy.Transition)
	// joined: a configured peer answered a join (or there was none to
	// join); see Joining.
	joined bool
}

// NewGossipDirectory joins the gossip pool. fence stops the local shard's
// launches while isolated.
func NewGossipDirectory(ctx context.Context, cfg gossip.Config, health policy.HealthConfig, fence func(bool), log *slog.Logger) (*GossipDirectory, error) {
	tracker, err := policy.NewHealthTracker(health)
	if err != nil {
		return nil, err
	}
	d := &GossipDirectory{cfg: cfg, log: log, fence: fence, tracker: tracker, known: map[string]Region{}, suspect: map[string]time.Time{}}
	d.known[cfg.Region] = Region{Name: cfg.Region, Addr: cfg.APIAddr, Health: "alive"}
	// Join in the background and keep retrying: peers may start later.
	start := cfg
	start.Join = nil
	mem, err := gossip.Start(ctx, start)
	if err != nil {
		return nil, fmt.Errorf("gossip: %w", err)
	}
	d.mem = mem
	d.peers = append(d.peers, cfg.Join...)
	return d, nil
}

// GossipAddr is the address this member gossips on, the one others join
// (the port chosen when the config asked for port 0).
func (d *GossipDirectory) GossipAddr() string { return d.mem.Addr() }

// joinPeers joins the configured peers until some peer answered.
func (d *GossipDirectory) joinPeers(ctx context.Context) {
	for attempt := 0; ; attempt++ {
		d.mu.Lock()
		mem, peers, isolated := d.mem, append([]string(nil), d.cfg.Join...), d.isolated
		d.mu.Unlock()
		if len(peers) == 0 {
			return
		}
		if mem != nil && !isolated {
			n, err := mem.Join(ctx, peers)
			if err == nil && n > 0 {
				d.log.Info("joined the federation", "contacted", n)
				d.mu.Lock()
				d.joined = true
				d.mu.Unlock()
				return
			}
			if attempt%10 == 0 {
				d.log.Warn("cannot join the federation yet; retrying", "peers", peers, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// OnTransition registers a function told of every health change.
func (d *GossipDirectory) OnTransition(f func(policy.Transition)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listeners = append(d.listeners, f)
}

func (d *GossipDirectory) Local() string { return d.cfg.Region }

// Joining reports whether the member was given peers to join and none has
// answered yet: until one does, seeing no other region does not mean
// there is none.
func (d *GossipDirectory) Joining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cfg.Join) > 0 && !d.joined && len(d.known) <= 1
}

// Regions lists every known region with the health this member sees.
func (d *GossipDirectory) Regions() []Region {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Region, 0, len(d.known))
	for _, r := range d.known {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Members lists the gossip members this member sees.
func (d *GossipDirectory) Members() []gossip.Member {
	d.mu.Lock()
	mem := d.mem
	d.mu.Unlock()
	if mem == nil {
		return nil
	}
	return mem.Members()
}

// Run observes the gossip pool every interval until ctx ends.
func (d *GossipDirectory) Run(ctx context.Context, interval time.Duration) {
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		d.joinPeers(ctx)
	}()
	defer func() { <-joined }()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		d.observe(time.Now())
		select {
		case <-ctx.Done():
			d.mu.Lock()
			if d.mem != nil {
				_ = d.mem.Leave(context.Background())
				_ = d.mem.Close()
			}
			d.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

// observe feeds the tracker and refreshes the region list.
func (d *GossipDirectory) observe(now time.Time) {
	d.mu.Lock()
	var members []gossip.Member
	if d.mem != nil && !d.isolated {
		members = d.mem.Members()
	}
	s := d.sightLocked(members)
	transitions := d.updateRegionsLocked(s, now)
	d.keepSuspicionsLocked(s, now)
	listeners := d.listeners
	d.mu.Unlock()
	for _, m := range s.suspected {
		d.log.Warn("gossip member suspect: a probe of it failed", "member", m.Name,
			"probes_sent_5m", m.Probes.Sent, "probes_lost_5m", m.Probes.Lost, "probes_failed_5m", m.Probes.Failed)
	}
	for _, tr := range transitions {
		d.log.Warn("region health changed", "region", tr.Region, "from", tr.From.String(), "to", tr.To.String(), "cause", tr.Cause)
		for _, f := range listeners {
			f(tr)
		}
	}
}

// keepSuspicionsLocked remembers when each member now suspect was first
// seen suspect, and keeps that time for a member confirmed failed since;
// a member alive again, gone or left is forgotten.
func (d *GossipDirectory) keepSuspicionsLocked(s sighting, now time.Time) {
	was := d.suspect
	d.suspect = make(map[string]time.Time, len(was))
	for _, ms := range s.seen {
		for _, m := range ms {
			since, seen := was[m.Name]
			switch {
			case m.Status == "suspect" && seen:
				d.suspect[m.Name] = since
			case m.Status == "suspect":
				d.suspect[m.Name] = now
			case m.Status == string(gossip.StatusFailed) && seen:
				d.suspect[m.Name] = since
			}
		}
	}
}

// maxBackdate bounds how far before it is seen failed a region's silence
// is counted. A member's first suspicion may belong to an earlier episode
// that was refuted (the probe log keeps it suspect for the suspicion
// window): under a one-way cut, counting from there failed the region at
// once, with no time left for its refutation to arrive through a third
// member. A second still takes a second off the detection of a region
// really lost, and leaves most of failAfter for a refutation.
const maxBackdate = time.Second

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// unreachableSince is when a region none of whose members is reachable
// lost the last of them, when every one of them was confirmed failed
// after it had been suspect: each was unreachable from its first
// suspicion (memberlist's direct and indirect probes failed from then on),
// though it counted as reachable until confirmed. Zero when not known.
func (d *GossipDirectory) unreachableSince(members []RegionMember) time.Time {
	var latest time.Time
	for _, m := range members {
		if m.Status == string(gossip.StatusLeft) {
			continue
		}
		since, ok := d.suspect[m.Name]
		if !ok || m.Status != string(gossip.StatusFailed) {
			return time.Time{}
		}
		if since.After(latest) {
			latest = since
		}
	}
	return latest
}

// sighting is what one look at the gossip pool saw of the regions.
type sighting struct {
	counts    map[string]*memberCount   // by region; a region seen only with members that left counts none
	addrs     map[string]string         // by region: an alive member's API address, its leader's when alive
	seen      map[string][]RegionMember // by region
	suspected []RegionMember            // members suspect since the last look
}

// memberCount counts a region's members that have not left, and those of
// them that are reachable.
type memberCount struct{ reachable, total int }

// sightLocked sorts the gossip members by region, and remembers the
// gossip addresses of the other regions' alive members, to rejoin.
func (d *GossipDirectory) sightLocked(members []gossip.Member) sighting {
	s := sighting{counts: map[string]*memberCount{}, addrs: map[string]string{}, seen: map[string][]RegionMember{}}
	for _, m := range members {
		if m.Region == "" {
			continue
		}
		rm := d.regionMember(m)
		s.seen[m.Region] = append(s.seen[m.Region], rm)
		if _, was := d.suspect[m.Name]; rm.Status == "suspect" && !was {
			s.suspected = append(s.suspected, rm)
		}
		s.count(m)
		if m.Status == gossip.StatusAlive && m.Addr != "" && m.Region != d.cfg.Region {
			d.remember(m.Addr)
		}
	}
	return s
}

// count counts a member of a region.
func (s *sighting) count(m gossip.Member) {
	c := s.counts[m.Region]
	if c == nil {
		c = &memberCount{}
		s.counts[m.Region] = c
	}
	if m.Status == gossip.StatusLeft {
		return
	}
	c.total++
	if m.Status != gossip.StatusAlive {
		return
	}
	c.reachable++
	if s.addrs[m.Region] == "" || m.Leader {
		s.addrs[m.Region] = m.APIAddr
	}
}

// updateRegionsLocked refreshes every region seen now or before, in name
// order, and returns the health changes of the other regions. A region
// known but not seen now counts no member.
func (d *GossipDirectory) updateRegionsLocked(s sighting, now time.Time) []policy.Transition {
	for name := range d.known {
		if _, ok := s.counts[name]; !ok {
			s.counts[name] = &memberCount{}
		}
	}
	var transitions []policy.Transition
	for _, name := range sortedKeys(s.counts) {
		r := d.known[name]
		r.Members = s.seen[name]
		if name == d.cfg.Region {
			r.LastSeen = now
			d.known[name] = r
			continue
		}
		c := s.counts[name]
		if c.reachable == 0 {
			if since := d.unreachableSince(s.seen[name]); !since.IsZero() {
				d.tracker.Unreachable(name, later(since, now.Add(-maxBackdate)))
			}
		}
		transitions = append(transitions, d.tracker.Observe(name, c.reachable, c.total, now)...)
		r.Name = name
		if c.reachable > 0 {
			r.LastSeen = now
		}
		if a := s.addrs[name]; a != "" {
			r.Addr = a
		}
		h, _ := d.tracker.Health(name)
		r.Health = h.String()
		d.known[name] = r
	}
	return transitions
}

// regionMember is a gossip member as the region list shows it, with
// this member's probes of it. Called with d.mu held.
func (d *GossipDirectory) regionMember(m gossip.Member) RegionMember {
	rm := RegionMember{Name: m.Name, Addr: m.Addr, Role: m.Role, Leader: m.Leader, Status: string(m.Status)}
	if m.Suspect {
		rm.Status = "suspect"
	}
	if d.mem != nil && m.Name != d.mem.Name() {
		rm.Probes = d.mem.Probes(m.Name, gossip.ProbeWindow)
		rm.RecentProbes = d.mem.Probes(m.Name, gossip.RecentProbeWindow)
		rm.Probed = true
	}
	return rm
}

func (d *GossipDirectory) remember(addr string) {
	for _, p := range d.peers {
		if p == addr {
			return
		}
	}
	d.peers = append(d.peers, addr)
}

// Isolate fences the local shard and drops out of gossip without leaving,
// so the other regions see this one fail.
func (d *GossipDirectory) Isolate(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.isolated {
		return nil
	}
	d.isolated = true
	d.fence(true)
	if d.mem != nil {
		err := d.mem.Close()
		d.mem = nil
		if err != nil {
			return err
		}
	}
	d.log.Warn("region isolated from the federation (drill)")
	return nil
}

// Heal rejoins gossip; the failover shell unfences the shard once it has
// checked with the federation.
func (d *GossipDirectory) Heal(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.isolated {
		return nil
	}
	cfg := d.cfg
	cfg.Join = append([]string(nil), d.peers...)
	mem, err := gossip.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("rejoin gossip: %w", err)
	}
	d.mem, d.isolated = mem, false
	d.log.Info("region rejoined the federation")
	return nil
}

// SetLeader publishes whether this member leads its region's shard; peers
// route to the leader's API address.
func (d *GossipDirectory) SetLeader(ctx context.Context, leader bool) {
	d.mu.Lock()
	mem := d.mem
	d.mu.Unlock()
	if mem == nil {
		return
	}
	if err := mem.SetLeader(ctx, leader); err != nil {
		d.log.Warn("publishing leadership", "err", err)
	}
}
