package faultnet

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// RetransmitTimeout is how late a chunk of a stream arrives when the link
// "loses" it: Linux's minimum TCP retransmission timeout. The link's
// latency comes on top.
const RetransmitTimeout = 200 * time.Millisecond

// Link is the setting of one direction between two regions.
type Link struct {
	// Loss is the probability (0 to 1) that a packet is lost.
	Loss float64
	// Latency is the one-way delay; Jitter spreads it uniformly over
	// [Latency-Jitter, Latency+Jitter] (never below zero).
	Latency, Jitter time.Duration
	// Reorder is the probability (0 to 1) that a packet is held back one
	// more Latency+Jitter, so that packets sent after it overtake it.
	Reorder float64
	// Cut: nothing passes.
	Cut bool
}

// Validate reports a setting out of range, naming the field.
func (l Link) Validate() error {
	switch {
	case l.Loss < 0 || l.Loss > 1:
		return fmt.Errorf("faultnet: Loss %v is not within 0..1", l.Loss)
	case l.Reorder < 0 || l.Reorder > 1:
		return fmt.Errorf("faultnet: Reorder %v is not within 0..1", l.Reorder)
	case l.Latency < 0:
		return fmt.Errorf("faultnet: Latency %v is negative", l.Latency)
	case l.Jitter < 0:
		return fmt.Errorf("faultnet: Jitter %v is negative", l.Jitter)
	}
	return nil
}

// Counts is what went over one direction of a link.
type Counts struct {
	// Packets offered, Dropped of them (lost or cut), their bytes.
	Packets, Dropped, Bytes uint64
	// Dials opened a stream; DialsFailed found the link cut.
	Dials, DialsFailed uint64
	// SendErrors: delayed packets the inner transport failed to send.
	SendErrors uint64
}

type pair struct{ from, to string }

// Network is the set of links between regions. Its methods are safe for
// concurrent use; the setters panic on an invalid Link (a test's own
// mistake; see Link.Validate).
type Network struct {
	mu      sync.Mutex
	rng     *rand.Rand
	base    Link
	links   map[pair]Link
	regions map[string]string // address → region
	counts  map[pair]*Counts
	// changed is closed and replaced whenever a link changes, waking
	// streams that wait for a cut to heal.
	changed chan struct{}
}

// New returns a network whose links are clean until set. seed makes the
// losses and delays of a run repeatable for the same order of sends.
func New(seed uint64) *Network {
	return &Network{
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		links:   map[pair]Link{},
		regions: map[string]string{},
		counts:  map[pair]*Counts{},
		changed: make(chan struct{}),
	}
}

// Register says that addr (host:port, as the transports and dialers are
// given it) belongs to region.
func (n *Network) Register(addr, region string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.regions[addr] = region
}

// RegionOf is the region an address was registered for, or "".
func (n *Network) RegionOf(addr string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.regions[addr]
}

// SetDefault sets every link that has no setting of its own.
func (n *Network) SetDefault(l Link) {
	mustValid(l)
	n.update(func() { n.base = l })
}

// Set sets the direction from → to.
func (n *Network) Set(from, to string, l Link) {
	mustValid(l)
	n.update(func() { n.links[pair{from, to}] = l })
}

// SetPair sets both directions between a and b.
func (n *Network) SetPair(a, b string, l Link) {
	mustValid(l)
	n.update(func() {
		n.links[pair{a, b}] = l
		n.links[pair{b, a}] = l
	})
}

// Reset drops every link's own setting: all follow the default again.
func (n *Network) Reset() {
	n.update(func() { clear(n.links) })
}

// Cut cuts the direction from → to (cut false heals it), keeping its
// other settings.
func (n *Network) Cut(from, to string, cut bool) {
	n.update(func() { n.cutLocked(from, to, cut) })
}

// Isolate cuts (or heals) every direction to and from region, towards
// every other region registered so far.
func (n *Network) Isolate(region string, cut bool) {
	n.update(func() {
		for _, other := range n.regionsLocked() {
			if other != region {
				n.cutLocked(region, other, cut)
				n.cutLocked(other, region, cut)
			}
		}
	})
}

// Link is the setting in force for from → to.
func (n *Network) Link(from, to string) Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.linkLocked(from, to)
}

// Counts is what went over from → to so far.
func (n *Network) Counts(from, to string) Counts {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.counts[pair{from, to}]; c != nil {
		return *c
	}
	return Counts{}
}

func (n *Network) cutLocked(from, to string, cut bool) {
	l := n.linkLocked(from, to)
	l.Cut = cut
	n.links[pair{from, to}] = l
}

func (n *Network) regionsLocked() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range n.regions {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func (n *Network) linkLocked(from, to string) Link {
	if l, ok := n.links[pair{from, to}]; ok {
		return l
	}
	return n.base
}

func (n *Network) countsLocked(from, to string) *Counts {
	c := n.counts[pair{from, to}]
	if c == nil {
		c = &Counts{}
		n.counts[pair{from, to}] = c
	}
	return c
}

func (n *Network) update(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f()
	close(n.changed)
	n.changed = make(chan struct{})
}

func mustValid(l Link) {
	if err := l.Validate(); err != nil {
		panic(err)
	}
}

// faulty says whether traffic between two addresses' regions goes through
// the faults: both registered, in different regions.
func faulty(from, to string) bool { return from != "" && to != "" && from != to }

// packet decides the fate of one packet of size bytes from → to: dropped,
// or delivered after delay.
func (n *Network) packet(from, to string, size int) (delay time.Duration, deliver bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.linkLocked(from, to)
	c := n.countsLocked(from, to)
	c.Packets++
	c.Bytes += uint64(size)
	if l.Cut || n.rng.Float64() < l.Loss {
		c.Dropped++
		return 0, false
	}
	delay = n.delayLocked(l)
	if l.Reorder > 0 && n.rng.Float64() < l.Reorder {
		delay += l.Latency + l.Jitter
	}
	return delay, true
}

// chunk is the delay of one chunk of a stream from → to, and whether the
// link is cut now (the chunk then waits for it to heal).
func (n *Network) chunk(from, to string) (delay time.Duration, cut bool, changed <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.linkLocked(from, to)
	if l.Cut {
		return 0, true, n.changed
	}
	delay = n.delayLocked(l)
	if l.Loss > 0 && n.rng.Float64() < l.Loss {
		delay += RetransmitTimeout
	}
	return delay, false, n.changed
}

// state is whether from → to is cut now, and a channel closed at the next
// change of any link.
func (n *Network) state(from, to string) (cut bool, changed <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.linkLocked(from, to).Cut, n.changed
}

func (n *Network) delayLocked(l Link) time.Duration {
	d := l.Latency
	if l.Jitter > 0 {
		d += time.Duration(n.rng.Int64N(int64(2*l.Jitter)+1)) - l.Jitter
	}
	return max(d, 0)
}

func (n *Network) count(from, to string, f func(*Counts)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(n.countsLocked(from, to))
}
