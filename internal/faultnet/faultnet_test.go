package faultnet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"go.uber.org/goleak"

	"github.com/peloton-federated/peloton/tests/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is an inner transport that records what it was asked to send.
type recorder struct {
	memberlist.NodeAwareTransport // nil: only the methods below are called
	mu                            sync.Mutex
	sent                          []sent
}

type sent struct {
	buf []byte
	at  time.Time
}

func (r *recorder) WriteToAddress(b []byte, _ memberlist.Address) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, sent{buf: bytes.Clone(b), at: time.Now()})
	return time.Now(), nil
}

func (r *recorder) Shutdown() error { return nil }

func (r *recorder) got() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.sent...)
}

// pair2 is a network of regions a and b, and a's transport over rec.
func pair2(t *testing.T, seed uint64) (*Network, *Transport, *recorder) {
	t.Helper()
	n := New(seed)
	n.Register("10.0.0.2:7946", "b")
	rec := &recorder{}
	tr := n.Transport("a", "10.0.0.1:7946", rec)
	t.Cleanup(func() { _ = tr.Shutdown() })
	return n, tr, rec
}

func send(t *testing.T, tr *Transport, addr string, k int) {
	t.Helper()
	for i := range k {
		if _, err := tr.WriteTo([]byte{byte(i >> 8), byte(i)}, addr); err != nil {
			t.Fatal(err)
		}
	}
}

func waitCount(t *testing.T, rec *recorder, want int) []sent {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := rec.got()
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLinkValidate(t *testing.T) {
	for _, l := range []Link{{Loss: -0.1}, {Loss: 1.5}, {Reorder: 2}, {Latency: -1}, {Jitter: -1}} {
		if l.Validate() == nil {
			t.Errorf("%+v: want an error", l)
		}
	}
	if err := (Link{Loss: 1, Reorder: 1, Latency: time.Second, Jitter: 2 * time.Second, Cut: true}).Validate(); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Set with a bad link did not panic")
		}
	}()
	New(1).Set("a", "b", Link{Loss: 3})
}

func TestCleanAndUnregisteredPassAtOnce(t *testing.T) {
	_, tr, rec := pair2(t, 1)
	send(t, tr, "10.0.0.2:7946", 3) // b, clean link
	send(t, tr, "10.9.9.9:1", 2)    // unknown address
	if got := rec.got(); len(got) != 5 {
		t.Fatalf("sent %d packets at once, want 5", len(got))
	}
}

func TestLossDropsAboutThatShare(t *testing.T) {
	n, tr, rec := pair2(t, 7)
	n.Set("a", "b", Link{Loss: 0.3})
	send(t, tr, "10.0.0.2:7946", 4000)
	c := n.Counts("a", "b")
	if c.Packets != 4000 || c.Bytes != 8000 {
		t.Fatalf("counts %+v", c)
	}
	share := float64(c.Dropped) / float64(c.Packets)
	if share < 0.27 || share > 0.33 {
		t.Fatalf("dropped %.3f of the packets, want about 0.3", share)
	}
	if got := len(rec.got()); got != int(c.Packets-c.Dropped) {
		t.Fatalf("delivered %d, counts say %d", got, c.Packets-c.Dropped)
	}
	// The other direction is untouched.
	if l := n.Link("b", "a"); l != (Link{}) {
		t.Fatalf("b→a is %+v", l)
	}
}

func TestLatencyAndJitterBoundDelivery(t *testing.T) {
	n, tr, rec := pair2(t, 3)
	n.Set("a", "b", Link{Latency: 60 * time.Millisecond, Jitter: 20 * time.Millisecond})
	start := time.Now()
	send(t, tr, "10.0.0.2:7946", 50)
	if len(rec.got()) != 0 {
		t.Fatal("a delayed packet was delivered at once")
	}
	got := waitCount(t, rec, 50)
	if len(got) != 50 {
		t.Fatalf("delivered %d of 50", len(got))
	}
	for _, s := range got {
		if d := s.at.Sub(start); d < 40*time.Millisecond {
			t.Fatalf("delivered after %v, want at least 40ms", d)
		}
	}
}

// inversions counts packets delivered before one sent earlier.
func inversions(got []sent) int {
	k := 0
	for i := 1; i < len(got); i++ {
		if bytes.Compare(got[i].buf, got[i-1].buf) < 0 {
			k++
		}
	}
	return k
}

