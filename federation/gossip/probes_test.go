package gossip

import (
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/peloton-federated/peloton/internal/faultnet"
)

// TestProbesCountedFromMemberlist cuts a member off through a faulty
// network: another member sees it suspect (serf still says alive) and
// counts its lost and failed probes from memberlist's log lines; once the
// link heals it is no longer suspect and the counts stay. Acked probes
// are counted too (memberlist's ping delegate): on a clean link every
// probe sent is acked.
func TestProbesCountedFromMemberlist(t *testing.T) {
	n := faultnet.New(1)
	pool := startPool(t, []string{"east", "west", "north"}, func(i int, c *Config) {
		region := c.Region
		c.SuspicionMult = 10 // a suspicion long enough to be seen
		c.Transport = func(inner memberlist.NodeAwareTransport, addr string) memberlist.NodeAwareTransport {
			return n.Transport(region, addr, inner)
		}
	})
	east, north := pool[0], pool[2]
	waitFor(t, 10*time.Second, "east's probes of north acked", func() bool {
		return east.Probes(north.Name(), ProbeWindow).Sent >= 2
	})
	if p := east.Probes(north.Name(), ProbeWindow); p.Lost != 0 || p.Failed != 0 {
		t.Fatalf("probes of a healthy member on a clean link: %+v", p)
	}
	if score := east.HealthScore(); score != 0 {
		t.Fatalf("health score %d on a clean network", score)
	}
	n.Isolate("north", true)
	waitFor(t, 10*time.Second, "east suspects north", func() bool {
		m, _ := memberNamed(east.Members(), north.Name())
		return m.Suspect && m.Status == StatusAlive
	})
	waitFor(t, 10*time.Second, "a lost and a failed probe counted", func() bool {
		p := east.Probes(north.Name(), ProbeWindow)
		return p.Lost > 0 && p.Failed > 0
	})
	n.Isolate("north", false)
	// A probe under way when the link healed may still fail, and a failed
	// probe keeps north suspect for east.suspicion after it; if the
	// isolation outlasted memberlist's suspicion timeout (a loaded run,
	// under -race), north is failed and must be joined again first.
	waitFor(t, east.suspicion+20*time.Second, "north no longer suspect", func() bool {
		m, _ := memberNamed(east.Members(), north.Name())
		return !m.Suspect && m.Status == StatusAlive
	})
	if p := east.Probes(north.Name(), ProbeWindow); p.Lost == 0 || p.Sent < p.Lost+2 {
		t.Fatalf("counts forgotten at once, or acks not counted: %+v", p)
	}
	if p := east.Probes(pool[1].Name(), ProbeWindow); p.Failed != 0 || p.Lost != 0 || p.Sent == 0 {
		t.Fatalf("west's probes on a clean link: %+v", p)
	}
}

func TestProbeLogWindow(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newProbeLog(func() time.Time { return now })
	acked := pingDelegate{log: p}
	node2 := &memberlist.Node{Name: "node-2"}
	acked.NotifyPingComplete(node2, time.Millisecond, nil)
	p.observe("memberlist: Failed UDP ping: node-2 (timeout reached)")
	p.observe("memberlist: Suspect node-2 has failed, no acks received")
	p.observe("memberlist: Failed UDP ping: node-3 (timeout reached)")
	p.observe("memberlist: Marking node-2 as failed, suspect timeout reached (0 peer confirmations)")
	if got := p.probes("node-2", ProbeWindow); got != (Probes{Sent: 2, Lost: 1, Failed: 1}) {
		t.Fatalf("node-2: %+v", got)
	}
	now = now.Add(ProbeWindow / 2)
	p.observe("memberlist: Failed UDP ping: node-2 (timeout reached)")
	acked.NotifyPingComplete(node2, time.Millisecond, nil)
	acked.NotifyPingComplete(node2, time.Millisecond, nil)
	if got := p.probes("node-2", RecentProbeWindow); got != (Probes{Sent: 3, Lost: 1}) {
		t.Fatalf("node-2 over the recent window: %+v", got)
	}
	now = now.Add(ProbeWindow/2 + time.Second)
	if got := p.probes("node-2", ProbeWindow); got != (Probes{Sent: 3, Lost: 1}) {
		t.Fatalf("node-2 after the window: %+v", got)
	}
	if got := p.probes("node-2", RecentProbeWindow); got != (Probes{}) {
		t.Fatalf("node-2 after the recent window: %+v", got)
	}
	if got := p.probes("node-3", 2*ProbeWindow); got != (Probes{}) {
		t.Fatalf("node-3 after the window (a longer window counts no more than ProbeWindow): %+v", got)
	}
}
