package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/ui"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
)

// Config configures a Gateway.
type Config struct {
	// Addr is the listen address for gRPC and HTTP, such as 127.0.0.1:5390.
	Addr     string
	Logger   *slog.Logger
	Registry *prometheus.Registry
	// Register adds the API services to the gRPC server.
	Register func(grpc.ServiceRegistrar)
	// Ready reports whether the region is ready to serve; /healthz uses it.
	Ready func() error
	// TLS, when set, serves the port over TLS; client certificates are
	// verified as its ClientCAs and ClientAuth say.
	TLS *tls.Config
	// Auth, when set, authenticates and authorises every call; nil leaves
	// the API open (dev mode on loopback).
	Auth *Auth
	// Audit keeps the audit records of mutating calls; nil keeps only
	// the log line of each.
	Audit AuditLog
	// Region names this region in audit records.
	Region string
	// JobPool looks up a job's pool, when authorising a pool owner's call
	// on an existing job.
	JobPool func(ctx context.Context, job string) (string, error)
	// Limits bound request sizes and the calls served at once.
	Limits Limits
	// Names are more host names the server answers to over HTTP (a load
	// balancer's, a DNS alias), besides its listen address, the names of
	// its TLS certificate and, on loopback, localhost: a request whose
	// Host is none of them is refused (DNS rebinding; front.go).
	Names []string
	// RegionMoves verifies the jobs a region creates and stops on its own
	// behalf (relocations); nil refuses them all.
	RegionMoves RegionMoves
}

// maxHeaderBytes bounds the headers of a request, HTTP/1 and HTTP/2
// (gRPC metadata) alike: larger ones are refused with 431.
const maxHeaderBytes = 32 << 10

// Gateway serves one region's API.
type Gateway struct {
	cfg      Config
	grpc     *grpc.Server
	listener net.Listener
	http     *http.Server
	conn     *grpc.ClientConn
	bridge   *bridge
}

// maxMessageBytes bounds a request or an answer, on gRPC and HTTP alike.
const maxMessageBytes = 64 << 20

// New binds the listen address and prepares the servers; Serve runs them.
func New(cfg Config) (_ *Gateway, err error) {
	cfg = cfg.withDefaults()
	m := newMetrics(cfg.Registry)
	g := &Gateway{cfg: cfg, bridge: newBridge()}
	guard := &guard{auth: cfg.Auth, audit: cfg.Audit, region: cfg.Region, jobPool: cfg.JobPool, moves: cfg.RegionMoves, log: cfg.Logger, now: time.Now}
	// Job specs with an override per instance run to tens of MB. A call
	// from HTTP whose body has problems is refused once authorised.
	intercept := chainUnary(m.unary, newLimiter(cfg.Limits, cfg.Registry).unary, guard.unary, refuseInvalidBody)
	g.grpc = newGRPCServer(cfg.Limits, intercept, m.stream, guard.stream)
	methods := registerServices(g.grpc, cfg.Register, &selfService{g: guard})
	if g.listener, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer func() {
		if err != nil {
			g.listener.Close()
		}
	}()
	if g.conn, err = g.dialSelf(); err != nil {
		return nil, fmt.Errorf("dial own gRPC endpoint: %w", err)
	}
	// HTTP calls run the unary handlers in process; streams go through
	// the bridge.
	api, err := newJSONAPI(&inProcess{methods: methods, intercept: intercept, bridge: g.conn}, cfg.Limits)
	if err != nil {
		return nil, err
	}
	public, err := publicRoutes()
	if err != nil {
		return nil, err
	}
	root := g.newRoot(m.http(api), guard, public)
	g.http = g.newHTTPServer(g.frontDoor(root, guard))
	return g, nil
}

// withDefaults fills what a Config leaves out: a logger that discards, a
// registry of its own, the default limits.
func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	return cfg
}

// messageBytes bounds an answer, and a request that may carry a job spec.
func messageBytes(l Limits) int { return max(int(l.SpecRequestBytes), maxMessageBytes) }

// newGRPCServer is the gRPC server, its calls passed through intercept
// and its streams through streams, in order.
func newGRPCServer(l Limits, intercept grpc.UnaryServerInterceptor, streams ...grpc.StreamServerInterceptor) *grpc.Server {
	return grpc.NewServer(
		grpc.MaxRecvMsgSize(int(l.SpecRequestBytes)),
		grpc.MaxSendMsgSize(messageBytes(l)),
		grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.UnaryInterceptor(intercept),
		grpc.ChainStreamInterceptor(streams...),
	)
}

