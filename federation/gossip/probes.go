package gossip

import (
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// ProbeWindow is how far back Probes can count.
const ProbeWindow = 5 * time.Minute

// RecentProbeWindow is the window of the probe figures the region list
// shows: short enough that a link turning lossy shows within a minute.
const RecentProbeWindow = time.Minute

// maxProbeMarks bounds what is kept per member and kind within the window.
const maxProbeMarks = 4096

// Probes is what this member saw of its own probes of another member over
// a window (Membership.Probes).
type Probes struct {
	// Sent: direct UDP probes whose outcome is known: acked in time
	// (memberlist's ping delegate) or Lost. A probe still waiting, or one
	// whose packet could not be sent at all, is not counted.
	Sent int
	// Lost: direct UDP probes that got no ack within the probe timeout.
	// A few on a lossy link are normal: indirect probes and the TCP
	// fallback cover them.
	Lost int
	// Failed: probes that got no ack by any way (direct, indirect, TCP),
	// each of which made this member suspect the other.
	Failed int
}

// probeLog counts the outcomes of this member's probes, per member probed.
// An acked probe is reported by memberlist's ping delegate (pingDelegate);
// a lost or failed one only by memberlist's log lines (memberlist has no
// hook for a probe that failed, and serf keeps the suspect phase to
// itself):
//
//	"memberlist: Failed UDP ping: NAME (timeout reached)"      → Lost
//	"memberlist: Suspect NAME has failed, no acks received"    → Failed
//
// The texts have been stable across memberlist releases; a test
// (TestProbesCountedFromMemberlist) breaks if they change.
type probeLog struct {
	now func() time.Time

	mu     sync.Mutex
	acked  map[string][]time.Time
	lost   map[string][]time.Time
	failed map[string][]time.Time
}

func newProbeLog(now func() time.Time) *probeLog {
	return &probeLog{now: now, acked: map[string][]time.Time{}, lost: map[string][]time.Time{}, failed: map[string][]time.Time{}}
}

// observe reads one log line (its level prefix removed).
func (p *probeLog) observe(text string) {
	if name, ok := between(text, "memberlist: Failed UDP ping: ", " (timeout reached)"); ok {
		p.mark(p.lost, name)
	} else if name, ok := between(text, "memberlist: Suspect ", " has failed, no acks received"); ok {
		p.mark(p.failed, name)
	}
}

func between(s, prefix, suffix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, suffix)
}

func (p *probeLog) mark(m map[string][]time.Time, name string) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	marks := prune(append(m[name], now), now, ProbeWindow)
	if len(marks) > maxProbeMarks {
		marks = marks[len(marks)-maxProbeMarks:]
	}
	m[name] = marks
}

// prune drops the marks older than window; marks are in time order.
func prune(marks []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(marks) && now.Sub(marks[i]) > window {
		i++
	}
	return marks[i:]
}

// suspect says whether a probe of name failed within the last d.
func (p *probeLog) suspect(name string, now time.Time, d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	marks := p.failed[name]
	return len(marks) > 0 && now.Sub(marks[len(marks)-1]) < d
}

// probes counts the probes of name over the last window (at most
// ProbeWindow).
func (p *probeLog) probes(name string, window time.Duration) Probes {
	now := p.now()
	window = min(window, ProbeWindow)
	p.mu.Lock()
	defer p.mu.Unlock()
	count := func(m map[string][]time.Time) int {
		m[name] = prune(m[name], now, ProbeWindow)
		if len(m[name]) == 0 {
			delete(m, name)
			return 0
		}
		return len(prune(m[name], now, window))
	}
	acked, lost := count(p.acked), count(p.lost)
	return Probes{Sent: acked + lost, Lost: lost, Failed: count(p.failed)}
}

// pingDelegate tells the probe log of every direct probe acked in time.
// Setting it means serf keeps no network coordinates (it would install
// its own delegate); nothing here uses them.
type pingDelegate struct{ log *probeLog }

var _ memberlist.PingDelegate = pingDelegate{}

func (pingDelegate) AckPayload() []byte { return nil }

func (d pingDelegate) NotifyPingComplete(other *memberlist.Node, _ time.Duration, _ []byte) {
	d.log.mark(d.log.acked, other.Name)
}
