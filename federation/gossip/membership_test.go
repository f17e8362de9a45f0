package gossip

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestJoinPublishesTagsToEveryMember(t *testing.T) {
	regions := []string{"east", "east", "west"}
	pool := startPool(t, regions, nil)
	for _, viewer := range pool {
		members := viewer.Members()
		if len(members) != len(regions) {
			t.Fatalf("%s sees %d members, want %d", viewer.Name(), len(members), len(regions))
		}
		for i, region := range regions {
			name := fmt.Sprintf("node-%d", i+1)
			m, ok := memberNamed(members, name)
			if !ok {
				t.Fatalf("%s does not see %s", viewer.Name(), name)
			}
			want := fastConfig(i+1, region)
			if m.Region != region || m.Role != "server" || m.APIAddr != want.APIAddr || m.Leader || m.Status != StatusAlive {
				t.Errorf("%s sees %s as %+v", viewer.Name(), name, m)
			}
			if m.Addr != pool[i].Addr() {
				t.Errorf("%s sees %s at %s, it advertises %s", viewer.Name(), name, m.Addr, pool[i].Addr())
			}
		}
	}
	byRegion := pool[2].Regions()
	if names := memberNames(byRegion["east"]); names != "node-1,node-2" {
		t.Errorf("east = %s", names)
	}
	if names := memberNames(byRegion["west"]); names != "node-3" {
		t.Errorf("west = %s", names)
	}
	if len(byRegion) != 2 {
		t.Errorf("regions = %v", byRegion)
	}
}

func memberNames(ms []Member) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// A tag update is broadcast at once; a broadcast lost on a loaded machine
// (a member briefly suspected, a packet dropped) is repaired by the next
// push-pull exchange, every 15 s in the local profile: the waits allow for
// one.
const tagUpdateWithin = 20 * time.Second

func TestLeaderFlagUpdateReachesOthers(t *testing.T) {
	pool := startPool(t, []string{"east", "east", "west"}, nil)
	watcher := pool[2]
	if err := pool[1].SetLeader(ctxTimeout(t, 10*time.Second), true); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, watcher.Events(), tagUpdateWithin, "node-2 updated to leader", func(e Event) bool {
		u, ok := e.(MemberUpdated)
		return ok && u.Member.Name == "node-2" && u.Member.Leader
	})
	if u := ev.(MemberUpdated); u.Member.Region != "east" || u.Member.APIAddr == "" {
		t.Errorf("update lost the other tags: %+v", u.Member)
	}
	if m, _ := memberNamed(watcher.Members(), "node-2"); !m.Leader {
		t.Errorf("Members does not show node-2 as leader: %+v", m)
	}
	if !pool[1].Local().Leader {
		t.Error("node-2 does not see its own leader flag")
	}
	if err := pool[1].SetLeader(ctxTimeout(t, 10*time.Second), false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tagUpdateWithin, "node-2 no longer leader at node-3", func() bool {
		m, _ := memberNamed(watcher.Members(), "node-2")
		return !m.Leader
	})
}

func TestClosedMemberIsDeclaredFailedWithinEstimate(t *testing.T) {
	pool := startPool(t, []string{"east", "west", "north"}, nil)
	estimate, err := DetectionEstimate(fastConfig(1, "east"), len(pool))
	if err != nil {
		t.Fatal(err)
	}
	detection := measureDetection(t, pool, estimate)
	t.Logf("fast local config: detection %v (estimate %v)", detection, estimate)
	if m, _ := memberNamed(pool[0].Members(), "node-3"); m.Status != StatusFailed {
		t.Errorf("Members shows node-3 as %s, want failed", m.Status)
	}
}

// measureDetection closes the last member of pool and returns how long
// the first member took to report it failed; it fails the test beyond
// the estimate plus slack for a loaded machine.
func measureDetection(t *testing.T, pool []*Membership, estimate time.Duration) time.Duration {
	t.Helper()
	victim := pool[len(pool)-1]
	name := victim.Name()
	closedAt := time.Now()
	if err := victim.Close(); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, pool[0].Events(), estimate+estimate/2+2*time.Second, name+" failed", func(e Event) bool {
		d, ok := e.(MemberDown)
		return ok && d.Member.Name == name
	})
	return ev.(MemberDown).Seen.Sub(closedAt)
}