// registerServices registers the caller's services and the gateway's own
// (AuthService, AuditService) and returns them by method, for the HTTP
// side's in-process calls.
func registerServices(server *grpc.Server, register func(grpc.ServiceRegistrar), self *selfService) map[string]registered {
	reg := &registry{server: server, methods: map[string]registered{}}
	register(reg)
	pb.RegisterAuthServiceServer(reg, self)
	pb.RegisterAuditServiceServer(reg, self)
	return reg.methods
}

// dialSelf connects the HTTP/JSON gateway, a client of the gRPC server, to
// it in process, through the bridge.
func (g *Gateway) dialSelf() (*grpc.ClientConn, error) {
	size := messageBytes(g.cfg.Limits)
	return grpc.NewClient("passthrough:///http-gateway", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(g.bridge.dial),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(size), grpc.MaxCallSendMsgSize(size)))
}

// newJSONAPI is the HTTP/JSON API (grpc-gateway) over cc, behind the
// request hygiene checks of its routes.
func newJSONAPI(cc grpc.ClientConnInterface, l Limits) (http.Handler, error) {
	mux := runtime.NewServeMux(
		runtime.WithErrorHandler(httpErrors),
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &specMarshaler{runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: false},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}),
		runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
			id, _ := auth.FromContext(r.Context())
			return metadata.Pairs(bridgeIdentityKey, bridgeValue(id))
		}),
		runtime.WithForwardResponseOption(flushStreamStart),
	)
	if err := registerHTTPHandlers(mux, cc); err != nil {
		return nil, fmt.Errorf("register HTTP handlers: %w", err)
	}
	routes, err := loadRoutes(pb.OpenAPI)
	if err != nil {
		return nil, err
	}
	return headerOnce((&hygiene{routes: routes, limits: l}).wrap(mux)), nil
}

// registerHTTPHandlers serves every service of the API on mux.
func registerHTTPHandlers(mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
	ctx := context.Background()
	return errors.Join(
		pb.RegisterJobServiceHandlerClient(ctx, mux, pb.NewJobServiceClient(cc)),
		pb.RegisterTaskServiceHandlerClient(ctx, mux, pb.NewTaskServiceClient(cc)),
		pb.RegisterPoolServiceHandlerClient(ctx, mux, pb.NewPoolServiceClient(cc)),
		pb.RegisterHostServiceHandlerClient(ctx, mux, pb.NewHostServiceClient(cc)),
		pb.RegisterRegionServiceHandlerClient(ctx, mux, pb.NewRegionServiceClient(cc)),
		pb.RegisterEventServiceHandlerClient(ctx, mux, pb.NewEventServiceClient(cc)),
		pb.RegisterSystemServiceHandlerClient(ctx, mux, pb.NewSystemServiceClient(cc)),
		pb.RegisterFederationServiceHandlerClient(ctx, mux, pb.NewFederationServiceClient(cc)),
		pb.RegisterAuthServiceHandlerClient(ctx, mux, pb.NewAuthServiceClient(cc)),
		pb.RegisterAuditServiceHandlerClient(ctx, mux, pb.NewAuditServiceClient(cc)),
	)
}

// newRoot routes HTTP: the OpenAPI document, health, metrics, the API
// (for callers who authenticate, or anyone on its public routes) and the
// web UI.
func (g *Gateway) newRoot(api http.Handler, guard *guard, public map[string]bool) *http.ServeMux {
	root := http.NewServeMux()
	root.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pb.OpenAPI)
	})
	root.HandleFunc("GET /healthz", g.healthz)
	root.Handle("GET /metrics", g.metricsHandler(guard))
	root.Handle("/v1/", g.authenticated(api, guard, public))
	root.HandleFunc("GET "+ui.AuthConfigPath, g.uiAuthConfig)
	root.Handle(ui.Prefix, ui.Handler())
	root.HandleFunc("GET /{$}", ui.Redirect)
	return root
}

// healthz answers ok while the region is ready, else 503 with the reason.
func (g *Gateway) healthz(w http.ResponseWriter, _ *http.Request) {
	if g.cfg.Ready != nil {
		if err := g.cfg.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = io.WriteString(w, "ok\n")
}

// metricsHandler serves the registry's metrics to callers who
// authenticate (anyone when auth is off).
func (g *Gateway) metricsHandler(guard *guard) http.Handler {
	metrics := promhttp.HandlerFor(g.cfg.Registry, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, err := guard.httpIdentity(r); err != nil || (g.cfg.Auth != nil && id.Method == auth.Anonymous) {
			writeUnauthenticated(w, unauthenticatedReason(err))
			return
		}
		metrics.ServeHTTP(w, r)
	})
}

