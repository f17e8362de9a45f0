package security

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
)

const matrixPolicy = `bindings:
  - {subjects: [root], role: admin}
  - {subjects: [ops], role: operator}
  - {subjects: [eve], role: viewer}
  - {subjects: [alice], role: pool-owner, pools: [/a]}
`

// route is an RPC's HTTP route, from the OpenAPI document.
type route struct {
	verb, path string
	// body is the request field sent as the body ("body": all of it).
	body string
}

func routes(t *testing.T) map[string]route {
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(pb.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]route{}
	for path, ops := range doc.Paths {
		for verb, op := range ops {
			service, method, _ := strings.Cut(op.OperationID, "_")
			r := route{verb: strings.ToUpper(verb), path: path}
			for _, p := range op.Parameters {
				if p.In == "body" {
					r.body = p.Name
				}
			}
			out["/peloton.v1."+service+"/"+method] = r
		}
	}
	return out
}

// samples are the requests the matrix sends, as protobuf JSON, by method
// name; {A} is a job in /a/x, {B} one in /b. A method without a sample
// is called with an empty request.
var samples = map[string]string{
	"CreateJob": `{"spec":{"name":"m","pool":"/a/x","instances":1,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}}`,
	"CreateJobs": `{"requestId":"matrix","jobs":[{"name":"m1","pool":"/a/x","instances":1,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}},` +
		`{"name":"m2","pool":"/b","instances":1,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}]}`,
	"GetJob":            `{"id":"{A}"}`,
	"StopJob":           `{"id":"{A}"}`,
	"DeleteJob":         `{"id":"{A}"}`,
	"SuspendJob":        `{"id":"{A}"}`,
	"ResumeJob":         `{"id":"{A}"}`,
	"RunJob":            `{"id":"{A}"}`,
	"UpdateJob":         `{"jobId":"{A}","spec":{"name":"a","pool":"/a/x","instances":1,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}}`,
	"GetUpdate":         `{"updateId":"{A}.2"}`,
	"ListUpdates":       `{"jobId":"{A}"}`,
	"AbortUpdate":       `{"updateId":"{A}.2"}`,
	"PauseUpdate":       `{"updateId":"{A}.2"}`,
	"ResumeUpdate":      `{"updateId":"{A}.2"}`,
	"RollbackUpdate":    `{"updateId":"{A}.2"}`,
	"PromoteUpdate":     `{"updateId":"{A}.2"}`,
	"GetJobConfig":      `{"jobId":"{A}"}`,
	"ListEvents":        `{"jobId":"{A}"}`,
	"ListTasks":         `{"jobId":"{A}"}`,
	"GetTask":           `{"jobId":"{A}","instance":0}`,
	"GetTaskLogs":       `{"jobId":"{A}","instance":0}`,
	"StopTasks":         `{"jobId":"{A}","instances":[0]}`,
	"RestartTasks":      `{"jobId":"{A}","instances":[0]}`,
	"CreatePool":        `{"spec":{"path":"/a/m"}}`,
	"UpdatePool":        `{"spec":{"path":"/a/x"}}`,
	"DeletePool":        `{"path":"/a/none"}`,
	"GetPool":           `{"path":"/a"}`,
	"GetPoolHistory":    `{"path":"/a"}`,
	"DrainHost":         `{"hostId":"sim/none"}`,
	"UndrainHost":       `{"hostId":"sim/none"}`,
	"MarkHostDown":      `{"hostId":"sim/none"}`,
	"SetHostPool":       `{"hostId":"sim/none","hostPool":"batch"}`,
	"GetCluster":        `{"cluster":"sim"}`,
	"DrainCluster":      `{"cluster":"sim"}`,
	"UndrainCluster":    `{"cluster":"sim"}`,
	"GetMigration":      `{"migrationId":"none"}`,
	"PauseMigration":    `{"migrationId":"none"}`,
	"ResumeMigration":   `{"migrationId":"none"}`,
	"AbortMigration":    `{"migrationId":"none"}`,
	"RollbackMigration": `{"migrationId":"none"}`,
	"PutReplica":        `{"replica":{"job":{"id":"none"}}}`,
	"StartDrill":        `{"region":"nowhere"}`,
	"GetDrill":          `{"id":"none"}`,
	"IsolateRegion":     `{"region":"nowhere"}`,
	"FailBack":          `{"region":"nowhere"}`,
	"CanI":              `{"action":"read"}`,
}

