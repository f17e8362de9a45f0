package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// RegionUnit is the organizational unit of a region's certificate: the
// certificate's common name is then the region's name.
const RegionUnit = "peloton-region"

// UserUnit is the organizational unit `peloton tls init` gives client
// certificates (any other certificate of the CA is a user too).
const UserUnit = "peloton-user"

// ErrWrongRegion means a peer's certificate is not the certificate of the
// region that was dialed.
var ErrWrongRegion = errors.New("certificate of the wrong region")

// LabPKI describes what `peloton tls init` makes.
type LabPKI struct {
	Dir string
	// Regions get a certificate each, serving the API and calling other
	// regions: <dir>/<region>.crt and .key.
	Regions []string
	// Clients get a client certificate each: <dir>/<name>.crt and .key.
	Clients []string
	// Hosts are the DNS names and IP addresses region certificates are
	// valid for (besides localhost, 127.0.0.1 and ::1).
	Hosts    []string
	Now      time.Time
	Validity time.Duration
}

// Init makes a CA (<dir>/ca.crt, ca.key) and the certificates, refusing to
// overwrite a CA already there. It returns the files it wrote.
func (l LabPKI) Init() ([]string, error) {
	if l.Validity == 0 {
		l.Validity = 365 * 24 * time.Hour
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, err
	}
	caPath := filepath.Join(l.Dir, "ca.crt")
	if _, err := os.Stat(caPath); err == nil {
		return nil, fmt.Errorf("%s exists: remove it or choose another --dir", caPath)
	}
	is, err := l.newIssuer()
	if err != nil {
		return nil, err
	}
	for _, r := range l.Regions {
		if r == "" || r == "ca" {
			return nil, fmt.Errorf("region name %q cannot name a certificate", r)
		}
		if err := is.issue(r, RegionUnit, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, l.regionHosts(r)); err != nil {
			return nil, err
		}
	}
	for _, c := range l.Clients {
		if c == "" || c == "ca" || slices.Contains(l.Regions, c) {
			return nil, fmt.Errorf("client name %q cannot name a certificate (empty, ca, or a region's)", c)
		}
		if err := is.issue(c, UserUnit, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil); err != nil {
			return nil, err
		}
	}
	return is.written, nil
}

// regionHosts are the names and addresses a region's certificate is valid
// for: the region's name, the lab's hosts and this machine's loopback.
func (l LabPKI) regionHosts(region string) []string {
	hosts := append([]string{"localhost", "127.0.0.1", "::1", region}, l.Hosts...)
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// labIssuer is the lab's CA, issuing certificates into the lab's
// directory.
type labIssuer struct {
	l       LabPKI
	ca      *x509.Certificate
	key     *ecdsa.PrivateKey
	written []string // the files written so far
}

// newIssuer makes the CA and writes its certificate and key.
func (l LabPKI) newIssuer() (*labIssuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "peloton lab CA", Organization: []string{"peloton"}},
		NotBefore:             l.Now.Add(-time.Hour),
		NotAfter:              l.Now.Add(l.Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(der)
	is := &labIssuer{l: l, ca: ca, key: key}
	if err := is.write("ca", der, key); err != nil {
		return nil, err
	}
	return is, nil
}

// issue makes and writes the certificate of name, in unit, for usage, valid
// for hosts (DNS names or IP addresses).
func (is *labIssuer) issue(name, unit string, usage []x509.ExtKeyUsage, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, OrganizationalUnit: []string{unit}, Organization: []string{"peloton"}},
		NotBefore:    is.l.Now.Add(-time.Hour),
		NotAfter:     is.l.Now.Add(is.l.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, is.ca, &key.PublicKey, is.key)
	if err != nil {
		return err
	}
	return is.write(name, der, key)
}

// write writes <dir>/<name>.crt and its key, <name>.key, readable by its
// owner only.
func (is *labIssuer) write(name string, der []byte, key *ecdsa.PrivateKey) error {
	crt := filepath.Join(is.l.Dir, name+".crt")
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	kp := filepath.Join(is.l.Dir, name+".key")
	if err := os.WriteFile(kp, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	is.written = append(is.written, crt, kp)
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

// LoadCA reads a PEM file of CA certificates.
func LoadCA(path string) (*x509.CertPool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return pool, nil
}

// IdentityOfCert is who a verified certificate names: a region (OU
// peloton-region) or a user, by common name.
func IdentityOfCert(leaf *x509.Certificate) (Identity, error) {
	name := leaf.Subject.CommonName
	if name == "" {
		return Identity{}, errors.New("client certificate without a common name")
	}
	if slices.Contains(leaf.Subject.OrganizationalUnit, RegionUnit) {
		return Identity{Name: name, Method: ByRegion}, nil
	}
	return Identity{Name: name, Method: ByCertificate}, nil
}

// ServerTLS is the TLS configuration of the API port: the region's
// certificate, and client certificates verified against the CA when the
// client sends one.
func ServerTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert/tls.key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		if cfg.ClientCAs, err = LoadCA(caFile); err != nil {
			return nil, fmt.Errorf("tls.ca: %w", err)
		}
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// RegionOfCertFile returns the region a certificate file is for, "" when
// it is not a region certificate.
func RegionOfCertFile(certFile, keyFile string) (string, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return "", err
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return "", err
	}
	id, err := IdentityOfCert(leaf)
	if err != nil || !id.IsRegion() {
		return "", err
	}
	return id.Name, nil
}

// RegionClientTLS is the TLS configuration of a call to another region
// (or the region's leader): this region's certificate as client
// certificate, and the peer's certificate checked against the CA and the
// region dialed. The host name is not checked: a region is known by its
// name, whatever address gossip gave it.
func RegionClientTLS(cert tls.Certificate, ca *x509.CertPool, region string) *tls.Config {
	return &tls.Config{
		Certificates:       []tls.Certificate{cert},
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // replaced by VerifyConnection below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the peer sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			leaf := cs.PeerCertificates[0]
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return fmt.Errorf("region %s: %w", region, err)
			}
			id, err := IdentityOfCert(leaf)
			if err != nil || !id.IsRegion() || id.Name != region {
				return fmt.Errorf("%w: dialed region %s, the peer is %s", ErrWrongRegion, region, leaf.Subject.String())
			}
			return nil
		},
	}
}

// ClientTLS is the TLS configuration of a client: the server checked
// against ca (the system roots when empty), and a client certificate when
// certFile is set.
func ClientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := LoadCA(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, errors.New("a client certificate needs both --cert and --key")
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
