package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAuthenticateTokens(t *testing.T) {
	a := &Authenticator{Tokens: StaticTokens(map[string]string{"pel_good": "alice"})}
	now := time.Now()
	for _, c := range []struct {
		auth    []string
		caller  []string
		want    string
		wantErr error
	}{
		{nil, nil, "anonymous:anonymous", nil},
		{[]string{"Bearer pel_good"}, nil, "token:alice", nil},
		{[]string{"bearer pel_good"}, nil, "token:alice", nil},
		{[]string{"Bearer pel_bad"}, nil, "", ErrUnknownToken},
		{[]string{"Basic dXNlcg=="}, nil, "", ErrMalformed},
		{[]string{"Bearer "}, nil, "", ErrMalformed},
		{[]string{"Bearer " + strings.Repeat("x", MaxTokenBytes+1)}, nil, "", ErrMalformed},
		{[]string{"Bearer pel good"}, nil, "", ErrMalformed},
		{[]string{"Bearer pel_good", "Bearer pel_good"}, nil, "", ErrMalformed},
		{[]string{"Bearer pel_good"}, []string{"token:root"}, "", ErrAssertion},
	} {
		id, err := a.Authenticate(now, Credentials{Authorization: c.auth, Caller: c.caller})
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%v: %v, want %v", c.auth, err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pel_") {
				t.Errorf("%v: the error shows the token: %v", c.auth, err)
			}
			continue
		}
		if err != nil || id.Method+":"+id.Name != c.want {
			t.Errorf("%v: %v %v, want %s", c.auth, id, err, c.want)
		}
	}
}

func TestTokenFileReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	tok1, err := AddToken(path, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), tok1) {
		t.Fatal("the token file holds the token itself")
	}
	reloads := 0
	tokens, err := LoadTokens(path, func(string, error) { reloads++ })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if name, err := tokens.Lookup(now, tok1); err != nil || name != "alice" {
		t.Fatalf("lookup: %q %v", name, err)
	}
	tok2, err := AddToken(path, "bob")
	if err != nil {
		t.Fatal(err)
	}
	// Within the reload interval the old content serves.
	if _, err := tokens.Lookup(now, tok2); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("bob's token before the reload: %v", err)
	}
	if name, err := tokens.Lookup(now.Add(2*reloadEvery), tok2); err != nil || name != "bob" {
		t.Fatalf("bob's token after the reload: %q %v", name, err)
	}
	// A broken file keeps the previous tokens.
	if err := os.WriteFile(path, []byte("tokens: [{name: x, sha256: nothex}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if name, err := tokens.Lookup(now.Add(4*reloadEvery), tok1); err != nil || name != "alice" {
		t.Fatalf("after a broken reload: %q %v", name, err)
	}
	if reloads != 2 {
		t.Errorf("%d reloads reported, want 2", reloads)
	}
}

// The lab PKI's certificates: a region's is accepted by a client dialing
// that region and refused by one dialing another; a certificate of another
// CA is refused; a user's certificate names a user.
func TestLabPKI(t *testing.T) {
	dir := t.TempDir()
	if _, err := (LabPKI{Dir: dir, Regions: []string{"east", "west"}, Clients: []string{"alice"}, Now: time.Now()}).Init(); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if _, err := (LabPKI{Dir: other, Regions: []string{"east"}, Now: time.Now()}).Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := (LabPKI{Dir: dir, Regions: []string{"x"}, Now: time.Now()}).Init(); err == nil {
		t.Fatal("init over an existing CA must fail")
	}
	ca, err := LoadCA(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(d, name string) tls.Certificate {
		c, err := tls.LoadX509KeyPair(filepath.Join(d, name+".crt"), filepath.Join(d, name+".key"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	serve := func(d, name string) string {
		cfg, err := ServerTLS(filepath.Join(d, name+".crt"), filepath.Join(d, name+".key"), filepath.Join(dir, "ca.crt"))
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
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
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}
		}()
		return ln.Addr().String()
	}
	dial := func(addr string, cfg *tls.Config) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	east := serve(dir, "east")
	if err := dial(east, RegionClientTLS(load(dir, "west"), ca, "east")); err != nil {
		t.Errorf("west dialing east: %v", err)
	}
	if err := dial(east, RegionClientTLS(load(dir, "west"), ca, "west")); !errors.Is(err, ErrWrongRegion) {
		t.Errorf("west dialing east as if it were west: %v, want %v", err, ErrWrongRegion)
	}
	rogue := serve(other, "east")
	if err := dial(rogue, RegionClientTLS(load(dir, "west"), ca, "east")); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("dialing an east of another CA: %v, want unknown authority", err)
	}
	leaf := func(d, name string) *x509.Certificate {
		c := load(d, name)
		l, _ := x509.ParseCertificate(c.Certificate[0])
		return l
	}
	if id, err := IdentityOfCert(leaf(dir, "alice")); err != nil || id.Method != ByCertificate || id.Name != "alice" {
		t.Errorf("alice's certificate: %v %v", id, err)
	}
	if id, err := IdentityOfCert(leaf(dir, "east")); err != nil || !id.IsRegion() || id.Name != "east" {
		t.Errorf("east's certificate: %v %v", id, err)
	}
	a := &Authenticator{}
	chain := [][]*x509.Certificate{{leaf(dir, "east")}}
	id, err := a.Authenticate(time.Now(), Credentials{Chains: chain, Caller: []string{Identity{Name: "alice", Method: ByToken}.Encode()}})
	if err != nil || id.Name != "alice" || id.ForwardedBy != "east" {
		t.Errorf("east forwarding for alice: %v %v", id, err)
	}
	if _, err := a.Authenticate(time.Now(), Credentials{Chains: [][]*x509.Certificate{{leaf(dir, "alice")}}, Caller: []string{"token:root"}}); !errors.Is(err, ErrAssertion) {
		t.Errorf("a user asserting a caller: %v", err)
	}
}