func request(t *testing.T, m protoreflect.MethodDescriptor, jobs map[string]string) proto.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
	if err != nil {
		t.Fatal(err)
	}
	msg := mt.New().Interface()
	js := samples[string(m.Name())]
	for k, v := range jobs {
		js = strings.ReplaceAll(js, "{"+k+"}", v)
	}
	if js != "" {
		if err := protojson.Unmarshal([]byte(js), msg); err != nil {
			t.Fatalf("sample of %s: %v", m.Name(), err)
		}
	}
	return msg
}

// outcome of a call: "ok" (authorised, whatever the answer), "401" or
// "403".
func grpcOutcome(err error) string {
	switch status.Code(err) {
	case codes.Unauthenticated:
		return "401"
	case codes.PermissionDenied:
		return "403"
	}
	return "ok"
}

func httpOutcome(code int) string {
	switch code {
	case 401, 403:
		return fmt.Sprint(code)
	}
	return "ok"
}

func callGRPC(ctx context.Context, cc *grpc.ClientConn, m protoreflect.MethodDescriptor, req proto.Message) error {
	name := auth.FullMethodName(m)
	if m.IsStreamingServer() {
		sctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		s, err := cc.NewStream(sctx, &grpc.StreamDesc{ServerStreams: true}, name)
		if err != nil {
			return err
		}
		if err := s.SendMsg(req); err != nil {
			return err
		}
		_ = s.CloseSend()
		out, _ := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
		err = s.RecvMsg(out.New().Interface())
		if status.Code(err) == codes.DeadlineExceeded {
			return nil // open, waiting for events
		}
		return err
	}
	out, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return cc.Invoke(cctx, name, req, out.New().Interface())
}

// httpCall sends req over the method's HTTP route.
func httpCall(t *testing.T, r *region, c caller, rt route, req proto.Message) int {
	path := rt.path
	msg := req.ProtoReflect()
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(path[i:], '}') + i
		name := path[i+1 : j]
		fd := msg.Descriptor().Fields().ByJSONName(name)
		val := ""
		if fd != nil {
			val = fmt.Sprint(msg.Get(fd).Interface())
		}
		val = strings.TrimPrefix(val, "/")
		path = path[:i] + strings.ReplaceAll(url.PathEscape(val), "%2F", "/") + path[j+1:]
	}
	body := ""
	switch rt.body {
	case "":
	case "body":
		b, _ := protojson.Marshal(req)
		body = string(b)
	default:
		fd := msg.Descriptor().Fields().ByJSONName(rt.body)
		b, _ := protojson.Marshal(msg.Get(fd).Message().Interface())
		body = string(b)
	}
	code, _ := r.http(c, rt.verb, path, body)
	return code
}

