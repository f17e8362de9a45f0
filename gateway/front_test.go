package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestServerNames(t *testing.T) {
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5390}
	public := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5390}
	cases := []struct {
		name       string
		configured string
		bound      net.Addr
		names      []string
		host       string
		want       bool
	}{
		{"loopback: localhost", "127.0.0.1:5390", loop, nil, "localhost", true},
		{"loopback: its address", "127.0.0.1:5390", loop, nil, "127.0.0.1", true},
		{"loopback: ::1", "127.0.0.1:5390", loop, nil, "::1", true},
		{"loopback: in capitals", "127.0.0.1:5390", loop, nil, "LOCALHOST", true},
		{"loopback: trailing dot", "127.0.0.1:5390", loop, nil, "localhost.", true},
		{"loopback: a rebound name", "127.0.0.1:5390", loop, nil, "evil.example", false},
		{"loopback: another address", "127.0.0.1:5390", loop, nil, "127.0.0.2", false},
		{"configured host name", "peloton.internal:5390", public, nil, "peloton.internal", true},
		{"public: its address", "10.1.2.3:5390", public, nil, "10.1.2.3", true},
		{"public: not localhost", "10.1.2.3:5390", public, nil, "localhost", false},
		{"a configured name", "10.1.2.3:5390", public, []string{"Peloton.Example.com"}, "peloton.example.com", true},
		{"a configured wildcard", "10.1.2.3:5390", public, []string{"*.example.com"}, "east.example.com", true},
		{"a wildcard is one label", "10.1.2.3:5390", public, []string{"*.example.com"}, "a.b.example.com", false},
		{"a wildcard is not its domain", "10.1.2.3:5390", public, []string{"*.example.com"}, "example.com", false},
		{"every interface: loopback", ":5390", &net.TCPAddr{IP: net.IPv4zero, Port: 5390}, nil, "localhost", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := newServerNames(c.configured, c.bound, nil, c.names).has(c.host); got != c.want {
				t.Errorf("has(%q) = %v, want %v", c.host, got, c.want)
			}
		})
	}
}

func TestOriginProblem(t *testing.T) {
	f := &front{names: newServerNames("127.0.0.1:5390", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5390}, nil, nil)}
	cases := []struct {
		name, method, host string
		tls                bool
		hdr                map[string]string
		refused            bool
	}{
		{"no Origin (CLI, curl)", "POST", "127.0.0.1:5390", false, nil, false},
		{"own origin", "POST", "127.0.0.1:5390", false, map[string]string{"Origin": "http://127.0.0.1:5390"}, false},
		{"own origin by name", "POST", "localhost:5390", false, map[string]string{"Origin": "http://localhost:5390"}, false},
		{"own origin over TLS", "POST", "localhost:5390", true, map[string]string{"Origin": "https://localhost:5390"}, false},
		{"another site", "POST", "127.0.0.1:5390", false, map[string]string{"Origin": "http://evil.example"}, true},
		{"another port of this host", "POST", "127.0.0.1:5390", false, map[string]string{"Origin": "http://127.0.0.1:3000"}, true},
		{"another name of this host", "POST", "127.0.0.1:5390", false, map[string]string{"Origin": "http://localhost:5390"}, true},
		{"another scheme", "POST", "127.0.0.1:5390", false, map[string]string{"Origin": "https://127.0.0.1:5390"}, true},
		{"a sandboxed page", "DELETE", "127.0.0.1:5390", false, map[string]string{"Origin": "null"}, true},
		{"cross-site without Origin", "PUT", "127.0.0.1:5390", false, map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"same-site is another origin", "POST", "127.0.0.1:5390", false, map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{"same-origin", "POST", "127.0.0.1:5390", false, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:5390"}, false},
		{"a read from anywhere", "GET", "127.0.0.1:5390", false, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := http.NewRequest(c.method, "http://"+c.host+"/v1/jobs", nil)
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range c.hdr {
				r.Header.Set(k, v)
			}
			if msg := f.originProblem(r); (msg != "") != c.refused {
				t.Errorf("originProblem = %q, want refused %v", msg, c.refused)
			}
		})
	}
}

