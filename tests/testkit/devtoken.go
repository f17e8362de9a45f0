package testkit

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/gateway/auth"
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
	if req.Header.Get("Authorization") == "" {
		if token, _ := cli.FindDevToken(req.URL.Host); token != "" {
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", "Bearer "+token)
		}
	}
	return d.Base.RoundTrip(req)
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
	token, _ := cli.FindDevToken(addr)
	if token == "" {
		return grpc.EmptyDialOption{}
	}
	return grpc.WithPerRPCCredentials(auth.Bearer{Token: token})
}

// DevHeader is the Authorization header value of the dev cluster on addr
// ("" without one).
func DevHeader(addr string) string {
	token, _ := cli.FindDevToken(addr)
	if token == "" {
		return ""
	}
	return "Bearer " + token
}