func TestReorder(t *testing.T) {
	n, tr, rec := pair2(t, 5)
	n.Set("a", "b", Link{Latency: 5 * time.Millisecond})
	send(t, tr, "10.0.0.2:7946", 200)
	if k := inversions(waitCount(t, rec, 200)); k != 0 {
		t.Fatalf("%d packets overtaken without reordering or jitter", k)
	}
	rec.mu.Lock()
	rec.sent = nil
	rec.mu.Unlock()
	n.Set("a", "b", Link{Latency: 5 * time.Millisecond, Reorder: 0.2})
	for i := range 200 {
		if _, err := tr.WriteTo([]byte{byte(i >> 8), byte(i)}, "10.0.0.2:7946"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	got := waitCount(t, rec, 200)
	if len(got) != 200 {
		t.Fatalf("delivered %d of 200", len(got))
	}
	if inversions(got) == 0 {
		t.Fatal("no packet overtaken with Reorder 0.2")
	}
}

func TestCutOneWayAndChangeWhileRunning(t *testing.T) {
	n := New(1)
	recA, recB := &recorder{}, &recorder{}
	ta := n.Transport("a", "10.0.0.1:7946", recA)
	tb := n.Transport("b", "10.0.0.2:7946", recB)
	defer ta.Shutdown()
	defer tb.Shutdown()
	n.Cut("a", "b", true)
	send(t, ta, "10.0.0.2:7946", 10)
	send(t, tb, "10.0.0.1:7946", 10)
	if len(recA.got()) != 0 || len(recB.got()) != 10 {
		t.Fatalf("a sent %d (cut), b sent %d (open)", len(recA.got()), len(recB.got()))
	}
	if c := n.Counts("a", "b"); c.Dropped != 10 {
		t.Fatalf("a→b counts %+v", c)
	}
	n.Cut("a", "b", false)
	send(t, ta, "10.0.0.2:7946", 10)
	if len(recA.got()) != 10 {
		t.Fatalf("a sent %d after healing", len(recA.got()))
	}
	// Isolate cuts both ways to every region registered.
	n.Register("10.0.0.3:7946", "c")
	n.Isolate("b", true)
	for _, d := range [][2]string{{"a", "b"}, {"b", "a"}, {"c", "b"}, {"b", "c"}} {
		if !n.Link(d[0], d[1]).Cut {
			t.Errorf("%s→%s not cut by Isolate", d[0], d[1])
		}
	}
	if n.Link("a", "c").Cut {
		t.Error("a→c cut by isolating b")
	}
	n.Isolate("b", false)
	if n.Link("b", "a").Cut {
		t.Error("b→a still cut")
	}
}

func TestShutdownDropsQueuedPackets(t *testing.T) {
	n := New(1)
	n.Register("10.0.0.2:7946", "b")
	rec := &recorder{}
	tr := n.Transport("a", "10.0.0.1:7946", rec)
	n.SetDefault(Link{Latency: time.Hour})
	send(t, tr, "10.0.0.2:7946", 3)
	if err := tr.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if len(rec.got()) != 0 {
		t.Fatal("a queued packet was delivered")
	}
}

// echo is a TCP server in region b that echoes what it reads.
func echo(t *testing.T, n *Network) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	n.Register(l.Addr().String(), "b")
	return l.Addr().String()
}

func roundTrip(c net.Conn, msg string) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

func TestStreamDelayedBothWays(t *testing.T) {
	n := New(1)
	addr := echo(t, n)
	n.SetPair("a", "b", Link{Latency: 40 * time.Millisecond})
	start := time.Now()
	c, err := n.Dialer("a")(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("dial took %v, want one round trip (80ms) at least", d)
	}
	start = time.Now()
	got, err := roundTrip(c, "ping")
	if err != nil || got != "ping" {
		t.Fatalf("round trip: %q %v", got, err)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("round trip took %v, want 80ms at least", d)
	}
	if c := n.Counts("a", "b"); c.Dials != 1 || c.DialsFailed != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestStreamAcrossACut(t *testing.T) {
	n := New(1)
	addr := echo(t, n)
	dial := n.Dialer("a")
	// One way cut (b→a): the handshake cannot complete.
	n.Cut("b", "a", true)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	_, err := dial(ctx, addr)
	cancel()
	if !errors.Is(err, ErrCut) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("dial across a cut: %v, want ErrCut", err)
	}
	if c := n.Counts("a", "b"); c.DialsFailed != 1 {
		t.Fatalf("counts %+v", c)
	}
	n.Cut("b", "a", false)
	c, err := dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An open stream stalls while cut: a read waits out its deadline…
	n.Cut("b", "a", true)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 1)
	var ne net.Error
	if _, err := c.Read(buf); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read across a cut: %v, want a timeout", err)
	}
	// …and the byte arrives once the link heals.
	_ = c.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		n.Cut("b", "a", false)
	}()
	if k, err := c.Read(buf); k != 1 || buf[0] != 'x' || err != nil {
		t.Fatalf("read after healing: %d %q %v", k, buf[:k], err)
	}
	// A write across a cut waits out its deadline too.
	n.Cut("a", "b", true)
	_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Write([]byte("y")); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("write across a cut: %v, want a timeout", err)
	}
}

// TestMemberlistAcrossTheNetwork runs two real memberlist members over
// faultnet transports: a cut makes each declare the other dead, and
// healing brings them back.
func TestMemberlistAcrossTheNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs memberlist for several seconds")
	}
	n := New(11)
	start := func(region string) *memberlist.Memberlist {
		nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}})
		if err != nil {
			t.Fatal(err)
		}
		port := nt.GetAutoBindPort()
		cfg := memberlist.DefaultLocalConfig()
		cfg.Name, cfg.BindAddr, cfg.BindPort, cfg.AdvertisePort = region, "127.0.0.1", port, port
		cfg.ProbeInterval, cfg.ProbeTimeout, cfg.SuspicionMult = 200*time.Millisecond, 100*time.Millisecond, 2
		cfg.TCPTimeout = 200 * time.Millisecond
		cfg.LogOutput = io.Discard
		cfg.Transport = n.Transport(region, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nt)
		m, err := memberlist.Create(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		return m
	}
	a, b := start("a"), start("b")
	if _, err := b.Join([]string{a.LocalNode().Address()}); err != nil {
		t.Fatal(err)
	}
	alive := func(m *memberlist.Memberlist) int { return m.NumMembers() }
	wait := func(what string, cond func() bool) { testkit.WaitFor(t, 10*time.Second, what, cond) }
	wait("both see each other", func() bool { return alive(a) == 2 && alive(b) == 2 })
	n.Isolate("b", true)
	wait("each declares the other dead", func() bool { return alive(a) == 1 && alive(b) == 1 })
	n.Isolate("b", false)
	_, _ = b.Join([]string{a.LocalNode().Address()})
	wait("both alive again", func() bool { return alive(a) == 2 && alive(b) == 2 })
	if c := n.Counts("a", "b"); c.Dropped == 0 || c.Packets == 0 {
		t.Fatalf("a→b counts %+v: the cut dropped nothing", c)
	}
}
