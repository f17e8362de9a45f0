package auth

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A name that cannot name a certificate file is refused.
func TestLabPKIRefusesNames(t *testing.T) {
	for _, c := range []struct {
		name             string
		regions, clients []string
		want             string
	}{
		{"empty region", []string{""}, nil, `region name "" cannot name a certificate`},
		{"region ca", []string{"ca"}, nil, `region name "ca" cannot name a certificate`},
		{"empty client", []string{"east"}, []string{""}, `client name "" cannot name a certificate`},
		{"client ca", nil, []string{"ca"}, `client name "ca" cannot name a certificate`},
		{"client named as a region", []string{"east"}, []string{"east"}, `client name "east" cannot name a certificate (empty, ca, or a region's)`},
	} {
		_, err := LabPKI{Dir: t.TempDir(), Regions: c.regions, Clients: c.clients, Now: time.Now()}.Init()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %s", c.name, err, c.want)
		}
	}
}

// Init writes a certificate and a key per name, the CA's first; a region's
// certificate is valid for its name, the lab's hosts and loopback.
func TestLabPKIWritesEachCertificate(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	written, err := LabPKI{Dir: dir, Regions: []string{"east"}, Clients: []string{"alice"}, Hosts: []string{"10.0.0.1", "box", "localhost"},
		Now: now, Validity: time.Hour}.Init()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range []string{"ca", "east", "alice"} {
		want = append(want, filepath.Join(dir, n+".crt"), filepath.Join(dir, n+".key"))
	}
	if !slices.Equal(written, want) {
		t.Errorf("written %v, want %v", written, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "east.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	east, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, ip := range east.IPAddresses {
		ips = append(ips, ip.String())
	}
	if !slices.Equal(east.DNSNames, []string{"box", "east", "localhost"}) || !slices.Equal(ips, []string{"10.0.0.1", "127.0.0.1", "::1"}) {
		t.Errorf("east is valid for %v and %v", east.DNSNames, ips)
	}
	if !east.NotAfter.Equal(now.Add(time.Hour).Truncate(time.Second)) || east.Subject.OrganizationalUnit[0] != RegionUnit {
		t.Errorf("east: not after %v, unit %v", east.NotAfter, east.Subject.OrganizationalUnit)
	}
	if info, err := os.Stat(filepath.Join(dir, "east.key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("east.key: %v, %v", info, err)
	}
}