func TestBodyTypeProblem(t *testing.T) {
	cases := []struct {
		ct, body string
		want     string // "" when read
	}{
		{"application/json", `{}`, ""},
		{"application/json; charset=utf-8", `{}`, ""},
		{"Application/JSON; charset=UTF-8", `{}`, ""},
		{"", "", ""},
		{"", `{}`, "no Content-Type header"},
		{"application/x-www-form-urlencoded", `{}`, "application/x-www-form-urlencoded"},
		{"text/plain", "", "text/plain"},
		{"multipart/form-data; boundary=x", "--x--", "multipart/form-data"},
		{"application/json; charset=iso-8859-1", `{}`, "charset iso-8859-1"},
		{"application/vnd.api+json", `{}`, "application/vnd.api+json"},
		{"application/json; charset", `{}`, "cannot be read"},
	}
	for _, c := range cases {
		r, _ := http.NewRequest("POST", "http://localhost/v1/jobs", strings.NewReader(c.body))
		if c.ct != "" {
			r.Header.Set("Content-Type", c.ct)
		}
		got := bodyTypeProblem(r)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Content-Type %q, body %q: %q, want %q", c.ct, c.body, got, c.want)
		}
	}
}

// doHTTP sends a request to the secured fixture with a client
// certificate (by name; "" for none), a bearer token and headers (Host
// sets the request's Host).
func (f *fixture) doHTTP(t *testing.T, cert, token, method, path, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(t, cert)}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest(method, "https://"+f.addr+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestFrontDoor(t *testing.T) {
	f := startSecured(t)
	_, port, _ := net.SplitHostPort(f.addr)
	job := `{"name":"door","pool":"/a/x","instances":1,"task":{"command":"true","resources":{"cpu":1,"memMb":10}}}`
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
		msg                      string
	}{
		{"own Host", "GET", "/v1/version", "", nil, 200, ""},
		{"a rebound name", "GET", "/v1/version", "", map[string]string{"Host": "evil.example:" + port}, 421, "evil.example:" + port + `\" is not a name of this server (127.0.0.1, ::1, east, localhost)`},
		{"a rebound name on the UI", "GET", "/ui/", "", map[string]string{"Host": "evil.example:" + port}, 421, "not a name of this server"},
		{"a name of the certificate", "GET", "/v1/version", "", map[string]string{"Host": "east:" + port}, 200, ""},
		{"a page of another site", "POST", "/v1/jobs", job, map[string]string{"Origin": "http://evil.example"}, 403, `Origin \"http://evil.example\" is not this server's own`},
		{"a form of another site", "POST", "/v1/jobs", "", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403, "is not this server's own"},
		{"a form without Origin", "POST", "/v1/jobs", "name=x", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "Content-Type"},
		{"the UI's own page", "POST", "/v1/jobs", job, map[string]string{"Origin": "https://" + f.addr, "Sec-Fetch-Site": "same-origin"}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := f.doHTTP(t, "", "tok-alice", c.method, c.path, c.body, c.hdr)
			if code != c.want || !strings.Contains(body, c.msg) {
				t.Fatalf("%d %s, want %d with %q", code, body, c.want, c.msg)
			}
		})
	}
	// The refusals of the Origin are audited, before authentication.
	recs, _ := f.audit.List(context.Background(), nil)
	n := 0
	for _, r := range recs {
		if r.GetRpc() == "POST /v1/jobs" && r.GetCode() == codes.PermissionDenied.String() && strings.Contains(r.GetMessage(), "evil.example") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d audit records of refused origins, want 2: %v", n, recs)
	}
	// The UI's headers, and nosniff on the API.
	for _, path := range []string{"/ui/", "/ui/jobs/x", "/"} {
		_, h, _ := f.doHTTP(t, "", "", "GET", path, "", nil)
		for k, want := range map[string]string{"Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY",
			"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
			if !strings.Contains(h.Get(k), want) {
				t.Errorf("GET %s: %s %q, want %q", path, k, h.Get(k), want)
			}
		}
	}
	if _, h, _ := f.doHTTP(t, "", "", "GET", "/v1/version", "", nil); h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /v1/version: X-Content-Type-Options %q", h.Get("X-Content-Type-Options"))
	}
}

