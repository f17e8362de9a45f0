package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Auth turns authentication and authorisation on.
type Auth struct {
	Authenticator *auth.Authenticator
	Policy        *auth.Policies
	// PolicyStore keeps a policy set through the API (SetPolicy), with an
	// editable Policy.
	PolicyStore PolicyStore
}

// PolicyStore keeps the policy of a region set through the API.
type PolicyStore interface {
	SavePolicy(ctx context.Context, sp *auth.StoredPolicy) error
}

// AuditLog keeps the audit records of a region.
type AuditLog interface {
	Append(ctx context.Context, rec *pb.AuditRecord) error
	List(ctx context.Context, req *pb.ListAuditRequest) ([]*pb.AuditRecord, error)
}

// guard authenticates, authorises and audits every call, before the
// services registered by the caller run.
type guard struct {
	auth    *Auth // nil: every call allowed (dev mode)
	audit   AuditLog
	region  string
	jobPool func(ctx context.Context, job string) (string, error)
	moves   RegionMoves
	log     logger
	now     func() time.Time
}

// logger is the part of *slog.Logger the guard uses.
type logger interface {
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
}

// identify returns who makes a gRPC call.
func (g *guard) identify(ctx context.Context) (auth.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	p, _ := peer.FromContext(ctx)
	if p != nil {
		if _, ok := p.Addr.(bridgeAddr); ok {
			// The HTTP side authenticated the request.
			vals := md.Get(bridgeIdentityKey)
			if len(vals) == 0 || vals[0] == auth.Anonymous {
				return auth.AnonymousIdentity, nil
			}
			return auth.DecodeIdentity(vals[0])
		}
	}
	if g.auth == nil {
		return auth.AnonymousIdentity, nil
	}
	creds := auth.Credentials{Authorization: md.Get(auth.AuthorizationKey), Caller: md.Get(auth.CallerKey)}
	if p != nil {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			creds.Chains = ti.State.VerifiedChains
		}
	}
	return g.auth.Authenticator.Authenticate(g.now(), creds)
}

// authorise decides a call of rule on req by id; it returns the target
// and a gRPC error when refused. A call authorised item by item (its rule
// has Items) by a caller whose right turns on the pools also gets the
// refusal of each item the caller may not act on (nil for the others).
func (g *guard) authorise(ctx context.Context, id auth.Identity, method string, req any) (auth.Rule, auth.Target, []error, error) {
	rule, ok := auth.Rules[method]
	if !ok {
		return rule, auth.Target{Resource: "-"}, nil, status.Errorf(codes.PermissionDenied, "%s has no authorisation rule: refused to everyone", method)
	}
	var target auth.Target
	if rule.Target != nil && req != nil {
		target = rule.Target(req)
	}
	if g.auth == nil {
		return rule, target, nil, nil
	}
	if id.IsRegion() && (rule.Action == auth.ActCreateJob || rule.Action == auth.ActStopJob) {
		// The role region allows these only as the federation's moves.
		return rule, target, nil, g.regionMove(ctx, id, rule, method, req)
	}
	policy := g.auth.Policy.At(g.now())
	var pools []string
	if target.Job == "" && target.Pools != nil {
		pools = target.Pools
	}
	d := auth.Decide(policy, id, rule.Action, pools)
	if d.NeedPools && rule.Items != nil && req != nil {
		items := rule.Items(req)
		refusals := make([]error, len(items))
		for i, it := range items {
			if di := auth.Decide(policy, id, rule.Action, it.Pools); !di.Allowed {
				refusals[i] = status.Error(codes.PermissionDenied, di.Reason)
			}
		}
		return rule, target, refusals, nil
	}
	rule, target, err := g.decided(ctx, id, policy, rule, target, d)
	return rule, target, nil, err
}

