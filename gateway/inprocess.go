package gateway

import (
	"context"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// The HTTP/JSON side calls the API's unary methods in process: the
// handler registered for the method runs in the HTTP request's goroutine,
// through the same interceptors as a gRPC call (metrics, limits, the
// guard), as a call from the bridge. Nothing is encoded or framed between
// them. Streams (Watch) go through the bridge, a gRPC connection.

// registry records the services registered with the gRPC server, so that
// their unary handlers can be called in process.
type registry struct {
	server  *grpc.Server
	methods map[string]registered
}

// registered is one unary method: its generated handler and the service
// implementation it is called with.
type registered struct {
	handler grpc.MethodHandler
	impl    any
}

func (r *registry) RegisterService(sd *grpc.ServiceDesc, impl any) {
	r.server.RegisterService(sd, impl)
	for _, m := range sd.Methods {
		r.methods["/"+sd.ServiceName+"/"+m.MethodName] = registered{handler: m.Handler, impl: impl}
	}
}

// chainUnary runs interceptors in order around a handler, as the gRPC
// server's chain does.
func chainUnary(ics ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var next func(i int) grpc.UnaryHandler
		next = func(i int) grpc.UnaryHandler {
			if i == len(ics) {
				return handler
			}
			return func(ctx context.Context, req any) (any, error) { return ics[i](ctx, req, info, next(i+1)) }
		}
		return next(0)(ctx, req)
	}
}

// inProcess is the HTTP side's connection to the API.
type inProcess struct {
	methods   map[string]registered
	intercept grpc.UnaryServerInterceptor
	// bridge serves streams, and any method not registered here.
	bridge grpc.ClientConnInterface
}

func (c *inProcess) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	m, ok := c.methods[method]
	if !ok {
		// The bridge's calls do not carry the body's check to the guard:
		// a body with problems goes no further.
		if err := bodyErr(ctx); err != nil {
			return err
		}
		return c.bridge.Invoke(ctx, method, args, reply, opts...)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewIncomingContext(ctx, md)
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: bridgeAddr{}, LocalAddr: bridgeAddr{}})
	st := &headerStream{method: method}
	ctx = grpc.NewContextWithServerTransportStream(ctx, st)
	// The generated handler decodes into a new request, then hands it to
	// the interceptor; the interceptor hands the chain the request as it is.
	pass := func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return c.intercept(ctx, args, info, handler)
	}
	resp, err := m.handler(m.impl, ctx, func(any) error { return nil }, pass)
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = st.headers()
		case grpc.TrailerCallOption:
			*o.TrailerAddr = st.trailers()
		}
	}
	if err != nil {
		return err
	}
	return pb.MoveInto(reply, resp)
}

func (c *inProcess) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.bridge.NewStream(ctx, desc, method, opts...)
}

// headerStream collects the headers and trailers a handler sets.
type headerStream struct {
	method  string
	mu      sync.Mutex
	header  metadata.MD
	trailer metadata.MD
}

func (s *headerStream) Method() string { return s.method }

func (s *headerStream) SetHeader(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header = metadata.Join(s.header, md)
	return nil
}

func (s *headerStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *headerStream) SetTrailer(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

func (s *headerStream) headers() metadata.MD {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

func (s *headerStream) trailers() metadata.MD {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trailer
}
