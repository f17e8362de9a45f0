package gossip

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

func validConfig() Config {
	return Config{NodeName: "n1", Region: "us-east", Role: "server", APIAddr: "127.0.0.1:5000", BindAddr: "127.0.0.1:0"}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*Config)
		ok     bool
	}{
		{"valid", func(*Config) {}, true},
		{"no node name", func(c *Config) { c.NodeName = "" }, false},
		{"node name with space", func(c *Config) { c.NodeName = "a b" }, false},
		{"node name too long", func(c *Config) { c.NodeName = strings.Repeat("a", 129) }, false},
		{"node name at limit", func(c *Config) { c.NodeName = strings.Repeat("a", 128) }, true},
		{"no region", func(c *Config) { c.Region = "" }, false},
		{"region too long", func(c *Config) { c.Region = strings.Repeat("r", MaxRegionLen+1) }, false},
		{"bind without port", func(c *Config) { c.BindAddr = "127.0.0.1" }, false},
		{"bind without host", func(c *Config) { c.BindAddr = ":7946" }, false},
		{"bind bad port", func(c *Config) { c.BindAddr = "127.0.0.1:70000" }, false},
		{"bad advertise", func(c *Config) { c.AdvertiseAddr = "x" }, false},
		{"key 16", func(c *Config) { c.EncryptKey = make([]byte, 16) }, true},
		{"key 24", func(c *Config) { c.EncryptKey = make([]byte, 24) }, true},
		{"key 32", func(c *Config) { c.EncryptKey = make([]byte, 32) }, true},
		{"key 15", func(c *Config) { c.EncryptKey = make([]byte, 15) }, false},
		{"profile lan", func(c *Config) { c.Profile = ProfileLAN }, true},
		{"profile unknown", func(c *Config) { c.Profile = "moon" }, false},
		{"negative probe", func(c *Config) { c.ProbeInterval = -time.Second }, false},
		{"timeout above interval", func(c *Config) {
			c.Profile = ProfileLocal
			c.ProbeTimeout = 2 * time.Second
		}, false},
		{"tags too large", func(c *Config) { c.APIAddr = strings.Repeat("x", MaxTagBytes) + ":1" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.modify(&cfg)
			err := cfg.validate()
			if tc.ok && err != nil {
				t.Fatalf("validate: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("validate = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestMemberlistConfigAppliesTunablesOverProfile(t *testing.T) {
	cfg := validConfig()
	cfg.Profile = ProfileWAN
	cfg.BindAddr = "127.0.0.3:7000"
	cfg.AdvertiseAddr = "10.0.0.3:7001"
	ml, err := cfg.memberlistConfig()
	if err != nil {
		t.Fatal(err)
	}
	if ml.ProbeInterval != 5*time.Second || ml.SuspicionMult != 6 {
		t.Fatalf("wan preset not used: probe %v mult %d", ml.ProbeInterval, ml.SuspicionMult)
	}
	if ml.BindAddr != "127.0.0.3" || ml.BindPort != 7000 || ml.AdvertiseAddr != "10.0.0.3" || ml.AdvertisePort != 7001 {
		t.Fatalf("addresses: bind %s:%d advertise %s:%d", ml.BindAddr, ml.BindPort, ml.AdvertiseAddr, ml.AdvertisePort)
	}
	cfg.ProbeInterval, cfg.ProbeTimeout, cfg.SuspicionMult, cfg.GossipInterval = 300*time.Millisecond, 100*time.Millisecond, 2, 50*time.Millisecond
	ml, err = cfg.memberlistConfig()
	if err != nil {
		t.Fatal(err)
	}
	if ml.ProbeInterval != 300*time.Millisecond || ml.ProbeTimeout != 100*time.Millisecond ||
		ml.SuspicionMult != 2 || ml.GossipInterval != 50*time.Millisecond {
		t.Fatalf("tunables ignored: %v %v %d %v", ml.ProbeInterval, ml.ProbeTimeout, ml.SuspicionMult, ml.GossipInterval)
	}
}

func TestDetectionEstimate(t *testing.T) {
	local := validConfig()
	local.Profile = ProfileLocal // probe 1s, mult 3, max mult 6, gossip 100ms
	wan := validConfig()
	wan.Profile = ProfileWAN // probe 5s, mult 6, max mult 6, gossip 500ms
	cases := []struct {
		name string
		cfg  Config
		n    int
		want time.Duration
	}{
		// Two members: no peer can confirm, so the minimum timeout 3×1×1s.
		{"local 2", local, 2, 2*time.Second + 3*time.Second + 100*time.Millisecond},
		// Three members: one peer may confirm (k = mult-2 = 1), the timer
		// starts at max = 6 × 3s.
		{"local 3", local, 3, 2*time.Second + 18*time.Second + 100*time.Millisecond},
		// 100 members: scale log10(100) = 2.
		{"local 100", local, 100, 2*time.Second + 36*time.Second + 100*time.Millisecond},
		// Three members cannot give the 4 confirmations wan expects: min
		// timeout 6×1×5s.
		{"wan 3", wan, 3, 10*time.Second + 30*time.Second + 500*time.Millisecond},
	}
	for _, tc := range cases {
		got, err := DetectionEstimate(tc.cfg, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: estimate %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSplitLevel(t *testing.T) {
	cases := []struct {
		line  string
		level slog.Level
		text  string
	}{
		{"[DEBUG] memberlist: probe", slog.LevelDebug, "memberlist: probe"},
		{"[INFO] serf: EventMemberJoin: a", slog.LevelInfo, "serf: EventMemberJoin: a"},
		{"[WARN] serf: slow", slog.LevelWarn, "serf: slow"},
		{"[ERR] memberlist: boom", slog.LevelError, "memberlist: boom"},
		{"no prefix", slog.LevelInfo, "no prefix"},
		{"[unterminated", slog.LevelInfo, "[unterminated"},
	}
	for _, tc := range cases {
		level, text := splitLevel(tc.line)
		if level != tc.level || text != tc.text {
			t.Errorf("splitLevel(%q) = %v %q, want %v %q", tc.line, level, text, tc.level, tc.text)
		}
	}
}

func TestStateReplyRoundTrip(t *testing.T) {
	cases := []stateReply{
		{},
		{hasState: true, Region: "eu", LTime: 7, Blob: []byte(`{"cpu":4}`)},
		{hasState: true, Leader: true, Region: strings.Repeat("r", MaxRegionLen), LTime: 1<<64 - 1, Blob: bytes.Repeat([]byte{0xff}, MaxStateBytes)},
		{Leader: true, Region: "x", LTime: 3},
	}
	for _, want := range cases {
		got, err := decodeStateReply(encodeStateReply(want))
		if err != nil {
			t.Fatalf("decode(%+v): %v", want, err)
		}
		if got.hasState != want.hasState || got.Leader != want.Leader || got.LTime != want.LTime ||
			got.Region != want.Region || !bytes.Equal(got.Blob, want.Blob) {
			t.Fatalf("round trip: got %+v want %+v", got, want)
		}
	}
}

func TestStateWireRejectsGarbage(t *testing.T) {
	valid := encodeStateReply(stateReply{hasState: true, Region: "eu", LTime: 300, Blob: []byte("abc")})
	cases := map[string][]byte{
		"empty":             nil,
		"one byte":          {stateWireVersion},
		"wrong version":     append([]byte{9}, valid[1:]...),
		"unknown flag":      append([]byte{stateWireVersion, 0x80}, valid[2:]...),
		"truncated ltime":   {stateWireVersion, stateFlagHasState, 0x80},
		"region past end":   {stateWireVersion, stateFlagHasState, 1, 50, 'a'},
		"blob without flag": append(encodeStateReply(stateReply{Region: "eu"}), 'z'),
	}
	for name, buf := range cases {
		if _, err := decodeStateReply(buf); err == nil {
			t.Errorf("%s: decoded %x without error", name, buf)
		}
	}
	// Every prefix and random mutation must decode or fail, never panic.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		buf := append([]byte(nil), valid[:rng.IntN(len(valid)+1)]...)
		if len(buf) > 0 {
			buf[rng.IntN(len(buf))] = byte(rng.UintN(256))
		}
		_, _ = decodeStateReply(buf)
		_, _ = decodeStateRequest(buf)
	}
	if _, err := decodeStateRequest([]byte{stateWireVersion, 0x80}); err == nil {
		t.Error("truncated request decoded")
	}
	if got, err := decodeStateRequest(encodeStateRequest(12345)); err != nil || got != 12345 {
		t.Errorf("request round trip = %d, %v", got, err)
	}
}

// naivePick is the reference: sort each region's blobs by preference and
// take the first.
func naivePick(blobs []RegionBlob) map[string]RegionBlob {
	out := make(map[string]RegionBlob)
	for _, b := range blobs {
		best := b
		for _, o := range blobs {
			if o.Region != b.Region {
				continue
			}
			if (o.Leader && !best.Leader) ||
				(o.Leader == best.Leader && o.LTime > best.LTime) ||
				(o.Leader == best.Leader && o.LTime == best.LTime && o.Node < best.Node) {
				best = o
			}
		}
		out[b.Region] = best
	}
	return out
}

func TestPickRegionBlobsMatchesNaiveReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 500; round++ {
		var blobs []RegionBlob
		for i := 0; i < rng.IntN(12); i++ {
			blobs = append(blobs, RegionBlob{
				Region: string(rune('a' + rng.IntN(3))),
				Node:   string(rune('p' + rng.IntN(5))),
				Leader: rng.IntN(3) == 0,
				LTime:  uint64(rng.IntN(4)),
			})
		}
		got, want := pickRegionBlobs(blobs), naivePick(blobs)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d regions, want %d", round, len(got), len(want))
		}
		for region, w := range want {
			g := got[region]
			if g.Node != w.Node || g.Leader != w.Leader || g.LTime != w.LTime {
				t.Fatalf("round %d region %s: got %+v want %+v (input %+v)", round, region, g, w, blobs)
			}
		}
	}
}

func TestExactAlternation(t *testing.T) {
	re := regexp.MustCompile(exactAlternation([]string{"us-east", "eu.west"}))
	for value, want := range map[string]bool{
		"us-east": true, "eu.west": true, "euxwest": false, "us-east-2": false, "xus-east": false, "": false,
	} {
		if re.MatchString(value) != want {
			t.Errorf("%q: match %v, want %v", value, !want, want)
		}
	}
}

func TestCoalescerKeepsLatestPerMember(t *testing.T) {
	a, b := Member{Name: "a"}, Member{Name: "b"}
	var c Coalescer
	c.Add(MemberUp{Member: a})
	c.Add(MemberDown{Member: b})
	c.Add(UserEvent{Name: "fence", LTime: 1})
	c.Add(MemberDown{Member: a})
	c.Add(MemberUp{Member: a})
	c.Add(UserEvent{Name: "fence", LTime: 2})
	got := c.Flush()
	want := []Event{MemberUp{Member: a}, MemberDown{Member: b}, UserEvent{Name: "fence", LTime: 1}, UserEvent{Name: "fence", LTime: 2}}
	if len(got) != len(want) {
		t.Fatalf("flush = %+v, want %+v", got, want)
	}
	for i := range want {
		if describe(got[i]) != describe(want[i]) {
			t.Fatalf("event %d = %s, want %s", i, describe(got[i]), describe(want[i]))
		}
	}
	if c.Len() != 0 || len(c.Flush()) != 0 {
		t.Fatal("flush did not start a new batch")
	}
}

func describe(e Event) string {
	switch e := e.(type) {
	case MemberUp:
		return "up " + e.Member.Name
	case MemberDown:
		return "down " + e.Member.Name
	case MemberLeft:
		return "left " + e.Member.Name
	case MemberUpdated:
		return "updated " + e.Member.Name
	case MemberReaped:
		return "reaped " + e.Member.Name
	case UserEvent:
		return "user " + e.Name + " " + string(rune('0'+e.LTime))
	}
	return "?"
}

// manualTimers fires a timer only when the test says so.
type manualTimers struct{ fire chan time.Time }

func (m manualTimers) After(time.Duration) <-chan time.Time { return m.fire }

func TestCoalesceFlushesWhenTimerFires(t *testing.T) {
	in := make(chan Event)
	timers := manualTimers{fire: make(chan time.Time)}
	out := Coalesce(t.Context(), in, time.Second, timers)
	in <- MemberUp{Member: Member{Name: "a"}}
	in <- MemberDown{Member: Member{Name: "a"}}
	select {
	case e := <-out:
		t.Fatalf("emitted %s before the window closed", describe(e))
	default:
	}
	timers.fire <- time.Time{}
	if e := <-out; describe(e) != "down a" {
		t.Fatalf("got %s, want down a", describe(e))
	}
	in <- MemberUp{Member: Member{Name: "b"}}
	close(in)
	if e := <-out; describe(e) != "up b" {
		t.Fatalf("got %s, want up b on close", describe(e))
	}
	if _, open := <-out; open {
		t.Fatal("out not closed after in closed")
	}
}
