// Package security drives a TLS-enabled `peloton server` with
// authentication and a policy: every RPC of the API, through gRPC and
// HTTP/JSON, by callers of each role.
package security

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// caller is one identity of the tests: a token or a client certificate.
type caller struct {
	name  string
	token string
	cert  string // the name of a client certificate in the PKI directory
}

// region is a running secured `peloton server`.
type region struct {
	t      *testing.T
	name   string
	addr   string
	pki    string
	lab    testkit.Lab
	config string
	proc   *testkit.Process
}

// lab makes a PKI with the regions and clients, a token per name in
// tokens, and a policy file.
func lab(t *testing.T, regions, clients []string, tokens []string, policy string) (dir string, toks map[string]string) {
	t.Helper()
	l := testkit.NewLab(t, binary, t.TempDir(), testkit.LabSpec{Regions: regions, Clients: clients,
		Hosts: []string{"127.0.0.2", "127.0.0.3"}, Tokens: tokens, Policy: policy})
	return l.Dir, l.Tokens
}

// cli runs the peloton client against r as c; it returns the output and
// the exit code.
func (r *region) cli(c caller, args ...string) (string, int) {
	r.t.Helper()
	cli := testkit.CLI{Bin: binary, Env: []string{"PELOTON_TOKEN=" + c.token, "PELOTON_CONFIG=" + filepath.Join(r.t.TempDir(), "none.yaml")}}
	res := cli.Run(append([]string{"--addr", "https://" + r.addr, "--ca", r.lab.CA()}, args...)...)
	if res.Code == -1 {
		r.t.Fatal(res.Stderr)
	}
	return res.Output(), res.Code
}

// startRegion starts a secured server of region name on addr with the
// given extra config lines.
func startRegion(t *testing.T, pki, name, addr, extra string) *region {
	t.Helper()
	return startRegionAuth(t, pki, name, addr, "", extra)
}

// startRegionAuth is startRegion with more fields of the auth section
// (authExtra, such as "policySource: store").
func startRegionAuth(t *testing.T, pki, name, addr, authExtra, extra string) *region {
	t.Helper()
	return startRegionOn(t, pki, name, addr, filepath.Join(t.TempDir(), name), `"sim,hosts=5,cpu=8,mem=65536,duration=1h"`, authExtra, extra)
}

// startRegionOn is startRegionAuth with the data directory and the hosts
// list (quoted --hosts values, comma-separated) given.
func startRegionOn(t *testing.T, pki, name, addr, dataDir, hosts, authExtra, extra string) *region {
	t.Helper()
	l := testkit.Lab{Dir: pki}
	r := &region{t: t, name: name, addr: addr, pki: pki, lab: l}
	cfg := fmt.Sprintf("region: %s\naddr: %s\ndataDir: %s\nhosts: [%s]\n%s\n%s\nlog: {level: info}\n%s",
		name, addr, dataDir, hosts, l.TLSConfig(name), l.AuthConfig(authExtra), extra)
	r.config = filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(r.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// Local runs outlive the server; none may write in dataDir after it.
	t.Cleanup(func() { testkit.KillUnder(t, dataDir) })
	r.start()
	return r
}

// start starts the server and waits until it answers /healthz.
func (r *region) start() {
	r.t.Helper()
	r.proc = testkit.StartServerProcess(r.t, binary, r.config, testkit.Options{Name: "server " + r.name})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.lab.ClientTLS(r.t, "")}, Timeout: 3 * time.Second}
	r.proc.WaitHealthy(client, "https://"+r.addr, 30*time.Second)
}

func (r *region) stop() { r.proc.Stop() }
func (r *region) kill() { r.proc.Kill() }

// conn is a gRPC connection to r as c.
func (r *region) conn(c caller) *grpc.ClientConn {
	r.t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(r.lab.ClientTLS(r.t, c.cert)))}
	if c.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(auth.Bearer{Token: c.token, RequireTLS: true}))
	}
	cc, err := grpc.NewClient(r.addr, opts...)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cc.Close() })
	return cc
}

// http makes an HTTPS request to r as c (a body is sent as JSON); code 0
// means no answer within the client's timeout (a stream that stays open).
func (r *region) http(c caller, method, path, body string) (int, string) {
	var hdr map[string]string
	if body != "" {
		hdr = map[string]string{"Content-Type": "application/json"}
	}
	code, _, b, err := r.send(c, method, path, body, hdr, 3*time.Second)
	if err != nil {
		return code, err.Error()
	}
	return code, b
}

// send makes an HTTPS request to r as c with exactly the headers given
// (a "Host" entry sets the request's Host) and a client timeout; it
// returns the status (0 without an answer), the headers and the body.
func (r *region) send(c caller, method, path, body string, hdr map[string]string, timeout time.Duration) (int, http.Header, string, error) {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.lab.ClientTLS(r.t, c.cert)}, Timeout: timeout}
	defer client.CloseIdleConnections()
	api := &testkit.API{URL: "https://" + r.addr, Client: client, Token: c.token}
	resp, err := api.Send(method, path, body, hdr)
	return resp.Code, resp.Header, string(resp.Body), err
}

func freePort(t *testing.T) int { return testkit.FreePort(t, "127.0.0.1") }
