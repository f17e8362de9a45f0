package main

import (
	"strings"
	"sync"
	"sync/atomic"

	metrics "github.com/armon/go-metrics"
)

// gossipBytes counts the bytes memberlist sends, UDP and TCP, from the
// counters it reports to go-metrics ("memberlist.udp.sent",
// "memberlist.tcp.sent": the size of every packet and stream write,
// encryption and framing included). Every byte sent is received by
// one member, so the sum over members is also what they receive.
type gossipBytes struct {
	metrics.BlackholeSink
	udp, tcp atomic.Uint64
}

var (
	trafficOnce sync.Once
	traffic     = &gossipBytes{}
)

// countGossip installs the counter as go-metrics' global sink (once per
// process; memberlist reports to the global sink).
func countGossip() *gossipBytes {
	trafficOnce.Do(func() {
		cfg := metrics.DefaultConfig("")
		cfg.EnableHostname, cfg.EnableRuntimeMetrics, cfg.EnableServiceLabel = false, false, false
		_, _ = metrics.NewGlobal(cfg, traffic)
	})
	return traffic
}

func (g *gossipBytes) IncrCounter(key []string, val float32) {
	g.IncrCounterWithLabels(key, val, nil)
}

func (g *gossipBytes) IncrCounterWithLabels(key []string, val float32, _ []metrics.Label) {
	switch strings.Join(key, ".") {
	case "memberlist.udp.sent":
		g.udp.Add(uint64(val))
	case "memberlist.tcp.sent":
		g.tcp.Add(uint64(val))
	}
}

// sent is the bytes sent so far.
func (g *gossipBytes) sent() (udp, tcp uint64) { return g.udp.Load(), g.tcp.Load() }
