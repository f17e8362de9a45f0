package testkit

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
)

// DevTransport adds the token of a `peloton dev` cluster to an HTTP
// request sent to the loopback address it listens on, found where the
// cluster keeps it for its user's clients (cli.DevTokenFile), as the CLI
// and the Python and Java clients find it. A request that carries its own
// Authorization header, or goes to an address no dev cluster of this user
// listens on, is sent as it is.
type DevTransport struct {
	Base http.RoundTripper
}

func (d DevTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") == "" && isLoopbackHost(req.URL.Hostname()) {
		if path, err := cli.DevTokenFile(req.URL.Host); err == nil {
			if raw, err := os.ReadFile(path); err == nil {
				req = req.Clone(req.Context())
				req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(raw)))
			}
		}
	}
	return d.Base.RoundTrip(req)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// UseDevTokens makes http.DefaultTransport (http.Get, http.Post,
// http.DefaultClient) send the dev cluster's token, as the clients do.
func UseDevTokens() {
	if _, ok := http.DefaultTransport.(DevTransport); !ok {
		http.DefaultTransport = DevTransport{Base: http.DefaultTransport}
	}
}

// BareClient is an HTTP client that sends no credentials of its own,
// for tests of what a caller without the token gets.
func BareClient() *http.Client {
	return &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
}

// DevToken returns the token of the dev cluster whose data directory is
// dataDir, waiting up to 30 s for the cluster to write it.
func DevToken(t testing.TB, dataDir string) string {
	t.Helper()
	var token string
	WaitFor(t, 30*time.Second, "the dev cluster's token in "+dataDir, func() bool {
		raw, err := os.ReadFile(filepath.Join(dataDir, "token"))
		token = strings.TrimSpace(string(raw))
		return err == nil && token != ""
	})
	return token
}

// DevCredentials makes a gRPC connection to the dev cluster listening on
// addr send its token, read now from where the cluster keeps it for its
// clients; without one (a `peloton server`), it adds nothing.
func DevCredentials(addr string) grpc.DialOption {
	path, err := cli.DevTokenFile(addr)
	if err != nil {
		return grpc.EmptyDialOption{}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return grpc.EmptyDialOption{}
	}
	return grpc.WithPerRPCCredentials(devBearer(strings.TrimSpace(string(raw))))
}

// DevHeader is the Authorization header value of the dev cluster on addr
// ("" without one).
func DevHeader(addr string) string {
	path, err := cli.DevTokenFile(addr)
	if err != nil {
		return ""
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return "Bearer " + strings.TrimSpace(string(raw))
}

type devBearer string

func (b devBearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (devBearer) RequireTransportSecurity() bool { return false }
