package gossip

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAdmitBook(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		at     time.Duration
		op     string // "decide" or "record" (reason "" admits)
		reason string
		ok     bool // decide: admitted
		start  bool // decide: start a verification
		first  bool // record: a new verdict
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"verified once, admitted after", []step{
			{0, "decide", "", false, true, false},
			{0, "decide", "", false, false, false}, // pending: no second verification
			{10 * time.Millisecond, "record", "", false, false, true},
			{time.Hour, "decide", "", true, false, false},
		}},
		{"refused, retried with a doubling backoff", []step{
			{0, "decide", "", false, true, false},
			{0, "record", "bad certificate", false, false, true},
			{500 * time.Millisecond, "decide", "", false, false, false},
			{time.Second, "decide", "", false, true, false},
			{time.Second, "record", "bad certificate", false, false, false}, // same reason: not new
			{2500 * time.Millisecond, "decide", "", false, false, false},
			{3 * time.Second, "decide", "", false, true, false},
			{3 * time.Second, "record", "connection refused", false, false, true},
			{6 * time.Second, "decide", "", false, false, false},
			{7 * time.Second, "decide", "", false, true, false},
			{7 * time.Second, "record", "", false, false, true},
			{7 * time.Second, "decide", "", true, false, false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newAdmitBook()
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "decide":
					ok, start := b.decide("k", now)
					if ok != s.ok || start != s.start {
						t.Fatalf("step %d at %v: decide = %v, %v; want %v, %v", i, s.at, ok, start, s.ok, s.start)
					}
				case "record":
					if first := b.record("k", s.reason, now); first != s.first {
						t.Fatalf("step %d at %v: record(%q) first = %v, want %v", i, s.at, s.reason, first, s.first)
					}
				}
			}
		})
	}
}

func TestAdmitBookBackoffIsCapped(t *testing.T) {
	b := newAdmitBook()
	now := time.Unix(0, 0)
	for range 20 {
		b.decide("k", now)
		b.record("k", "no", now)
	}
	if got := b.entries["k"].retryAt.Sub(now); got != admitBackoffMax {
		t.Fatalf("backoff after 20 failures = %v, want %v", got, admitBackoffMax)
	}
	b.forget(now.Add(admitForget + time.Second))
	if len(b.entries) != 0 {
		t.Fatalf("forget kept %d entries", len(b.entries))
	}
}

func TestClaimPayloadCoversEveryField(t *testing.T) {
	base := Claim{Name: "n", Region: "r", APIAddr: "127.0.0.1:1", Addr: "127.0.0.1:2"}
	for _, c := range []Claim{
		{Name: "m", Region: "r", APIAddr: "127.0.0.1:1", Addr: "127.0.0.1:2"},
		{Name: "n", Region: "s", APIAddr: "127.0.0.1:1", Addr: "127.0.0.1:2"},
		{Name: "n", Region: "r", APIAddr: "127.0.0.1:3", Addr: "127.0.0.1:2"},
		{Name: "n", Region: "r", APIAddr: "127.0.0.1:1", Addr: "127.0.0.1:3"},
		{Name: "n\x00r", Region: "", APIAddr: "127.0.0.1:1", Addr: "127.0.0.1:2"},
	} {
		if string(c.Payload()) == string(base.Payload()) {
			t.Errorf("%+v has the payload of %+v", c, base)
		}
	}
}

// signedBy is a test admission: a member proves it holds a secret of its
// region by a proof "<secret>|<name>|<addr>"; Verify accepts the regions
// whose secret it knows, after delay.
type signedBy struct {
	secret  string
	trusted map[string]string // region -> secret
	delay   time.Duration

	mu       sync.Mutex
	verified map[string]int // name -> verifications
}

func (s *signedBy) Prove(c Claim) (string, error) {
	return s.secret + "|" + c.Name + "|" + c.Addr, nil
}

func (s *signedBy) Verify(ctx context.Context, c Claim, proof string) error {
	s.mu.Lock()
	s.verified[c.Name]++
	s.mu.Unlock()
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	if want := s.trusted[c.Region] + "|" + c.Name + "|" + c.Addr; s.trusted[c.Region] == "" || proof != want {
		return errors.New("proof does not verify")
	}
	return nil
}

func TestAdmissionRefusesAMemberThatCannotProveItsIdentity(t *testing.T) {
	trusted := map[string]string{"east": "e", "west": "w"}
	admissions := map[int]*signedBy{}
	pool := startPool(t, []string{"east", "west"}, func(i int, c *Config) {
		secret := map[int]string{1: "e", 2: "w"}[i]
		// The west member's verifications are slower than a message
		// waits: it is admitted by a later message.
		a := &signedBy{secret: secret, trusted: trusted, verified: map[string]int{}}
		if i == 1 {
			a.delay = admitWait + 200*time.Millisecond
		}
		admissions[i] = a
		c.Admission = a
	})
	if got := pool[0].Local(); !strings.Contains(pool[0].serf.LocalMember().Tags[TagProof], got.Addr) {
		t.Fatalf("the proof %q does not cover the gossip address %s", pool[0].serf.LocalMember().Tags[TagProof], got.Addr)
	}
	// An intruder with the key but a secret of another region claims to
	// be in east; it trusts everyone.
	cfg := fastConfig(3, "east")
	cfg.Admission = &signedBy{secret: "forged", trusted: trusted, verified: map[string]int{}}
	intruder, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = intruder.Close() })
	for range 3 {
		_, _ = intruder.Join(t.Context(), []string{pool[0].Addr(), pool[1].Addr()})
	}
	// Give gossip many rounds (50 ms each) to spread it.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range pool {
			if _, ok := memberNamed(m.Members(), "node-3"); ok {
				t.Fatalf("%s admitted the intruder", m.Name())
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Verdicts are remembered: a refused claim is tried again with a
	// backoff, a verified one not at all.
	admissions[1].mu.Lock()
	tries, west := admissions[1].verified["node-3"], admissions[1].verified["node-2"]
	admissions[1].mu.Unlock()
	if tries == 0 || tries > 3 {
		t.Errorf("east verified the intruder %d times in 2s, want 1 to 3 (backoff)", tries)
	}
	if west != 1 {
		t.Errorf("east verified west %d times, want once", west)
	}
	// A member with no admission at all publishes no proof: refused too.
	plain := startMember(t, fastConfig(4, "west"))
	_, _ = plain.Join(t.Context(), []string{pool[0].Addr()})
	time.Sleep(500 * time.Millisecond)
	if _, ok := memberNamed(pool[0].Members(), "node-4"); ok {
		t.Fatal("east admitted a member without a proof")
	}
	if n := len(pool[1].Members()); n != 2 {
		t.Fatalf("west sees %d members, want 2", n)
	}
}