// decided finishes a decision: it looks the job's pool up when the
// decision turns on it.
func (g *guard) decided(ctx context.Context, id auth.Identity, policy *auth.Policy, rule auth.Rule, target auth.Target, d auth.Decision) (auth.Rule, auth.Target, error) {
	if d.NeedPools {
		if target.Job == "" || g.jobPool == nil {
			return rule, target, status.Errorf(codes.PermissionDenied, "%s: %s needs the pool it acts on", id.Name, rule.Action)
		}
		pool, err := g.jobPool(ctx, target.Job)
		if err != nil {
			return rule, target, err
		}
		d = auth.Decide(policy, id, rule.Action, append([]string{pool}, target.Pools...))
		target.Resource += " (pool " + pool + ")"
	}
	if d.Allowed {
		return rule, target, nil
	}
	if id.Method == auth.Anonymous {
		return rule, target, status.Error(codes.Unauthenticated, d.Reason)
	}
	return rule, target, status.Error(codes.PermissionDenied, d.Reason)
}

// forwardable is ctx as the services see it: the identity in its values,
// and in its metadata the caller a forwarded call must carry, the token
// and the bridge's identity gone.
func forwardable(ctx context.Context, id auth.Identity) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	md = md.Copy()
	delete(md, auth.AuthorizationKey)
	delete(md, bridgeIdentityKey)
	delete(md, auth.CallerKey)
	if id.Method != auth.Anonymous && (!id.IsRegion() || id.ForwardedBy != "") {
		md.Set(auth.CallerKey, id.Encode())
	}
	return auth.WithIdentity(metadata.NewIncomingContext(ctx, md), id)
}

func authnError(err error) error {
	return status.Error(codes.Unauthenticated, err.Error())
}

func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	id, err := g.identify(ctx)
	if err != nil {
		err = authnError(err)
		g.record(ctx, auth.Identity{Name: "-", Method: "unauthenticated"}, info.FullMethod, auth.Rule{}, auth.Target{Resource: "-"}, err)
		return nil, err
	}
	rule, target, refusals, err := g.authorise(ctx, id, info.FullMethod, req)
	if err != nil {
		g.record(ctx, id, info.FullMethod, rule, target, err)
		return nil, err
	}
	call, byItem := itemCalls[info.FullMethod]
	var resp any
	switch {
	case byItem && refusals != nil && bodyErr(ctx) != nil:
		err = batchBodyErr(ctx, refusals)
	case byItem && refusals != nil:
		resp, err = call.allowed(forwardable(ctx, id), req, refusals, h)
	default:
		resp, err = h(forwardable(ctx, id), req)
	}
	if byItem && err == nil {
		target.Outcome = call.outcome(resp)
	}
	g.record(ctx, id, info.FullMethod, rule, target, err)
	return resp, err
}

type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
	// req is the request the handler received (nil until then).
	req any
}

func (s *guardedStream) Context() context.Context { return s.ctx }

func (s *guardedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil && s.req == nil {
		s.req = m
	}
	return err
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	id, err := g.identify(ctx)
	if err != nil {
		return authnError(err)
	}
	// A stream's request is read by the handler: streams are authorised
	// by action alone (a rule that turns on a pool is refused).
	rule, target, _, err := g.authorise(ctx, id, info.FullMethod, nil)
	if err != nil {
		g.record(ctx, id, info.FullMethod, rule, target, err)
		return err
	}
	gs := &guardedStream{ServerStream: ss, ctx: forwardable(ctx, id)}
	err = h(srv, gs)
	if rule.Target != nil && gs.req != nil {
		// The audit record names what the request the handler read acts
		// on.
		target = rule.Target(gs.req)
	}
	g.record(ctx, id, info.FullMethod, rule, target, err)
	return err
}

// recordHTTP audits an HTTP request refused before it reached the API
// (no or bad credentials, a wrong Host or Origin): one that may mutate
// (any verb but GET and HEAD), under its verb and path.
func (g *guard) recordHTTP(r *http.Request, id auth.Identity, code codes.Code, msg string) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return
	}
	if id.Method == "" {
		id = auth.Identity{Name: "-", Method: "unauthenticated"}
	}
	g.write(r.Context(), id, r.Method+" "+r.URL.Path, auth.Rule{}, auth.Target{Resource: "-"}, status.Error(code, msg))
}

