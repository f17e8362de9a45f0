package federation

import (
	"context"
	"io"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The router reaches every shard, its own included, as a
// grpc.ClientConnInterface: a peer region or the region's leader over the
// network (peer), the shard of this process (inProcess), or the router's
// own routing (selfConn). Typed clients (pb.NewJobServiceClient) work on
// each alike, and forwarding is one Invoke or NewStream by method name.

// peer is a connection to another member. Every call made on it carries
// the caller's metadata, marked as routed: this is the one place a
// forwarded call's metadata is made.
type peer struct{ cc *grpc.ClientConn }

func (p peer) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return p.cc.Invoke(outgoing(ctx), method, args, reply, opts...)
}

func (p peer) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return p.cc.NewStream(outgoing(ctx), desc, method, opts...)
}

// outgoing marks a forwarded call as routed and passes on the metadata the
// call came with. It carries the caller's identity (the gateway put it in
// the incoming metadata, and the owning region believes it only from a
// region's certificate), never a token.
func outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	md = md.Copy()
	delete(md, ":authority")
	delete(md, "authorization")
	md.Set(RoutedKey, "1")
	return metadata.NewOutgoingContext(ctx, md)
}

// leaderConn is the region's shard on a standby member: every call goes to
// the member that holds the region's lease, found anew for each call.
type leaderConn struct {
	r      *Router
	leader func() string
}

func (l leaderConn) conn() (peer, error) {
	addr := l.leader()
	if addr == "" {
		return peer{}, status.Error(codes.Unavailable, "this member is a standby and no leader holds the region's lease yet; retry shortly")
	}
	return l.r.conn(Region{Name: l.r.dir.Local() + " (leader)", Addr: addr})
}

func (l leaderConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c, err := l.conn()
	if err != nil {
		return err
	}
	return c.Invoke(ctx, method, args, reply, opts...)
}

func (l leaderConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c, err := l.conn()
	if err != nil {
		return nil, err
	}
	return c.NewStream(ctx, desc, method, opts...)
}

// inProcess serves calls with the shard of this process through the
// handlers protoc generated for its services: no network, no copy of the
// request.
type inProcess struct{ shard Shard }

func (p inProcess) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	h, ok := shardUnary[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "method %s is not served by the shard", method)
	}
	// The generated handler decodes into a new request, then hands it to
	// the interceptor; the interceptor hands it the request as it is.
	pass := func(ctx context.Context, _ any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(ctx, args)
	}
	resp, err := h(p.shard, ctx, func(any) error { return nil }, pass)
	if err != nil {
		return err
	}
	return pb.MoveInto(reply, resp)
}

func (p inProcess) NewStream(ctx context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	h, ok := shardStreams[method]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "method %s is not served by the shard", method)
	}
	return newPipe(ctx, func(ss grpc.ServerStream) error { return h(p.shard, ss) }), nil
}

// selfConn runs calls through the router's own routing, as if they came
// from a client: the federation's background work uses it.
type selfConn struct{ r *Router }

func (s selfConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	m, ok := methods[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "method %s is not routed", method)
	}
	resp, err := s.r.call(ctx, m, args.(proto.Message))
	if err != nil {
		return err
	}
	return pb.MoveInto(reply, resp)
}

func (s selfConn) NewStream(ctx context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	m, ok := methods[method]
	if !ok || !m.stream {
		return nil, status.Errorf(codes.Unimplemented, "stream %s is not routed", method)
	}
	return newPipe(ctx, func(ss grpc.ServerStream) error {
		in := m.newInput()
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		return s.r.serveStream(ss.Context(), m, in, ss)
	}), nil
}

// pipe connects a server-streaming handler running in this process to the
// caller as a client stream: the handler runs in its own goroutine, which
// stops when the handler returns; the handler returns when the caller's
// context ends.
type pipe struct {
	ctx    context.Context
	cancel context.CancelFunc
	req    chan any
	msgs   chan any
	done   chan struct{}
	err    error // set before done is closed

	recvMu   sync.Mutex
	gotFirst bool
}

func newPipe(ctx context.Context, serve func(grpc.ServerStream) error) *pipe {
	ctx, cancel := context.WithCancel(ctx)
	p := &pipe{ctx: ctx, cancel: cancel, req: make(chan any, 1), msgs: make(chan any), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = serve(pipeServer{p})
	}()
	return p
}

// The caller's side.

func (p *pipe) Header() (metadata.MD, error) { return metadata.MD{}, nil }
func (p *pipe) Trailer() metadata.MD         { return metadata.MD{} }
func (p *pipe) CloseSend() error             { return nil }
func (p *pipe) Context() context.Context     { return p.ctx }

func (p *pipe) SendMsg(m any) error {
	select {
	case p.req <- m:
		return nil
	default:
		return status.Error(codes.Internal, "a server stream takes one request")
	}
}

func (p *pipe) RecvMsg(m any) error {
	select {
	case msg := <-p.msgs:
		return pb.MoveInto(m, msg)
	case <-p.done:
		p.cancel()
		if p.err != nil {
			return p.err
		}
		return io.EOF
	}
}

// pipeServer is the handler's side.
type pipeServer struct{ p *pipe }

func (s pipeServer) SetHeader(md metadata.MD) error  { return grpc.SetHeader(s.p.ctx, md) }
func (s pipeServer) SendHeader(md metadata.MD) error { return grpc.SendHeader(s.p.ctx, md) }
func (s pipeServer) SetTrailer(md metadata.MD)       { _ = grpc.SetTrailer(s.p.ctx, md) }
func (s pipeServer) Context() context.Context        { return s.p.ctx }

func (s pipeServer) SendMsg(m any) error {
	select {
	case s.p.msgs <- m:
		return nil
	case <-s.p.ctx.Done():
		return s.p.ctx.Err()
	}
}

func (s pipeServer) RecvMsg(m any) error {
	s.p.recvMu.Lock()
	defer s.p.recvMu.Unlock()
	if s.p.gotFirst {
		return io.EOF
	}
	select {
	case req := <-s.p.req:
		s.p.gotFirst = true
		return pb.MoveInto(m, req)
	case <-s.p.ctx.Done():
		return s.p.ctx.Err()
	}
}