// Every RPC of the API, found from the protobuf descriptors, called
// through gRPC and HTTP/JSON on a TLS-enabled `peloton server` by a caller
// of each role: without credentials all but the version are refused; a
// viewer is refused every mutation; a pool owner of /a creates jobs in
// /a/x and not in /b; an admin is refused nothing. Every mutation is in
// the audit log under its caller's name.
func TestEveryRPCByRole(t *testing.T) {
	pki, toks := lab(t, []string{"east"}, []string{"alice"}, []string{"root", "ops", "eve"}, matrixPolicy)
	east := startRegion(t, pki, "east", "127.0.0.1:"+fmt.Sprint(freePort(t)), "")
	ctx := context.Background()
	root := caller{name: "root", token: toks["root"]}
	admin := east.conn(root)

	// Pools and a job in /a/x and one in /b.
	for _, p := range []string{"/a", "/a/x", "/b"} {
		if _, err := pb.NewPoolServiceClient(admin).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: p}}); err != nil {
			t.Fatalf("create pool %s: %v", p, err)
		}
	}
	jobs := map[string]string{}
	for k, pool := range map[string]string{"A": "/a/x", "B": "/b"} {
		resp, err := pb.NewJobServiceClient(admin).CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "job-" + k, Pool: pool, Instances: 1,
			Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 1, MemMb: 10}}}})
		if err != nil {
			t.Fatalf("create job in %s: %v", pool, err)
		}
		jobs[k] = resp.GetJob().GetId()
	}

	callers := []caller{
		{name: "(none)"},
		{name: "eve", token: toks["eve"]},
		{name: "alice", cert: "alice"},
		{name: "ops", token: toks["ops"]},
		root,
	}
	rts := routes(t)
	methods := auth.Methods()
	sort.Slice(methods, func(i, j int) bool { return auth.FullMethodName(methods[i]) < auth.FullMethodName(methods[j]) })
	type cell struct{ grpc, http string }
	matrix := map[string]map[string]cell{} // method → caller → outcome
	mutations := map[string]int{}          // caller → mutating calls made
	tried, refused := 0, 0
	for _, c := range callers {
		cc := east.conn(c)
		for _, m := range methods {
			name := auth.FullMethodName(m)
			req := request(t, m, jobs)
			g := grpcOutcome(callGRPC(ctx, cc, m, req))
			rt, ok := rts[name]
			if ok && strings.Contains(rt.path, "{") && samples[string(m.Name())] == "" {
				// An empty request leaves the path's parameters empty: the
				// route would not match and the call would prove nothing.
				t.Errorf("%s has path parameters (%s) and no sample request: add one", name, rt.path)
			}
			if !ok {
				t.Errorf("%s has no HTTP route in the OpenAPI document", name)
			}
			h := httpOutcome(httpCall(t, east, c, rt, req))
			if matrix[name] == nil {
				matrix[name] = map[string]cell{}
			}
			matrix[name][c.name] = cell{g, h}
			tried += 2
			for _, o := range []string{g, h} {
				if o != "ok" {
					refused++
				}
			}
			if auth.Mutating(name) {
				mutations[c.name] += 2
			}
			public := name == pb.SystemService_GetVersion_FullMethodName
			for _, o := range []struct{ transport, got string }{{"gRPC", g}, {"HTTP", h}} {
				switch {
				case c.name == "(none)" && public && o.got != "ok":
					t.Errorf("%s over %s without credentials: %s, want it open", name, o.transport, o.got)
				case c.name == "(none)" && !public && o.got != "401":
					t.Errorf("%s over %s without credentials: %s, want 401", name, o.transport, o.got)
				case c.name == "eve" && auth.Mutating(name) && o.got != "403":
					t.Errorf("%s over %s by a viewer: %s, want 403", name, o.transport, o.got)
				case c.name == "root" && o.got != "ok":
					t.Errorf("%s over %s by an admin: %s, want it allowed", name, o.transport, o.got)
				}
			}
		}
	}

	// The pool owner of /a: jobs in /a/x, not in /b; not someone else's.
	alice := caller{name: "alice", cert: "alice"}
	ac := east.conn(alice)
	spec := func(pool string) *pb.JobSpec {
		return &pb.JobSpec{Name: "owned", Pool: pool, Instances: 1, Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 1, MemMb: 10}}}
	}
	for _, c := range []struct {
		what string
		call func() error
		want string
	}{
		{"create a job in /a/x", func() error {
			_, err := pb.NewJobServiceClient(ac).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("/a/x")})
			return err
		}, "ok"},
		{"create a job in /b", func() error {
			_, err := pb.NewJobServiceClient(ac).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("/b")})
			return err
		}, "403"},
		{"create jobs in /a/x and /b in one call: the one in /b is refused on its own", func() error {
			resp, err := pb.NewJobServiceClient(ac).CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{spec("/a/x"), spec("/b")}})
			if err != nil {
				return err
			}
			rs := resp.GetResults()
			if len(rs) != 2 || rs[0].GetJobId() == "" || codes.Code(rs[1].GetCode()) != codes.PermissionDenied || !strings.HasPrefix(rs[1].GetMessage(), "jobs[1]: ") {
				return fmt.Errorf("results %v", rs)
			}
			return nil
		}, "ok"},
		{"stop the job in /b", func() error {
			_, err := pb.NewJobServiceClient(ac).StopJob(ctx, &pb.StopJobRequest{Id: jobs["B"]})
			return err
		}, "403"},
		{"move the job of /b to /a/x", func() error {
			_, err := pb.NewJobServiceClient(ac).UpdateJob(ctx, &pb.UpdateJobRequest{JobId: jobs["B"], Spec: spec("/a/x")})
			return err
		}, "403"},
		{"edit the pool /a itself", func() error {
			_, err := pb.NewPoolServiceClient(ac).UpdatePool(ctx, &pb.UpdatePoolRequest{Spec: &pb.PoolSpec{Path: "/a"}})
			return err
		}, "403"},
	} {
		if got := grpcOutcome(c.call()); got != c.want {
			t.Errorf("alice (pool-owner /a): %s: %s, want %s", c.what, got, c.want)
		}
		mutations["alice"]++
	}
	for _, c := range []struct {
		pool string
		want int
	}{{"/a/x", 200}, {"/b", 403}} {
		b, _ := protojson.Marshal(spec(c.pool))
		if code, body := east.http(alice, "POST", "/v1/jobs", string(b)); code != c.want {
			t.Errorf("alice over HTTP: create a job in %s: %d %s, want %d", c.pool, code, body, c.want)
		}
		mutations["alice"]++
	}

	// Bad credentials: one-line 401s, never a 5xx.
	for _, c := range []struct {
		what, header string
	}{
		{"unknown token", "Bearer pel_unknown"},
		{"malformed token", "Bearer !!!"},
		{"not a bearer token", "Basic cm9vdDpyb290"},
		{"oversized token", "Bearer " + strings.Repeat("a", 4096)},
	} {
		cctx := metadata.AppendToOutgoingContext(ctx, "authorization", c.header)
		_, err := pb.NewJobServiceClient(east.conn(caller{})).ListJobs(cctx, &pb.ListJobsRequest{})
		if status.Code(err) != codes.Unauthenticated || strings.Contains(status.Convert(err).Message(), "\n") {
			t.Errorf("%s over gRPC: %v, want a one-line Unauthenticated", c.what, err)
		}
	}
	big := metadata.AppendToOutgoingContext(ctx, "x-big", strings.Repeat("a", 64<<10))
	_, err := pb.NewJobServiceClient(admin).ListJobs(big, &pb.ListJobsRequest{})
	// The server announces its header limit; the client refuses to send
	// more (a client that ignores it gets 431).
	if err == nil || !strings.Contains(err.Error(), "maximum size") {
		t.Errorf("an oversized header: %v, want it refused for its size", err)
	}
	if _, err := pb.NewJobServiceClient(admin).ListJobs(ctx, &pb.ListJobsRequest{}); err != nil {
		t.Errorf("after an oversized header the server still answers: %v", err)
	}

	// The matrix.
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-48s", "RPC (gRPC/HTTP)")
	for _, c := range callers {
		fmt.Fprintf(&sb, " %-9s", c.name)
	}
	sb.WriteString("\n")
	for _, m := range methods {
		name := auth.FullMethodName(m)
		mark := " "
		if auth.Mutating(name) {
			mark = "*"
		}
		fmt.Fprintf(&sb, "%s%-47s", mark, strings.TrimPrefix(name, "/peloton.v1."))
		for _, c := range callers {
			o := matrix[name][c.name]
			fmt.Fprintf(&sb, " %-9s", o.grpc+"/"+o.http)
		}
		sb.WriteString("\n")
	}
	t.Logf("%d RPCs (* mutating) × %d callers × 2 transports: %d calls tried, %d refused\n%s", len(methods), len(callers), tried, refused, sb.String())

	// Every mutation is in the audit log under its caller's name.
	resp, err := pb.NewAuditServiceClient(admin).ListAudit(ctx, &pb.ListAuditRequest{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range resp.GetRecords() {
		got[r.GetName()]++
	}
	want := map[string]int{
		"anonymous": mutations["(none)"], "eve": mutations["eve"], "alice": mutations["alice"], "ops": mutations["ops"],
		"root": mutations["root"] + 5, // the setup: three pools, two jobs
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("audit log: %d records of %s, want %d", got[name], name, n)
		}
	}
	t.Logf("audit log: %d records: %v", len(resp.GetRecords()), got)
	// No token in the log.
	for name, tok := range toks {
		if strings.Contains(east.proc.Output(), tok) {
			t.Errorf("the server's log holds %s's token", name)
		}
	}
}