// TestDetectionTimeOfProfiles measures failure detection with the plain
// local and wan presets (no tunables). The wan run takes about 40s, so it
// runs only when GOSSIP_PROFILE_DETECTION is set.
func TestDetectionTimeOfProfiles(t *testing.T) {
	if os.Getenv("GOSSIP_PROFILE_DETECTION") == "" {
		t.Skip("set GOSSIP_PROFILE_DETECTION=1 to measure the local and wan presets")
	}
	for _, profile := range []Profile{ProfileLocal, ProfileWAN} {
		t.Run(string(profile), func(t *testing.T) {
			plain := func(_ int, c *Config) {
				c.Profile = profile
				c.ProbeInterval, c.ProbeTimeout, c.GossipInterval = 0, 0, 0
				c.SuspicionMult, c.SuspicionMaxTimeoutMult = 0, 0
			}
			pool := startPool(t, []string{"east", "west", "north"}, plain)
			cfg := fastConfig(1, "east")
			plain(1, &cfg)
			estimate, err := DetectionEstimate(cfg, len(pool))
			if err != nil {
				t.Fatal(err)
			}
			detection := measureDetection(t, pool, estimate)
			t.Logf("profile %s: detection %v (estimate %v)", profile, detection, estimate)
		})
	}
}

func TestLeaveIsSeenAsLeft(t *testing.T) {
	pool := startPool(t, []string{"east", "west", "north"}, nil)
	leaver := pool[1]
	if err := leaver.Leave(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, pool[0].Events(), 10*time.Second, "node-2 left", func(e Event) bool {
		l, ok := e.(MemberLeft)
		return ok && l.Member.Name == "node-2"
	})
	waitFor(t, 10*time.Second, "node-3 sees node-2 left", func() bool {
		m, _ := memberNamed(pool[2].Members(), "node-2")
		return m.Status == StatusLeft
	})
	if err := leaver.Close(); err != nil {
		t.Fatal(err)
	}
	if err := leaver.SetState([]byte("x")); err != nil {
		t.Fatalf("SetState is local and should not fail after close: %v", err)
	}
	if _, err := leaver.CollectStates(t.Context(), time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("CollectStates after Close = %v, want ErrClosed", err)
	}
	if err := leaver.SetLeader(t.Context(), true); !errors.Is(err, ErrClosed) {
		t.Errorf("SetLeader after Close = %v, want ErrClosed", err)
	}
	// Events ends closed: this loop terminates only if Close closed it.
	for range leaver.Events() {
	}
}

func TestBroadcastDeliversUserEventWithLamportTime(t *testing.T) {
	pool := startPool(t, []string{"east", "west"}, nil)
	if err := pool[0].Broadcast("fence", []byte("west")); err != nil {
		t.Fatal(err)
	}
	if err := pool[0].Broadcast("fence", []byte("east")); err != nil {
		t.Fatal(err)
	}
	var got []UserEvent
	for len(got) < 2 {
		ev := waitEvent(t, pool[1].Events(), 10*time.Second, "user events", func(e Event) bool {
			_, ok := e.(UserEvent)
			return ok
		})
		got = append(got, ev.(UserEvent))
	}
	sort.Slice(got, func(i, j int) bool { return got[i].LTime < got[j].LTime })
	if got[0].LTime >= got[1].LTime || string(got[0].Payload) != "west" || string(got[1].Payload) != "east" {
		t.Errorf("user events out of Lamport order: %+v", got)
	}
	if err := pool[0].Broadcast("big", make([]byte, MaxUserEventBytes)); !errors.Is(err, ErrPayloadTooLarge) {
		t.Errorf("oversized broadcast = %v, want ErrPayloadTooLarge", err)
	}
}

func TestStartFailsOnTakenAddress(t *testing.T) {
	first := startMember(t, fastConfig(1, "east"))
	cfg := fastConfig(2, "east")
	cfg.BindAddr = first.Addr()
	if _, err := Start(t.Context(), cfg); !errors.Is(err, ErrStart) {
		t.Fatalf("Start on %s = %v, want ErrStart", cfg.BindAddr, err)
	}
}

func TestStartFailsWhenNoPeerAnswers(t *testing.T) {
	// A TCP port nobody gossips on: take one and close it.
	ln, err := net.Listen("tcp", "127.0.0.4:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	cfg := fastConfig(1, "east")
	cfg.Join = []string{dead}
	if _, err := Start(t.Context(), cfg); !errors.Is(err, ErrJoin) {
		t.Fatalf("Start joining %s = %v, want ErrJoin", dead, err)
	}
}

func TestSetStateRejectsOversizedBlob(t *testing.T) {
	m := startMember(t, fastConfig(1, "east"))
	if err := m.SetState(bytes.Repeat([]byte("x"), MaxStateBytes+1)); !errors.Is(err, ErrStateTooLarge) {
		t.Fatalf("SetState = %v, want ErrStateTooLarge", err)
	}
}
