package gateway

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// stubShard serves a few RPCs: jobs live in a map, by id, with their pool.
type stubShard struct {
	pb.UnimplementedJobServiceServer
	pb.UnimplementedSystemServiceServer
	mu      sync.Mutex
	pools   map[string]string
	callers []string // the CallerKey a handler saw
	batches []*pb.CreateJobsRequest
}

func (s *stubShard) seen(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callers = append(s.callers, strings.Join(md.Get(auth.CallerKey), ",")+"|"+strings.Join(md.Get("authorization"), ","))
}

func (s *stubShard) CreateJob(ctx context.Context, r *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	s.seen(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.GetSpec().GetName()
	s.pools[id] = r.GetSpec().GetPool()
	return &pb.CreateJobResponse{Job: &pb.Job{Id: id}}, nil
}

// CreateJobs creates a job per spec, named by it; a spec named "bad" is
// refused, as a region refuses an invalid spec.
func (s *stubShard) CreateJobs(ctx context.Context, r *pb.CreateJobsRequest) (*pb.CreateJobsResponse, error) {
	s.seen(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, r)
	positions, _ := r.SpecPositions()
	out := &pb.CreateJobsResponse{}
	for i, spec := range r.GetJobs() {
		if spec.GetName() == "bad" {
			out.Results = append(out.Results, &pb.CreateJobsResult{Code: int32(codes.InvalidArgument), Message: pb.JobPath(positions[i], "name") + ": bad"})
			continue
		}
		s.pools[spec.GetName()] = spec.GetPool()
		out.Results = append(out.Results, &pb.CreateJobsResult{JobId: spec.GetName(), Region: "east"})
	}
	return out, nil
}

func (s *stubShard) StopJob(ctx context.Context, r *pb.StopJobRequest) (*pb.StopJobResponse, error) {
	s.seen(ctx)
	return &pb.StopJobResponse{Job: &pb.Job{Id: r.GetId()}}, nil
}

func (s *stubShard) ListJobs(ctx context.Context, r *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	s.seen(ctx)
	return &pb.ListJobsResponse{}, nil
}

func (s *stubShard) GetVersion(context.Context, *pb.GetVersionRequest) (*pb.GetVersionResponse, error) {
	return &pb.GetVersionResponse{Version: "test"}, nil
}

type memAudit struct {
	mu   sync.Mutex
	recs []*pb.AuditRecord
}

func (a *memAudit) Append(_ context.Context, r *pb.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

func (a *memAudit) List(context.Context, *pb.ListAuditRequest) ([]*pb.AuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*pb.AuditRecord(nil), a.recs...), nil
}

type tokenCreds string

func (t tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (tokenCreds) RequireTransportSecurity() bool { return true }

type fixture struct {
	addr  string
	dir   string
	shard *stubShard
	audit *memAudit
}

func startSecured(t testing.TB) *fixture { return startSecuredWith(t, nil) }

// startSecuredWith starts a secured gateway; edit, when set, changes its
// Auth (e.g. to make the policy editable).
func startSecuredWith(t testing.TB, edit func(a *Auth)) *fixture {
	t.Helper()
	return startSecuredConfig(t, edit, nil)
}

// startSecuredConfig is startSecuredWith that also changes the gateway's
// config with editConfig, when set.
func startSecuredConfig(t testing.TB, edit func(a *Auth), editConfig func(c *Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	if _, err := (auth.LabPKI{Dir: dir, Regions: []string{"east"}, Clients: []string{"carol"}, Now: time.Now()}).Init(); err != nil {
		t.Fatal(err)
	}
	srvTLS, err := auth.ServerTLS(filepath.Join(dir, "east.crt"), filepath.Join(dir, "east.key"), filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := auth.ParsePolicy([]byte(`bindings:
  - {subjects: [root], role: admin}
  - {subjects: [eve], role: viewer}
  - {subjects: [alice, carol], role: pool-owner, pools: [/a]}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, shard: &stubShard{pools: map[string]string{"in-a": "/a/x", "in-b": "/b"}}, audit: &memAudit{}}
	a := &Auth{Authenticator: &auth.Authenticator{Tokens: auth.StaticTokens(map[string]string{
		"tok-root": "root", "tok-eve": "eve", "tok-alice": "alice"})}, Policy: auth.StaticPolicy(policy)}
	if edit != nil {
		edit(a)
	}
	cfg := Config{
		Addr: "127.0.0.1:0", TLS: srvTLS, Region: "east", Audit: f.audit,
		Auth: a,
		JobPool: func(_ context.Context, job string) (string, error) {
			f.shard.mu.Lock()
			defer f.shard.mu.Unlock()
			p, ok := f.shard.pools[job]
			if !ok {
				return "", status.Errorf(codes.NotFound, "job %s not found", job)
			}
			return p, nil
		},
		Register: func(s grpc.ServiceRegistrar) {
			pb.RegisterJobServiceServer(s, f.shard)
			pb.RegisterSystemServiceServer(s, f.shard)
		},
	}
	if editConfig != nil {
		editConfig(&cfg)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.addr = g.Addr()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return f
}

func (f *fixture) clientTLS(t testing.TB, cert string) *tls.Config {
	t.Helper()
	c, k := "", ""
	if cert != "" {
		c, k = filepath.Join(f.dir, cert+".crt"), filepath.Join(f.dir, cert+".key")
	}
	cfg, err := auth.ClientTLS(filepath.Join(f.dir, "ca.crt"), c, k)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (f *fixture) dial(t testing.TB, token, cert string) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(f.clientTLS(t, cert)))}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(tokenCreds(token)))
	}
	c, err := grpc.NewClient(f.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGuardOverGRPC(t *testing.T) {
	f := startSecured(t)
	ctx := context.Background()
	type call func(c *grpc.ClientConn) error
	create := func(pool string) call {
		return func(c *grpc.ClientConn) error {
			_, err := pb.NewJobServiceClient(c).CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "j" + strings.ReplaceAll(pool, "/", "-"), Pool: pool}})
			return err
		}
	}
	stop := func(id string) call {
		return func(c *grpc.ClientConn) error {
			_, err := pb.NewJobServiceClient(c).StopJob(ctx, &pb.StopJobRequest{Id: id})
			return err
		}
	}
	list := func(c *grpc.ClientConn) error {
		_, err := pb.NewJobServiceClient(c).ListJobs(ctx, &pb.ListJobsRequest{})
		return err
	}
	version := func(c *grpc.ClientConn) error {
		_, err := pb.NewSystemServiceClient(c).GetVersion(ctx, &pb.GetVersionRequest{})
		return err
	}
	cases := []struct {
		who, token, cert string
		call             call
		what             string
		want             codes.Code
	}{
		{"nobody", "", "", version, "version", codes.OK},
		{"nobody", "", "", list, "list", codes.Unauthenticated},
		{"nobody", "", "", create("/a/x"), "create /a/x", codes.Unauthenticated},
		{"forged", "tok-forged", "", list, "list", codes.Unauthenticated},
		{"eve", "tok-eve", "", list, "list", codes.OK},
		{"eve", "tok-eve", "", create("/a/x"), "create /a/x", codes.PermissionDenied},
		{"alice", "tok-alice", "", create("/a/x"), "create /a/x", codes.OK},
		{"alice", "tok-alice", "", create("/b"), "create /b", codes.PermissionDenied},
		{"alice", "tok-alice", "", stop("in-a"), "stop a job in /a/x", codes.OK},
		{"alice", "tok-alice", "", stop("in-b"), "stop a job in /b", codes.PermissionDenied},
		{"alice", "tok-alice", "", stop("none"), "stop a job that is not", codes.NotFound},
		{"carol (certificate)", "", "carol", create("/a/y"), "create /a/y", codes.OK},
		{"carol (certificate)", "", "carol", create("/b"), "create /b", codes.PermissionDenied},
		{"root", "tok-root", "", create("/b"), "create /b", codes.OK},
		{"root", "tok-root", "", stop("in-b"), "stop a job in /b", codes.OK},
	}
	for _, c := range cases {
		err := c.call(f.dial(t, c.token, c.cert))
		if got := status.Code(err); got != c.want {
			t.Errorf("%s: %s: %v, want %v", c.who, c.what, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "tok-") {
			t.Errorf("%s: the error shows a token: %v", c.who, err)
		}
	}
	// The handler sees the caller to forward for, never the token.
	for _, seen := range f.shard.callers {
		if strings.Contains(seen, "tok-") || !strings.HasPrefix(seen, "token:") && !strings.HasPrefix(seen, "certificate:") {
			t.Errorf("a handler saw metadata %q: want the caller, no token", seen)
		}
	}
	// A user may not assert a caller.
	md := metadata.Pairs(auth.CallerKey, "token:root")
	_, err := pb.NewJobServiceClient(f.dial(t, "", "carol")).ListJobs(metadata.NewOutgoingContext(ctx, md), &pb.ListJobsRequest{})
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "only a region") {
		t.Errorf("a user asserting root: %v", err)
	}
	// A region may: east's certificate forwarding for alice acts as alice.
	east := f.dial(t, "", "east")
	md = metadata.Pairs(auth.CallerKey, auth.Identity{Name: "alice", Method: auth.ByToken}.Encode())
	if _, err := pb.NewJobServiceClient(east).CreateJob(metadata.NewOutgoingContext(ctx, md), &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "fwd", Pool: "/b"}}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("east forwarding alice's create in /b: %v, want PermissionDenied", err)
	}
	// On its own a region may not edit pools or drain hosts, but may read.
	if err := list(east); err != nil {
		t.Errorf("east listing: %v", err)
	}
	who, err := pb.NewAuthServiceClient(f.dial(t, "tok-alice", "")).WhoAmI(ctx, &pb.WhoAmIRequest{})
	if err != nil || who.GetName() != "alice" || who.GetMethod() != auth.ByToken || len(who.GetRoles()) != 1 || who.GetRoles()[0] != "pool-owner /a" {
		t.Errorf("whoami: %v %v", who, err)
	}
	can, err := pb.NewAuthServiceClient(f.dial(t, "tok-alice", "")).CanI(ctx, &pb.CanIRequest{Action: "create-job", Pool: "/b"})
	if err != nil || can.GetAllowed() {
		t.Errorf("can-i create-job /b: %v %v", can, err)
	}
	can, err = pb.NewAuthServiceClient(f.dial(t, "tok-alice", "")).CanI(ctx, &pb.CanIRequest{Action: "stop-job", JobId: "in-a"})
	if err != nil || !can.GetAllowed() {
		t.Errorf("can-i stop-job in-a: %v %v", can, err)
	}
	// Every mutation is in the audit log, with who and how it ended.
	recs, _ := f.audit.List(ctx, nil)
	var lines []string
	for _, r := range recs {
		lines = append(lines, r.GetName()+" "+r.GetAction()+" "+r.GetResource()+" "+r.GetCode())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"anonymous create-job pool /a/x, job name j-a-x Unauthenticated",
		"eve create-job pool /a/x, job name j-a-x PermissionDenied",
		"alice create-job pool /a/x, job name j-a-x OK",
		"alice stop-job job in-b (pool /b) PermissionDenied",
		"carol create-job pool /a/y, job name j-a-y OK",
		"root stop-job job in-b OK",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log lacks %q:\n%s", want, got)
		}
	}
	for _, r := range recs {
		if r.GetAction() == "" && r.GetMethod() != "unauthenticated" {
			t.Errorf("audit record without action: %v", r)
		}
		if r.GetRpc() == pb.JobService_ListJobs_FullMethodName {
			t.Errorf("a read in the audit log: %v", r)
		}
	}
}

func TestGuardOverHTTP(t *testing.T) {
	f := startSecured(t)
	do := func(cert, token, method, path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		code, _, b := f.doHTTP(t, cert, token, method, path, body, hdr)
		return code, b
	}

	for _, c := range []struct {
		cert, token, method, path, body string
		hdr                             map[string]string
		want                            int
	}{
		{"", "", "GET", "/healthz", "", nil, 200},
		{"", "", "GET", "/v1/version", "", nil, 200},
		{"", "", "GET", "/v1/jobs", "", nil, 401},
		{"", "", "GET", "/metrics", "", nil, 401},
		{"", "tok-eve", "GET", "/metrics", "", nil, 200},
		{"", "garbage token", "GET", "/v1/jobs", "", nil, 401},
		{"", "tok-unknown", "GET", "/v1/jobs", "", nil, 401},
		{"", "tok-eve", "GET", "/v1/jobs", "", nil, 200},
		{"", "tok-eve", "POST", "/v1/jobs", `{"name":"x","pool":"/a/x","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, nil, 403},
		{"", "tok-alice", "POST", "/v1/jobs", `{"name":"x","pool":"/a/x","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, nil, 200},
		{"", "tok-alice", "POST", "/v1/jobs", `{"name":"x","pool":"/b","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, nil, 403},
		{"carol", "", "POST", "/v1/jobs", `{"name":"y","pool":"/a/x","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, nil, 200},
		{"carol", "", "POST", "/v1/jobs/in-b/stop", `{}`, nil, 403},
		// Metadata a client sends to pass as someone else is dropped.
		{"", "tok-eve", "POST", "/v1/jobs", `{"name":"x","pool":"/b","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, map[string]string{"Grpc-Metadata-Peloton-Gateway-Identity": "token:root", "Grpc-Metadata-Peloton-Caller": "token:root"}, 403},
		{"", "", "POST", "/v1/jobs", `{"name":"x","pool":"/b","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`, map[string]string{"Grpc-Metadata-Peloton-Gateway-Identity": "token:root"}, 401},
		// An oversized header is refused before anything reads it.
		{"", "tok-eve", "GET", "/v1/jobs", "", map[string]string{"X-Big": strings.Repeat("a", 64<<10)}, 431},
	} {
		code, body := do(c.cert, c.token, c.method, c.path, c.body, c.hdr)
		if code != c.want {
			t.Errorf("%s %s (cert %q, token %q): %d %s, want %d", c.method, c.path, c.cert, c.token, code, body, c.want)
		}
		if code == 401 && (strings.Count(strings.TrimSpace(body), "\n") > 0 || strings.Contains(body, "tok-")) {
			t.Errorf("%s %s: a 401 body must be one line without the token: %q", c.method, c.path, body)
		}
	}
	code, body := do("carol", "", "GET", "/v1/auth/whoami", "", nil)
	if code != 200 || !strings.Contains(body, `"name":"carol"`) || !strings.Contains(body, `"method":"certificate"`) {
		t.Errorf("whoami over HTTP with carol's certificate: %d %s", code, body)
	}
}
