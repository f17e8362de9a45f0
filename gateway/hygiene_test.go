package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
)

// startOpen starts an open gateway (dev mode) in front of a stub shard.
func startOpen(t testing.TB, limits Limits) (base string, shard *stubShard) {
	t.Helper()
	shard = &stubShard{pools: map[string]string{}}
	g, err := New(Config{Addr: "127.0.0.1:0", Limits: limits, Register: func(s *grpc.Server) {
		pb.RegisterJobServiceServer(s, shard)
		pb.RegisterSystemServiceServer(s, shard)
	}})
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
	return "http://" + g.Addr(), shard
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