// Over HTTP as over gRPC: 401 before 403 before 400, the 403 and the
// 400 of an authorised call audited.
func TestAuthorisedBeforeTheBodyIsJudged(t *testing.T) {
	f := startSecured(t)
	bad := func(pool string) string {
		return `{"name":"bad","pool":"` + pool + `","instances":1,"colour":"red","task":{"command":"true","resources":{"cpu":-1,"memMb":10}}}`
	}
	cases := []struct {
		name, token, method, path, body string
		want                            int
		msg                             string
	}{
		{"nobody, a bad spec", "", "POST", "/v1/jobs", bad("/b"), 401, "no credentials"},
		{"nobody, not JSON", "", "POST", "/v1/jobs", "{", 401, "no credentials"},
		{"a viewer, a bad spec", "tok-eve", "POST", "/v1/jobs", bad("/a/x"), 403, "eve"},
		{"alice, a bad spec in /b", "tok-alice", "POST", "/v1/jobs", bad("/b"), 403, "may not create-job on pool /b"},
		{"alice, a duplicate key in /b", "tok-alice", "POST", "/v1/jobs", `{"name":"d","pool":"/b","pool":"/b"}`, 403, "pool /b"},
		{"alice, a bad spec in /a/x", "tok-alice", "POST", "/v1/jobs", bad("/a/x"), 400, "colour: unknown field"},
		{"alice, not JSON", "tok-alice", "POST", "/v1/jobs", `{"pool":`, 400, "unexpected end of JSON"},
		{"alice, a job that is not (NotFound is 404)", "tok-alice", "POST", "/v1/jobs/none/stop", `{}`, 404, "job none not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := f.doHTTP(t, "", c.token, c.method, c.path, c.body, nil)
			if code != c.want || !strings.Contains(body, c.msg) {
				t.Fatalf("%d %s, want %d with %q", code, body, c.want, c.msg)
			}
		})
	}
	recs, _ := f.audit.List(context.Background(), nil)
	var lines []string
	for _, r := range recs {
		lines = append(lines, r.GetName()+" "+r.GetAction()+" "+r.GetResource()+" "+r.GetCode())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"alice create-job pool /b, job name bad PermissionDenied",
		"alice create-job pool /a/x, job name bad InvalidArgument",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log lacks %q:\n%s", want, got)
		}
	}
	// Nothing with a bad body reached the shard.
	f.shard.mu.Lock()
	defer f.shard.mu.Unlock()
	if _, ok := f.shard.pools["bad"]; ok {
		t.Error("a job with a bad spec was created")
	}
}

// moveStub allows the moves named in it.
type moveStub struct {
	creates map[string]bool // by job name
	stops   map[string]bool // by job id
}

var errNotStubbed = errors.New("not a move of the stub")

func (m moveStub) CheckRegionCreate(_ context.Context, region string, req *pb.CreateJobRequest) error {
	if region == "east" && m.creates[req.GetSpec().GetName()] {
		return nil
	}
	return errNotStubbed
}

func (m moveStub) CheckRegionStop(_ context.Context, region, job string) error {
	if job == "gone" {
		return status.Error(codes.NotFound, "job gone not found")
	}
	if region == "east" && m.stops[job] {
		return nil
	}
	return errNotStubbed
}

func TestRegionCreatesAndStopsOnlyItsMoves(t *testing.T) {
	f := startSecuredConfig(t, nil, func(c *Config) {
		c.RegionMoves = moveStub{creates: map[string]bool{"relocated": true}, stops: map[string]bool{"in-a": true}}
	})
	east := f.dial(t, "", "east")
	jobs := pb.NewJobServiceClient(east)
	ctx := context.Background()
	create := func(name, pool string) error {
		_, err := jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: name, Pool: pool}})
		return err
	}
	cases := []struct {
		what string
		err  error
		want codes.Code
	}{
		{"a relocation", create("relocated", "/b"), codes.OK},
		{"a new job", create("new", "/b"), codes.PermissionDenied},
		{"a batch", func() error {
			_, err := jobs.CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{{Name: "relocated", Pool: "/b"}}})
			return err
		}(), codes.PermissionDenied},
		{"stopping a job it relocated", func() error { _, err := jobs.StopJob(ctx, &pb.StopJobRequest{Id: "in-a"}); return err }(), codes.OK},
		{"stopping another job", func() error { _, err := jobs.StopJob(ctx, &pb.StopJobRequest{Id: "in-b"}); return err }(), codes.PermissionDenied},
		{"stopping a job that is not", func() error { _, err := jobs.StopJob(ctx, &pb.StopJobRequest{Id: "gone"}); return err }(), codes.NotFound},
		{"forwarding alice's create", func() error {
			md := metadata.Pairs("peloton-caller", "token:alice")
			_, err := jobs.CreateJob(metadata.NewOutgoingContext(ctx, md), &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "hers", Pool: "/a/x"}})
			return err
		}(), codes.OK},
	}
	for _, c := range cases {
		if got := status.Code(c.err); got != c.want {
			t.Errorf("region east, %s: %v, want %v", c.what, c.err, c.want)
		}
	}
	recs, _ := f.audit.List(ctx, nil)
	found := false
	for _, r := range recs {
		if r.GetName() == "east" && r.GetCode() == codes.PermissionDenied.String() && strings.Contains(r.GetMessage(), "region east (role region) may not create-job") {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit record of east's refused create: %v", recs)
	}
}
