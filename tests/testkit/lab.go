package testkit

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth"
)

// LabSpec is what a secured test federation needs: its regions, client
// certificates, the further addresses its certificates name, the tokens
// to create and the policy.
type LabSpec struct {
	Regions, Clients, Hosts []string
	Tokens                  []string
	Policy                  string
}

// AdminPolicy binds the subject admin to the admin role.
const AdminPolicy = "bindings: [{subjects: [admin], role: admin}]\n"

// Lab is the secrets of a secured test federation, made with the binary
// as an operator makes them: `peloton tls init` (a CA, a certificate per
// region and per client), `peloton auth token create` per token, and a
// policy file.
type Lab struct {
	// Dir holds ca.crt, REGION.crt and .key, tokens.yaml, policy.yaml.
	Dir string
	// Tokens are the tokens made, by name.
	Tokens map[string]string
}

// NewLab makes the lab in dir; without regions it makes no PKI, only
// the tokens and the policy.
func NewLab(t testing.TB, bin, dir string, spec LabSpec) Lab {
	t.Helper()
	run := func(args ...string) string {
		t.Helper()
		var stderr strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("peloton %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	if len(spec.Regions) > 0 {
		args := []string{"tls", "init", "--dir", dir, "--regions", strings.Join(spec.Regions, ",")}
		if len(spec.Clients) > 0 {
			args = append(args, "--clients", strings.Join(spec.Clients, ","))
		}
		if len(spec.Hosts) > 0 {
			args = append(args, "--hosts", strings.Join(spec.Hosts, ","))
		}
		run(args...)
	}
	l := Lab{Dir: dir, Tokens: map[string]string{}}
	for _, name := range spec.Tokens {
		l.Tokens[name] = run("auth", "token", "create", name, "--file", l.TokensFile())
	}
	if err := os.WriteFile(l.PolicyFile(), []byte(spec.Policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

// File is the path of a file of the lab.
func (l Lab) File(name string) string { return filepath.Join(l.Dir, name) }

// CA is the CA's certificate; Cert and Key a region's or client's.
func (l Lab) CA() string              { return l.File("ca.crt") }
func (l Lab) Cert(name string) string { return l.File(name + ".crt") }
func (l Lab) Key(name string) string  { return l.File(name + ".key") }
func (l Lab) TokensFile() string      { return l.File("tokens.yaml") }
func (l Lab) PolicyFile() string      { return l.File("policy.yaml") }
func (l Lab) certKey(name string) (string, string) {
	if name == "" {
		return "", ""
	}
	return l.Cert(name), l.Key(name)
}

// TLSConfig is the tls line of region's server config.
func (l Lab) TLSConfig(region string) string {
	return fmt.Sprintf("tls: {cert: %s, key: %s, ca: %s}", l.Cert(region), l.Key(region), l.CA())
}

// AuthConfig is the auth line of a server config, with more fields of
// the section (such as "policySource: store") when extra is not empty.
func (l Lab) AuthConfig(extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf("auth: {tokens: %s, policy: %s%s}", l.TokensFile(), l.PolicyFile(), extra)
}

// ClientTLS is the TLS configuration of a client trusting the lab's CA,
// presenting the certificate cert ("": none).
func (l Lab) ClientTLS(t testing.TB, cert string) *tls.Config {
	t.Helper()
	certFile, keyFile := l.certKey(cert)
	cfg, err := auth.ClientTLS(l.CA(), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Roots is a pool of the lab's CA.
func (l Lab) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	ca, err := os.ReadFile(l.CA())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	return roots
}

// HTTPClient speaks HTTPS trusting the lab's CA, with a timeout.
func (l Lab) HTTPClient(t testing.TB, timeout time.Duration) *http.Client {
	t.Helper()
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: l.Roots(t)}}, Timeout: timeout}
}

// GossipKey is a new key to encrypt gossip with.
func GossipKey(t testing.TB) string {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(key)
}
