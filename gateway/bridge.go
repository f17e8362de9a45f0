package gateway

import (
	"context"
	"net"

	"google.golang.org/grpc/test/bufconn"
)

// The HTTP/JSON gateway reaches the gRPC server through an in-process
// listener, the bridge, whatever the API port's TLS: the HTTP side has
// already authenticated the request and passes the identity in metadata
// (bridgeIdentityKey), which the gRPC side believes only from a bridge
// connection. No network peer can be one: bridge connections have their
// own address type.

// bridgeIdentityKey carries the identity the HTTP side authenticated.
const bridgeIdentityKey = "peloton-gateway-identity"

// bridgeAddr is the address of both ends of a bridge connection.
type bridgeAddr struct{}

func (bridgeAddr) Network() string { return "peloton-http-bridge" }
func (bridgeAddr) String() string  { return "http-gateway" }

type bridgeConn struct{ net.Conn }

func (bridgeConn) RemoteAddr() net.Addr { return bridgeAddr{} }
func (bridgeConn) LocalAddr() net.Addr  { return bridgeAddr{} }

// bridge is the in-process listener of the gRPC server.
type bridge struct{ *bufconn.Listener }

func newBridge() *bridge { return &bridge{bufconn.Listen(1 << 20)} }

func (b *bridge) Accept() (net.Conn, error) {
	c, err := b.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return bridgeConn{c}, nil
}

func (b *bridge) Addr() net.Addr { return bridgeAddr{} }

func (b *bridge) dial(ctx context.Context, _ string) (net.Conn, error) {
	return b.DialContext(ctx)
}
