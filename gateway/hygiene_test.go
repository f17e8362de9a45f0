package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
)

// startOpen starts an open gateway (dev mode) in front of a stub shard.
func startOpen(t testing.TB, limits Limits) (base string, shard *stubShard) {
	t.Helper()
	shard = &stubShard{pools: map[string]string{}}
	return startWith(t, limits, func(s grpc.ServiceRegistrar) {
		pb.RegisterJobServiceServer(s, shard)
		pb.RegisterSystemServiceServer(s, shard)
	}), shard
}

// startWith starts an open gateway serving what register registers.
func startWith(t testing.TB, limits Limits, register func(grpc.ServiceRegistrar)) (base string) {
	t.Helper()
	g, err := New(Config{Addr: "127.0.0.1:0", Limits: limits, Register: register})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + g.Addr()
}

// call sends a request and returns its status, headers and error message.
func call(t *testing.T, method, url, contentType string, body io.Reader) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &e)
	if e.Message == "" {
		e.Message = string(raw)
	}
	return resp.StatusCode, resp.Header, e.Message
}

// chunked hides a reader's length, so the body goes chunked.
type chunked struct{ io.Reader }

func TestBodyLimitsPerRoute(t *testing.T) {
	base, _ := startOpen(t, Limits{RequestBytes: 1 << 10, SpecRequestBytes: 64 << 10})
	pad := func(n int) string { return `{"reason":"` + strings.Repeat("x", n) + `"}` }
	spec := func(n int) string {
		return `{"name":"` + strings.Repeat("x", n) + `","instances":1,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`
	}
	cases := []struct {
		name, method, path string
		body               io.Reader
		want               int
		msg                string
	}{
		{"small stop body", "POST", "/v1/jobs/j1/stop", strings.NewReader(`{}`), 200, ""},
		{"stop body over the limit, with a length", "POST", "/v1/jobs/j1/stop", strings.NewReader(pad(2 << 10)), 413,
			"larger than 1024 bytes, the limit of POST /v1/jobs/j1/stop (creating or updating a job takes up to 65536)"},
		{"drain body over the limit, chunked", "POST", "/v1/hosts/sim/h1:drain", chunked{strings.NewReader(pad(2 << 10))}, 413,
			"larger than 1024 bytes"},
		{"a job spec above the small limit", "POST", "/v1/jobs", strings.NewReader(spec(2 << 10)), 400, "name: must be at most"},
		{"a job spec over its own limit, chunked", "POST", "/v1/jobs", chunked{strings.NewReader(spec(100 << 10))}, 413,
			"larger than 65536 bytes, the limit of POST /v1/jobs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, msg := call(t, c.method, base+c.path, "application/json", c.body)
			if code != c.want || !strings.Contains(msg, c.msg) {
				t.Fatalf("got %d %q, want %d with %q", code, msg, c.want, c.msg)
			}
		})
	}
}

func TestMethodsNotAllowedGetAllowFromTheDocument(t *testing.T) {
	base, _ := startOpen(t, Limits{})
	routes, err := loadRoutes(pb.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes.routes) < 30 {
		t.Fatalf("only %d routes read from the OpenAPI document", len(routes.routes))
	}
	for _, r := range routes.routes {
		// A concrete path of the template: every parameter "x".
		path := regexpParam.ReplaceAllString(r.template, "x")
		code, h, msg := call(t, "TRACE", base+path, "", nil)
		// Allow names the methods of every route the path matches, as the
		// API routes it: GET /v1/updates/x:abort is GetUpdate of "x:abort".
		got := strings.Split(h.Get("Allow"), ", ")
		for m := range r.ops {
			if !slices.Contains(got, m) {
				code = 0
			}
		}
		if code != http.StatusMethodNotAllowed || h.Get("Allow") != allow(routes.match(path)) {
			t.Errorf("TRACE %s: %d Allow %q (%s), want 405 Allow with %v", path, code, h.Get("Allow"), msg, r.ops)
		}
	}
	code, h, _ := call(t, "PUT", base+"/v1/jobs", "application/json", strings.NewReader(`{}`))
	if code != 405 || h.Get("Allow") != "GET, OPTIONS, POST" {
		t.Errorf("PUT /v1/jobs: %d Allow %q", code, h.Get("Allow"))
	}
	code, h, _ = call(t, "OPTIONS", base+"/v1/hosts/sim/h1:drain", "", nil)
	if code != 204 || h.Get("Allow") != "OPTIONS, POST" {
		t.Errorf("OPTIONS drain: %d Allow %q", code, h.Get("Allow"))
	}
	if code, _, _ := call(t, "TRACE", base+"/v1/nowhere", "", nil); code != 404 {
		t.Errorf("TRACE of a path the API lacks: %d, want 404", code)
	}
}