// authenticated passes a call to api with its caller's identity; a caller
// who does not authenticate reaches only the public routes (all when auth
// is off), and the refusal is recorded.
func (g *Gateway) authenticated(api http.Handler, guard *guard, public map[string]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := guard.httpIdentity(r)
		if err == nil && g.cfg.Auth != nil && id.Method == auth.Anonymous && !public[r.Method+" "+r.URL.Path] {
			err = auth.ErrNoCredentials
		}
		if err != nil {
			guard.recordHTTP(r, id, codes.Unauthenticated, err.Error())
			writeUnauthenticated(w, err.Error())
			return
		}
		api.ServeHTTP(w, r.WithContext(auth.WithIdentity(r.Context(), id)))
	})
}

// frontDoor puts root behind the front door's checks; a refusal is
// recorded.
func (g *Gateway) frontDoor(root http.Handler, guard *guard) http.Handler {
	f := &front{
		names: newServerNames(g.cfg.Addr, g.listener.Addr(), g.cfg.TLS, g.cfg.Names),
		refused: func(r *http.Request, code codes.Code, msg string) {
			guard.recordHTTP(r, auth.Identity{}, code, msg)
		},
	}
	if o := g.oidc(); o != nil {
		f.connect = o.Origins
	}
	return f.wrap(root)
}

// newHTTPServer serves the port: gRPC to the gRPC server, everything else
// through door (front.go says why gRPC does not go through it); HTTP/2
// over TLS or, without TLS, in the clear.
func (g *Gateway) newHTTPServer(door http.Handler) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	if g.cfg.TLS != nil {
		protocols.SetHTTP2(true)
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				g.grpc.ServeHTTP(w, r)
				return
			}
			door.ServeHTTP(w, r)
		}),
		Protocols:         &protocols,
		TLSConfig:         g.cfg.TLS,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(g.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// Addr is the address the gateway listens on.
func (g *Gateway) Addr() string { return g.listener.Addr().String() }

// Serve serves until ctx is cancelled, then shuts down gracefully.
func (g *Gateway) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() {
		if g.cfg.TLS != nil {
			errc <- g.http.ServeTLS(g.listener, "", "")
			return
		}
		errc <- g.http.Serve(g.listener)
	}()
	bridged := make(chan struct{})
	go func() {
		defer close(bridged)
		if err := g.grpc.Serve(g.bridge); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			g.cfg.Logger.Warn("gRPC bridge stopped", "err", err)
		}
	}()
	select {
	case err := <-errc:
		// The HTTP server failed: stop the bridge too, so that nothing
		// outlives Serve.
		_ = g.conn.Close()
		g.grpc.Stop()
		<-bridged
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = g.conn.Close()
	err := g.http.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		err = g.http.Close()
	}
	g.grpc.Stop()
	<-bridged
	if err2 := <-errc; err2 != nil && !errors.Is(err2, http.ErrServerClosed) {
		return err2
	}
	return err
}

// specMarshaler decodes job specs with every problem reported at once (the
// plain protobuf JSON decoder stops at the first); everything else is
// protobuf JSON.
type specMarshaler struct {
	runtime.JSONPb
}

// A body hygiene checked (a *checkedBody) that the decoder refuses is
// decoded leniently instead, the refusal kept for after the call is
// authorised (see bodycheck.go).
func (m *specMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	body, checked := r.(*checkedBody)
	return runtime.DecoderFunc(func(v any) error {
		if !checked {
			return m.decode(r, v)
		}
		return decodeChecked(body, v, func() error { return m.decode(r, v) })
	})
}

func (m *specMarshaler) decode(r io.Reader, v any) error {
	var decode func([]byte) error
	switch spec := v.(type) {
	case **pb.JobSpec:
		decode = func(data []byte) (err error) { *spec, err = pb.DecodeJobSpec(data); return err }
	case **pb.PoolSpec:
		decode = func(data []byte) (err error) { *spec, err = pb.DecodePoolSpec(data); return err }
	case *pb.CreateJobsRequest:
		decode = func(data []byte) error { return pb.DecodeCreateJobsRequest(data, spec) }
	default:
		return m.JSONPb.NewDecoder(r).Decode(v)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxMessageBytes))
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return io.EOF
	}
	return decode(data)
}

func unauthenticatedReason(err error) string {
	if err == nil {
		return auth.ErrNoCredentials.Error()
	}
	return err.Error()
}
