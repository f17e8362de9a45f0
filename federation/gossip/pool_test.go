package gossip

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"
)

// Test pools run several members in one process on 127.0.0.1..4 with
// port 0 and fast timeouts (the local profile with shorter probes), so a
// failure is detected in about a second.

func testLogger() *slog.Logger {
	if os.Getenv("GOSSIP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// fastConfig is member i (1-based) of region on 127.0.0.i.
func fastConfig(i int, region string) Config {
	ip := (i-1)%4 + 1
	return Config{
		NodeName:                fmt.Sprintf("node-%d", i),
		Region:                  region,
		Role:                    "server",
		APIAddr:                 fmt.Sprintf("127.0.0.%d:%d", ip, 9000+i),
		BindAddr:                fmt.Sprintf("127.0.0.%d:0", ip),
		Profile:                 ProfileLocal,
		ProbeInterval:           200 * time.Millisecond,
		ProbeTimeout:            100 * time.Millisecond,
		SuspicionMult:           3,
		SuspicionMaxTimeoutMult: 2,
		GossipInterval:          50 * time.Millisecond,
		Logger:                  testLogger(),
	}
}

// startMember starts cfg and closes it when the test ends.
func startMember(t *testing.T, cfg Config) *Membership {
	t.Helper()
	m, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("start %s: %v", cfg.NodeName, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// startPool starts one member per region name, each joining all the ones
// before it (so none depends on gossip alone to be known), and waits until
// every member sees all of them alive.
func startPool(t *testing.T, regions []string, modify func(i int, c *Config)) []*Membership {
	t.Helper()
	var members []*Membership
	for i, region := range regions {
		cfg := fastConfig(i+1, region)
		for _, earlier := range members {
			cfg.Join = append(cfg.Join, earlier.Addr())
		}
		if modify != nil {
			modify(i+1, &cfg)
		}
		members = append(members, startMember(t, cfg))
	}
	for _, m := range members {
		waitAliveCount(t, m, len(regions))
	}
	return members
}

func waitAliveCount(t *testing.T, m *Membership, want int) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("%s sees %d alive", m.Name(), want), func() bool {
		alive := 0
		for _, mem := range m.Members() {
			if mem.Status == StatusAlive {
				alive++
			}
		}
		return alive == want
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", timeout, what)
		}
		<-tick.C
	}
}

// waitEvent reads events until match accepts one or timeout passes.
func waitEvent(t *testing.T, events <-chan Event, timeout time.Duration, what string, match func(Event) bool) Event {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("events closed while waiting for %s", what)
			}
			if match(e) {
				return e
			}
		case <-timer.C:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

func memberNamed(members []Member, name string) (Member, bool) {
	for _, m := range members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
