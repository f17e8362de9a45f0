package federation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/federation/gossip"
)

// testCA makes a CA and issues localhost server certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCA{cert: cert, key: key, pool: pool}
}

func (ca testCA) issue(t *testing.T, signer crypto.Signer) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "east"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, signer.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: signer}
}

// serveTLS accepts TLS connections with cert until the test ends.
func serveTLS(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestCertAdmission(t *testing.T) {
	ours, theirs := newTestCA(t), newTestCA(t)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecAddr := serveTLS(t, ours.issue(t, ecKey))
	edAddr := serveTLS(t, ours.issue(t, edKey))
	rogueAddr := serveTLS(t, theirs.issue(t, otherKey))
	closed := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		return ln.Addr().String()
	}()
	dial := func(string) *tls.Config {
		return &tls.Config{RootCAs: ours.pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	}
	claim := func(api string) gossip.Claim {
		return gossip.Claim{Name: "east-0", Region: "east", APIAddr: api, Addr: "127.0.0.1:7946"}
	}
	prove := func(key crypto.Signer, c gossip.Claim) string {
		p, err := CertAdmission{Key: key, TLS: dial}.Prove(c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	elsewhere := claim(ecAddr)
	elsewhere.Addr = "127.0.0.9:7946"
	cases := []struct {
		name  string
		claim gossip.Claim
		proof string
		ok    bool
	}{
		{"ECDSA member of our CA", claim(ecAddr), prove(ecKey, claim(ecAddr)), true},
		{"Ed25519 member of our CA", claim(edAddr), prove(edKey, claim(edAddr)), true},
		{"another CA's certificate", claim(rogueAddr), prove(otherKey, claim(rogueAddr)), false},
		{"a real member's API address, signed with another key", claim(ecAddr), prove(otherKey, claim(ecAddr)), false},
		{"a real member's proof replayed from another gossip address", elsewhere, prove(ecKey, claim(ecAddr)), false},
		{"nothing listening", claim(closed), prove(ecKey, claim(closed)), false},
		{"garbage proof", claim(ecAddr), "!!", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CertAdmission{Key: ecKey, TLS: dial}.Verify(t.Context(), tc.claim, tc.proof)
			if (err == nil) != tc.ok {
				t.Fatalf("Verify = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				t.Logf("refused: %v", err)
			}
		})
	}
	if err := (CertAdmission{Key: ecKey, TLS: dial}).Verify(t.Context(), claim(ecAddr), prove(otherKey, claim(ecAddr))); !errors.Is(err, ErrBadProof) {
		t.Fatalf("a proof by another key: %v, want ErrBadProof", err)
	}
	if p := prove(ecKey, claim(ecAddr)); len(p) > 100 {
		t.Errorf("an ECDSA P-256 proof takes %d bytes of the 512 of tags", len(p))
	}
}
