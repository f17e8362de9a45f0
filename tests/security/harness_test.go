// Package security drives a TLS-enabled `peloton server` with
// authentication and a policy: every RPC of the API, through gRPC and
// HTTP/JSON, by callers of each role.
package security

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	config string
	cmd    *exec.Cmd
	log    *testkit.LogBuffer
	done   chan error
}

// lab makes a PKI with the regions and clients, a token per name in
// tokens, and a policy file.
func lab(t *testing.T, regions, clients []string, tokens []string, policy string) (dir string, toks map[string]string) {
	t.Helper()
	dir = t.TempDir()
	run(t, "tls", "init", "--dir", dir, "--regions", strings.Join(regions, ","), "--clients", strings.Join(clients, ","), "--hosts", "127.0.0.2,127.0.0.3")
	toks = map[string]string{}
	for _, name := range tokens {
		toks[name] = strings.TrimSpace(run(t, "auth", "token", "create", name, "--file", filepath.Join(dir, "tokens.yaml")))
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, toks
}

// cli runs the peloton client against r as c; it returns the output and
// the exit code.
func (r *region) cli(c caller, args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command(binary, append([]string{"--addr", "https://" + r.addr, "--ca", filepath.Join(r.pki, "ca.crt")}, args...)...)
	cmd.Env = append(os.Environ(), "PELOTON_TOKEN="+c.token, "PELOTON_CONFIG="+filepath.Join(r.t.TempDir(), "none.yaml"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return string(out), code
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("peloton %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
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
	r := &region{t: t, name: name, addr: addr, pki: pki}
	if authExtra != "" {
		authExtra = ", " + authExtra
	}
	cfg := fmt.Sprintf(`region: %s
addr: %s
dataDir: %s
hosts: [%s]
tls: {cert: %s, key: %s, ca: %s}
auth: {tokens: %s, policy: %s%s}
log: {level: info}
%s`, name, addr, dataDir, hosts, filepath.Join(pki, name+".crt"), filepath.Join(pki, name+".key"), filepath.Join(pki, "ca.crt"),
		filepath.Join(pki, "tokens.yaml"), filepath.Join(pki, "policy.yaml"), authExtra, extra)
	r.config = filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(r.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r.start()
	// Local runs outlive the server; none may write in dataDir after it.
	t.Cleanup(func() { testkit.KillUnder(t, dataDir) })
	t.Cleanup(r.stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- log of %s:\n%s", name, testkit.LastLines(r.log.String(), 40))
		}
	})
	return r
}

func (r *region) start() {
	r.t.Helper()
	r.log, r.done = &testkit.LogBuffer{}, make(chan error, 1)
	r.cmd = exec.Command(binary, "server", "--config", r.config)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := r.http(caller{}, "GET", "/healthz", ""); code == 200 {
			return
		}
		select {
		case err := <-r.done:
			r.t.Fatalf("server %s exited early: %v\n%s", r.name, err, r.log)
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("server %s not healthy after 30s\n%s", r.name, r.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *region) stop() {
	if r.cmd == nil || r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *region) kill() {
	if r.cmd == nil || r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// tlsFor is the client TLS configuration of c.
func tlsFor(t testing.TB, pki string, c caller) *tls.Config {
	certFile, keyFile := "", ""
	if c.cert != "" {
		certFile, keyFile = filepath.Join(pki, c.cert+".crt"), filepath.Join(pki, c.cert+".key")
	}
	cfg, err := auth.ClientTLS(filepath.Join(pki, "ca.crt"), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return true }

// conn is a gRPC connection to r as c.
func (r *region) conn(c caller) *grpc.ClientConn {
	r.t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tlsFor(r.t, r.pki, c)))}
	if c.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(c.token)))
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
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsFor(r.t, r.pki, c)}, Timeout: timeout}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(method, "https://"+r.addr+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

func freePort(t *testing.T) int { return testkit.FreePort(t, "127.0.0.1") }
