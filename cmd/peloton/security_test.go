package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth"
)

func TestExposed(t *testing.T) {
	secured := func(c *serverConfig) {
		c.TLS = &struct {
			Cert string `json:"cert"`
			Key  string `json:"key"`
			CA   string `json:"ca"`
		}{"c", "k", "ca"}
		c.Auth = &authConfig{Tokens: "t", Policy: "p"}
	}
	for _, c := range []struct {
		addr, gossipBind, key string
		secure                bool
		want                  string
	}{
		{addr: "127.0.0.1:5390"},
		{addr: "localhost:5390"},
		{addr: "[::1]:5390"},
		{addr: "127.0.0.3:5390", gossipBind: "127.0.0.3:7946"},
		{addr: "10.0.0.1:5390", want: "the API on 10.0.0.1:5390 without TLS and authentication"},
		{addr: ":5390", want: "the API on :5390"},
		{addr: "10.0.0.1:5390", secure: true},
		{addr: "10.0.0.1:5390", secure: true, gossipBind: "10.0.0.1:7946", want: "gossip on 10.0.0.1:7946 without encryption"},
		{addr: "10.0.0.1:5390", secure: true, gossipBind: "10.0.0.1:7946", key: "k"},
	} {
		cfg := &serverConfig{Addr: c.addr}
		if c.secure {
			secured(cfg)
		}
		if c.gossipBind != "" {
			cfg.Gossip = &gossipSection{Bind: c.gossipBind, EncryptKey: c.key}
		}
		got := exposed(cfg)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}

func TestServerConfigSecurity(t *testing.T) {
	dir := t.TempDir()
	if _, err := (auth.LabPKI{Dir: dir, Regions: []string{"east"}, Clients: []string{"alice"}, Now: time.Now()}).Init(); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		name, extra string
		wantErrs    map[string]string
	}{
		{"secured", "tls: {cert: " + p("east.crt") + ", key: " + p("east.key") + ", ca: " + p("ca.crt") + "}\nauth: {tokens: t.yaml, policy: p.yaml}\n", nil},
		{"another region's certificate", "region: west\ntls: {cert: " + p("east.crt") + ", key: " + p("east.key") + ", ca: " + p("ca.crt") + "}\n",
			map[string]string{"tls.cert": `region "east", not of "west"`}},
		{"a user's certificate", "tls: {cert: " + p("alice.crt") + ", key: " + p("alice.key") + ", ca: " + p("ca.crt") + "}\n",
			map[string]string{"tls.cert": "not a region certificate"}},
		{"gossip without a key", "tls: {cert: " + p("east.crt") + ", key: " + p("east.key") + ", ca: " + p("ca.crt") + "}\ngossip: {bind: 127.0.0.1:7946}\n",
			map[string]string{"gossip.encryptKey": "required with tls"}},
		{"auth without a policy", "auth: {tokens: t.yaml}\n", map[string]string{"auth.policy": "is required"}},
		{"tls without files", "tls: {}\n", map[string]string{"tls.cert": "is required", "tls.key": "is required", "tls.ca": "is required"}},
		{"short audit retention", "audit: {retention: 1m}\n", map[string]string{"audit.retention": "at least 1h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.yaml")
			region := "region: east\n"
			if strings.HasPrefix(c.extra, "region:") {
				region = ""
			}
			if err := os.WriteFile(path, []byte(region+"dataDir: /tmp/x\nhosts: [sim]\n"+c.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadServerConfig(path)
			if len(c.wantErrs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			for field, msg := range c.wantErrs {
				if err == nil || !strings.Contains(err.Error(), "\n  "+field+": ") || !strings.Contains(err.Error(), msg) {
					t.Errorf("error does not name %s with %q:\n%v", field, msg, err)
				}
			}
		})
	}
}