// record writes a mutating call to the audit log and the process log.
func (g *guard) record(ctx context.Context, id auth.Identity, method string, rule auth.Rule, target auth.Target, err error) {
	if !auth.Mutating(method) {
		return
	}
	g.write(ctx, id, method, rule, target, err)
}

func (g *guard) write(ctx context.Context, id auth.Identity, method string, rule auth.Rule, target auth.Target, err error) {
	st := status.Convert(err)
	rec := &pb.AuditRecord{
		Time: timestamppb.New(g.now()), Name: id.Name, Method: id.Method, ForwardedBy: id.ForwardedBy,
		Rpc: method, Action: string(rule.Action), Resource: target.Resource, Code: st.Code().String(), Region: g.region,
	}
	if err != nil {
		rec.Message = st.Message()
	} else {
		rec.Message = target.Outcome
	}
	args := []any{"who", id.Name, "authn", id.Method, "rpc", method, "action", rec.Action, "resource", rec.Resource, "code", rec.Code}
	if id.ForwardedBy != "" {
		args = append(args, "forwarded_by", id.ForwardedBy)
	}
	switch {
	case err != nil:
		args = append(args, "err", rec.Message)
	case rec.Message != "":
		args = append(args, "outcome", rec.Message)
	}
	g.log.Info("audit", args...)
	if g.audit == nil {
		return
	}
	if err := g.audit.Append(context.WithoutCancel(ctx), rec); err != nil {
		g.log.Warn("cannot write the audit log", "rpc", method, "err", err)
	}
}

// httpIdentity authenticates an HTTP request: the identity goes to the
// gRPC side in bridgeIdentityKey. Metadata a client could use to pass as
// someone else is removed.
func (g *guard) httpIdentity(r *http.Request) (auth.Identity, error) {
	for k := range r.Header {
		lk := strings.ToLower(k)
		if lk == "grpc-metadata-"+bridgeIdentityKey || lk == "grpc-metadata-"+auth.CallerKey || lk == "grpc-metadata-"+auth.AuthorizationKey {
			r.Header.Del(k)
		}
	}
	if g.auth == nil {
		return auth.AnonymousIdentity, nil
	}
	creds := auth.Credentials{Authorization: r.Header.Values("Authorization")}
	if r.TLS != nil {
		creds.Chains = r.TLS.VerifiedChains
	}
	r.Header.Del("Authorization")
	id, err := g.auth.Authenticator.Authenticate(g.now(), creds)
	if err != nil {
		return id, err
	}
	if id.IsRegion() {
		// Regions call each other over gRPC; over HTTP a region's
		// certificate is nobody in particular.
		return id, errors.New("a region certificate is for region-to-region gRPC calls")
	}
	return id, nil
}

func bridgeValue(id auth.Identity) string {
	if id.Method == auth.Anonymous {
		return auth.Anonymous
	}
	return id.Encode()
}

// writeUnauthenticated answers an HTTP request refused before the API:
// 401 with the gRPC-gateway's error body.
func writeUnauthenticated(w http.ResponseWriter, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("WWW-Authenticate", `Bearer realm="peloton"`)
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, "{\"code\":%d,\"message\":%q}\n", codes.Unauthenticated, reason)
}

// publicRoutes are the HTTP routes ("GET /v1/version") of the RPCs open
// to everyone, read from the OpenAPI document: an anonymous HTTP request
// for any other route is refused before its body is read.
func publicRoutes() (map[string]bool, error) {
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(pb.OpenAPI, &doc); err != nil {
		return nil, fmt.Errorf("OpenAPI document: %w", err)
	}
	public := map[string]bool{}
	for path, ops := range doc.Paths {
		for verb, op := range ops {
			service, method, ok := strings.Cut(op.OperationID, "_")
			if !ok || strings.Contains(path, "{") {
				continue
			}
			if auth.Rules["/peloton.v1."+service+"/"+method].Action == auth.ActPublic {
				public[strings.ToUpper(verb)+" "+path] = true
			}
		}
	}
	return public, nil
}
