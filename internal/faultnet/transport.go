package faultnet

import (
	"bytes"
	"container/heap"
	"context"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Transport is memberlist's transport of one member of region, sending
// through the network's links. It owns one goroutine, which delivers
// delayed packets in order of their due time, stopped by Shutdown.
type Transport struct {
	memberlist.NodeAwareTransport
	net    *Network
	region string

	mu       sync.Mutex
	queue    packetQueue
	seq      uint64
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

var _ memberlist.NodeAwareTransport = (*Transport)(nil)

// Transport wraps inner, the transport of a member of region listening on
// addr (registered as region's), so that what it sends to other regions
// goes through the links.
func (n *Network) Transport(region, addr string, inner memberlist.NodeAwareTransport) *Transport {
	n.Register(addr, region)
	t := &Transport{NodeAwareTransport: inner, net: n, region: region,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go t.deliver()
	return t
}

// WriteTo sends a packet to addr through the link to addr's region.
func (t *Transport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress sends a packet: dropped, or handed to the inner
// transport after the link's delay. A dropped packet is no error, as with
// UDP.
func (t *Transport) WriteToAddress(b []byte, addr memberlist.Address) (time.Time, error) {
	to := t.net.RegionOf(addr.Addr)
	if !faulty(t.region, to) {
		return t.NodeAwareTransport.WriteToAddress(b, addr)
	}
	delay, ok := t.net.packet(t.region, to, len(b))
	if !ok {
		return time.Now(), nil
	}
	if delay <= 0 {
		return t.NodeAwareTransport.WriteToAddress(b, addr)
	}
	t.enqueue(queued{at: time.Now().Add(delay), buf: bytes.Clone(b), addr: addr, to: to})
	return time.Now(), nil
}

// DialTimeout opens a stream to addr through the links.
func (t *Transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout opens a stream: it fails once timeout passes while
// the link is cut either way, and its writes and reads are delayed.
func (t *Transport) DialAddressTimeout(addr memberlist.Address, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return t.net.dial(ctx, t.region, t.net.RegionOf(addr.Addr), func(ctx context.Context) (net.Conn, error) {
		left := timeout
		if dl, ok := ctx.Deadline(); ok {
			left = time.Until(dl)
		}
		return t.NodeAwareTransport.DialAddressTimeout(addr, left)
	})
}

// Shutdown stops delivering (packets still queued are lost, as on a host
// that went away) and shuts the inner transport down.
func (t *Transport) Shutdown() error {
	t.stopOnce.Do(func() { close(t.stop) })
	<-t.done
	return t.NodeAwareTransport.Shutdown()
}

func (t *Transport) enqueue(q queued) {
	t.mu.Lock()
	t.seq++
	q.seq = t.seq
	heap.Push(&t.queue, q)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// deliver hands each queued packet to the inner transport at its due
// time, the earliest first.
func (t *Transport) deliver() {
	defer close(t.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		var due []queued
		now := time.Now()
		for len(t.queue) > 0 && !t.queue[0].at.After(now) {
			due = append(due, heap.Pop(&t.queue).(queued))
		}
		next := time.Hour
		if len(t.queue) > 0 {
			next = t.queue[0].at.Sub(now)
		}
		t.mu.Unlock()
		for _, q := range due {
			if _, err := t.NodeAwareTransport.WriteToAddress(q.buf, q.addr); err != nil {
				t.net.count(t.region, q.to, func(c *Counts) { c.SendErrors++ })
			}
		}
		if len(due) > 0 {
			continue
		}
		timer.Reset(next)
		select {
		case <-t.stop:
			return
		case <-t.wake:
		case <-timer.C:
		}
	}
}

type queued struct {
	at   time.Time
	seq  uint64
	buf  []byte
	addr memberlist.Address
	to   string
}

// packetQueue orders packets by due time, then by the order they were
// sent.
type packetQueue []queued

func (q packetQueue) Len() int { return len(q) }
func (q packetQueue) Less(i, j int) bool {
	if q[i].at.Equal(q[j].at) {
		return q[i].seq < q[j].seq
	}
	return q[i].at.Before(q[j].at)
}
func (q packetQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *packetQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *packetQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