var regexpParam = regexp.MustCompile(`\{[^}]+\}`)

func TestBodyHygiene(t *testing.T) {
	base, _ := startOpen(t, Limits{})
	job := `{"name":"a","instances":1,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`
	cases := []struct {
		name, method, path, contentType, body string
		want                                  int
		msg                                   string
	}{
		{"json", "POST", "/v1/jobs", "application/json", job, 200, ""},
		{"json with charset", "POST", "/v1/jobs", "application/json; charset=utf-8", job, 200, ""},
		{"curl -d default type", "POST", "/v1/jobs", "application/x-www-form-urlencoded", job, 415,
			"the body is application/x-www-form-urlencoded (Content-Type header): send JSON with the header Content-Type: application/json"},
		{"no type", "POST", "/v1/jobs", "", job, 415, "the request has a body and no Content-Type header"},
		{"plain text", "POST", "/v1/jobs", "text/plain", job, 415, "the body is text/plain (Content-Type header): send JSON with the header Content-Type: application/json"},
		{"another JSON type", "POST", "/v1/jobs", "application/merge-patch+json", job, 415, "application/merge-patch+json"},
		{"a type without a body", "POST", "/v1/jobs/j1/stop", "text/plain", "", 415, "text/plain"},
		{"no type and no body", "POST", "/v1/jobs/j1/stop", "", "", 200, ""},
		{"form data", "POST", "/v1/jobs/j/tasks/stop", "multipart/form-data; boundary=x", "--x--", 415, "multipart/form-data"},
		{"latin-1", "POST", "/v1/jobs", "application/json; charset=iso-8859-1", job, 415, "charset iso-8859-1"},
		{"form body", "POST", "/v1/jobs/j/tasks/stop", "application/x-www-form-urlencoded", "a=b", 415, "x-www-form-urlencoded"},
		{"a body that is not JSON", "POST", "/v1/jobs/j/tasks/stop", "application/json", "a=b", 400, "not JSON"},
		{"duplicate key", "POST", "/v1/jobs", "application/json",
			`{"name":"a","instances":1,"task":{"command":"c","command":"d","resources":{"cpu":1,"memMb":1}}}`, 400, "task.command: given twice"},
		{"invalid UTF-8", "POST", "/v1/jobs", "application/json",
			`{"name":"a","instances":1,"labels":{"team":"` + "\xff\xfe" + `"},"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`,
			400, `labels["team"]: is not valid UTF-8`},
		{"lone surrogate", "POST", "/v1/jobs", "application/json",
			`{"name":"\ud800","instances":1,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`, 400, "name: is not valid UTF-8"},
		{"a pair of surrogates is fine", "POST", "/v1/jobs", "application/json",
			`{"name":"\ud83d\ude00","instances":1,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`, 200, ""},
		{"a string for a number", "POST", "/v1/jobs", "application/json",
			`{"name":"a","instances":1,"task":{"command":"c","resources":{"cpu":"Infinity","memMb":1}}}`, 400, "task.resources.cpu: must be a number, not a string"},
		{"pool limit Infinity", "POST", "/v1/pools", "application/json", `{"path":"/a","limit":{"cpu":"Infinity"}}`, 400, "limit.cpu: must be a number, not a string"},
		{"unknown field in a spec: the spec's decoder names it with the rest", "POST", "/v1/jobs", "application/json",
			`{"name":"a","instances":1,"task":{"colour":"red","resources":{"cpu":-1,"memMb":1}}}`, 400, "task.colour: unknown field\ntask.command: is required\ntask.resources.cpu: must be > 0"},
		{"a body that is the whole request may repeat the path's parameters", "POST", "/v1/jobs/j/tasks/stop", "application/json",
			`{"jobId":"j","force":true}`, 501, "unknown service peloton.v1.TaskService"},
		{"unknown field", "POST", "/v1/jobs/j/tasks/stop", "application/json", `{"forcefully":true}`, 400, "forcefully: unknown field"},
		{"proto names are fields too", "POST", "/v1/jobs", "application/json",
			`{"name":"a","instances":1,"max_running":1,"task":{"command":"c","resources":{"cpu":1,"mem_mb":1}}}`, 200, ""},
		{"too deep", "POST", "/v1/jobs/j/tasks/stop", "application/json", strings.Repeat("[", 200) + strings.Repeat("]", 200), 400, "nested more than 100"},
		{"trailing data", "POST", "/v1/jobs/j/tasks/stop", "application/json", `{} {}`, 400, "unexpected data after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, msg := call(t, c.method, base+c.path, c.contentType, strings.NewReader(c.body))
			if code != c.want || !strings.Contains(msg, c.msg) {
				t.Fatalf("got %d %q, want %d with %q", code, msg, c.want, c.msg)
			}
		})
	}
}
