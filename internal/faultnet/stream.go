package faultnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// ErrCut is the error of a dial across a cut link, once its timeout
// passed; it is a timeout (os.ErrDeadlineExceeded), as a real dial's.
var ErrCut = fmt.Errorf("faultnet: link cut: %w", os.ErrDeadlineExceeded)

// Dialer returns a dialer for connections opened by region, for
// grpc.WithContextDialer: connections to addresses of other regions go
// through the network's links (Register the peers' addresses first).
func (n *Network) Dialer(region string) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		return n.dial(ctx, region, n.RegionOf(addr), func(ctx context.Context) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		})
	}
}

// dial opens a stream from → to with open: it fails with ErrCut when
// either direction stays cut until ctx ends, and takes one round trip
// longer than open.
func (n *Network) dial(ctx context.Context, from, to string, open func(context.Context) (net.Conn, error)) (net.Conn, error) {
	if !faulty(from, to) {
		return open(ctx)
	}
	n.count(from, to, func(c *Counts) { c.Dials++ })
	fail := func(err error) (net.Conn, error) {
		n.count(from, to, func(c *Counts) { c.DialsFailed++ })
		return nil, err
	}
	// The handshake: from → to, then back.
	for _, dir := range [][2]string{{from, to}, {to, from}} {
		if err := n.pass(ctx, dir[0], dir[1], nil); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = ErrCut
			}
			return fail(err)
		}
	}
	c, err := open(ctx)
	if err != nil {
		return fail(err)
	}
	return &conn{Conn: c, net: n, from: from, to: to, closed: make(chan struct{})}, nil
}

// pass waits until a chunk may go from → to: the link is not cut and the
// chunk's delay has passed. It fails with os.ErrDeadlineExceeded when ctx
// ends first, or net.ErrClosed when closed is closed.
func (n *Network) pass(ctx context.Context, from, to string, closed <-chan struct{}) error {
	for {
		delay, cut, changed := n.chunk(from, to)
		if !cut {
			return sleep(ctx, delay, closed)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return os.ErrDeadlineExceeded
		case <-closed:
			return net.ErrClosed
		}
	}
}

func sleep(ctx context.Context, d time.Duration, closed <-chan struct{}) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return os.ErrDeadlineExceeded
	case <-closed:
		return net.ErrClosed
	}
}

// conn is a stream opened by region from to region to: its writes go
// through from → to, its reads through to → from.
type conn struct {
	net.Conn
	net      *Network
	from, to string

	dlMu            sync.Mutex
	readDL, writeDL time.Time

	// Reads are not concurrent with each other; pending is what the
	// inner connection returned but the link has not delivered yet.
	pending []byte
	readErr error
	due     time.Time // when pending arrives; zero until decided

	closed    chan struct{}
	closeOnce sync.Once
}

func (c *conn) deadlineCtx(dl time.Time) (context.Context, context.CancelFunc) {
	if dl.IsZero() {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), dl)
}

func (c *conn) Write(p []byte) (int, error) {
	c.dlMu.Lock()
	dl := c.writeDL
	c.dlMu.Unlock()
	ctx, cancel := c.deadlineCtx(dl)
	defer cancel()
	if err := c.net.pass(ctx, c.from, c.to, c.closed); err != nil {
		return 0, c.opError("write", err)
	}
	return c.Conn.Write(p)
}

func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.pending) == 0 {
		if c.readErr != nil {
			return 0, c.readErr
		}
		buf := make([]byte, len(p))
		k, err := c.Conn.Read(buf)
		c.pending, c.readErr, c.due = buf[:k], err, time.Time{}
		if k == 0 {
			err, c.readErr = c.readErr, nil
			return 0, err
		}
	}
	c.dlMu.Lock()
	dl := c.readDL
	c.dlMu.Unlock()
	ctx, cancel := c.deadlineCtx(dl)
	defer cancel()
	if err := c.arrive(ctx); err != nil {
		return 0, c.opError("read", err)
	}
	k := copy(p, c.pending)
	c.pending = c.pending[k:]
	if len(c.pending) == 0 && c.readErr != nil {
		err := c.readErr
		c.readErr = nil
		return k, err
	}
	return k, nil
}

// arrive waits until the pending chunk has crossed to → from: its delay
// is decided once, and a cut holds it until the link heals.
func (c *conn) arrive(ctx context.Context) error {
	for {
		if c.due.IsZero() {
			delay, cut, changed := c.net.chunk(c.to, c.from)
			if cut {
				select {
				case <-changed:
					continue
				case <-ctx.Done():
					return os.ErrDeadlineExceeded
				case <-c.closed:
					return net.ErrClosed
				}
			}
			c.due = time.Now().Add(delay)
		}
		if err := sleep(ctx, time.Until(c.due), c.closed); err != nil {
			return err
		}
		cut, changed := c.net.state(c.to, c.from)
		if !cut {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return os.ErrDeadlineExceeded
		case <-c.closed:
			return net.ErrClosed
		}
	}
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (c *conn) SetDeadline(t time.Time) error {
	c.dlMu.Lock()
	c.readDL, c.writeDL = t, t
	c.dlMu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.dlMu.Lock()
	c.readDL = t
	c.dlMu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.dlMu.Lock()
	c.writeDL = t
	c.dlMu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}
