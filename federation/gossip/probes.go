package gossip

import (
	"strings"
	"sync"
	"time"
)

// ProbeWindow is how far back Probes counts.
const ProbeWindow = 5 * time.Minute

// maxProbeMarks bounds what is kept per member within the window.
const maxProbeMarks = 4096

// Probes is what this member saw of its own probes of another member over
// the last ProbeWindow.
type Probes struct {
	// Lost: direct UDP probes that got no ack within the probe timeout.
	// A few on a lossy link are normal: indirect probes and the TCP
	// fallback cover them.
	Lost int
	// Failed: probes that got no ack by any way (direct, indirect, TCP),
	// each of which made this member suspect the other.
	Failed int
}

// probeLog counts failed probes per member from memberlist's own log
// lines, its only report of them (memberlist has no hook for a probe that
// failed, and serf keeps the suspect phase to itself):
//
//	"memberlist: Failed UDP ping: NAME (timeout reached)"      → Lost
//	"memberlist: Suspect NAME has failed, no acks received"    → Failed
//
// The texts have been stable across memberlist releases; a test
// (TestProbesCountedFromMemberlist) breaks if they change.
type probeLog struct {
	now func() time.Time

	mu     sync.Mutex
	lost   map[string][]time.Time
	failed map[string][]time.Time
}

func newProbeLog(now func() time.Time) *probeLog {
	return &probeLog{now: now, lost: map[string][]time.Time{}, failed: map[string][]time.Time{}}
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
	marks := prune(append(m[name], now), now)
	if len(marks) > maxProbeMarks {
		marks = marks[len(marks)-maxProbeMarks:]
	}
	m[name] = marks
}

// prune drops the marks older than the window; marks are in time order.
func prune(marks []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(marks) && now.Sub(marks[i]) > ProbeWindow {
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

func (p *probeLog) probes(name string) Probes {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lost[name] = prune(p.lost[name], now)
	p.failed[name] = prune(p.failed[name], now)
	return Probes{Lost: len(p.lost[name]), Failed: len(p.failed[name])}
}
