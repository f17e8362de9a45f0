package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/federation/policy"
)

// validConfig is the smallest valid server config, by top-level field.
var validConfig = map[string]string{
	"region":  "east",
	"dataDir": "/var/lib/peloton",
	"hosts":   "[sim]",
}

// configWith is validConfig with the top-level fields of set replaced
// (a field set to "" is left out), as YAML.
func configWith(set map[string]string) []byte {
	fields := maps.Clone(validConfig)
	maps.Copy(fields, set)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if fields[k] != "" {
			b.WriteString(k + ": " + fields[k] + "\n")
		}
	}
	return []byte(b.String())
}

// Every bad field is refused with one problem that names it and says
// what is wrong.
func TestServerConfigNamesTheBadField(t *testing.T) {
	cases := []struct {
		set map[string]string
		// want: the problems, each "field: a piece of its message", in
		// the order they are listed.
		want []string
	}{
		{set: map[string]string{"region": ""}, want: []string{"region: is required"}},
		{set: map[string]string{"dataDir": ""}, want: []string{"dataDir: is required"}},
		{set: map[string]string{"hosts": "[]"}, want: []string{"hosts: at least one host manager cluster is required"}},
		{set: map[string]string{"store": "{kind: etcd}"}, want: []string{`store.kind: must be embedded or cassandra, not "etcd"`}},
		{set: map[string]string{"store": "{kind: cassandra}"}, want: []string{"store.cassandra.hosts: is required with store.kind cassandra"}},
		{set: map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h], replication: x=y=z}}"}, want: []string{"store.cassandra.replication: "}},
		{set: map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h], timeout: 1h}}"}, want: []string{"store.cassandra.timeout: must be between 100ms and 5m, not 1h0m0s"}},
		{set: map[string]string{"ha": "{}"}, want: []string{"ha: needs store.kind cassandra"}},
		{set: map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h]}}", "ha": "{leaseTTL: 10ms}"}, want: []string{"ha.leaseTTL: must be at least 1s"}},
		{set: map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h]}}", "ha": "{lease: etcd}"}, want: []string{`ha.lease: must be store or kubernetes, not "etcd"`}},
		{set: map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h]}}", "ha": "{namespace: ns}"}, want: []string{"ha.namespace: is only read with ha.lease kubernetes"}},
		{set: map[string]string{"entitlementPeriod": "-1s"}, want: []string{"entitlementPeriod: must be > 0"}},
		{set: map[string]string{"history": "{interval: 10ms}"}, want: []string{"history.interval: must be at least 1s"}},
		{set: map[string]string{"events": "{retention: 1s}"}, want: []string{"events.retention: must be at least 1m"}},
		{set: map[string]string{"hostPools": "{period: 1ms}"}, want: []string{`hostPools.period: "1ms": want a duration of at least 100ms`}},
		{set: map[string]string{"hostPools": "{floors: {Batch: 1}}"}, want: []string{"hostPools.floors.Batch: not a host pool name"}},
		{set: map[string]string{"hostPools": "{floors: {batch: -1}}"}, want: []string{"hostPools.floors.batch: must be >= 0"}},
		{set: map[string]string{"hostPools": "{drainDeadline: -1s}"}, want: []string{"hostPools.drainDeadline: must be >= 0"}},
		{set: map[string]string{"gossip": "{}"}, want: []string{"gossip.bind: is required (host:port)"}},
		{set: map[string]string{"gossip": "{bind: 127.0.0.1:7946, encryptKey: c2hvcnQ=}"}, want: []string{"gossip.encryptKey: must be base64 of 16, 24 or 32 bytes"}},
		{set: map[string]string{"gossip": "{bind: 127.0.0.1:7946, profile: moon}"}, want: []string{`gossip.profile: must be wan, lan or local, not "moon"`}},
		{set: map[string]string{"limits": "{inFlight: -1}"}, want: []string{"limits.inFlight: must be between 1 and 100000"}},
		{set: map[string]string{"tls": "{cert: c.pem, ca: ca.pem}"}, want: []string{"tls.key: is required"}},
		{set: map[string]string{"auth": "{policy: p.yaml}"}, want: []string{"auth: needs tokens, oidc, or tls.ca"}},
		{set: map[string]string{"auth": "{tokens: t.yaml, policy: p.yaml, policySource: git}"}, want: []string{`auth.policySource: must be file or store, not "git"`}},
		{set: map[string]string{"auth": "{policy: p.yaml, oidc: {issuer: 'http://idp.example.com', audience: a}}"}, want: []string{"auth.oidc.issuer: must be https"}},
		{set: map[string]string{"auth": "{policy: p.yaml, oidc: {issuer: 'https://idp.example.com'}}"}, want: []string{"auth.oidc.audience: is required"}},
		{set: map[string]string{"auth": "{policy: p.yaml, oidc: {issuer: 'https://idp.example.com', audience: a, clientId: ui, scopes: [openid, 'email profile']}}"}, want: []string{`auth.oidc.scopes: "email profile" is not a scope`}},
		{set: map[string]string{"audit": "{retention: 1m}"}, want: []string{"audit.retention: must be at least 1h"}},
		{set: map[string]string{"health": "{suspectAfter: 10s, failAfter: 5s, recoverAfter: 5s}"}, want: []string{"health: "}},
		// Several problems are all listed, in the order of the sections.
		{set: map[string]string{"region": "", "dataDir": "", "gossip": "{profile: moon}"},
			want: []string{"region: is required", "dataDir: is required", "gossip.bind: is required", "gossip.profile: must be"}},
	}
	for _, c := range cases {
		raw := configWith(c.set)
		t.Run(strings.Split(c.want[0], ":")[0], func(t *testing.T) {
			cfg, err := parseServerConfig(raw)
			if err != nil {
				t.Fatalf("parse %s: %v", raw, err)
			}
			got := cfg.check()
			if len(got) != len(c.want) {
				t.Fatalf("%s: problems %q, want %q", raw, got, c.want)
			}
			for i, w := range c.want {
				field, _, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(got[i], field+": ") || !strings.Contains(got[i], w) {
					t.Errorf("%s: problem %d is %q, want %q", raw, i, got[i], w)
				}
			}
		})
	}
}

// What a config leaves out takes its default.
func TestServerConfigDefaults(t *testing.T) {
	withHA := map[string]string{"store": "{kind: cassandra, cassandra: {hosts: [h]}}", "ha": "{}"}
	cases := []struct {
		name  string
		set   map[string]string
		check func(c *serverConfig) bool
	}{
		{"addr", nil, func(c *serverConfig) bool { return c.Addr == "127.0.0.1:5390" }},
		{"addr given", map[string]string{"addr": "127.0.0.1:6000"}, func(c *serverConfig) bool { return c.Addr == "127.0.0.1:6000" }},
		{"entitlementPeriod", nil, func(c *serverConfig) bool { return time.Duration(c.EntitlementPeriod) == time.Second }},
		{"ha.leaseTTL and ha.lease", withHA, func(c *serverConfig) bool {
			return time.Duration(c.HA.LeaseTTL) == 10*time.Second && c.HA.Lease == leaseInStore
		}},
		{"health", nil, func(c *serverConfig) bool { return c.healthConfig() == policy.DefaultHealthConfig() }},
		{"health given", map[string]string{"health": "{suspectAfter: 3s, failAfter: 20s, recoverAfter: 20s}"}, func(c *serverConfig) bool {
			return c.healthConfig() == policy.HealthConfig{SuspectAfter: 3 * time.Second, FailAfter: 20 * time.Second, RecoverAfter: 20 * time.Second}
		}},
		{"limits", nil, func(c *serverConfig) bool { return c.Limits.RequestBytes == 1<<20 && c.Limits.JobsPerRequest == 1000 }},
		{"store", nil, func(c *serverConfig) bool { return c.Store.Kind == "" && c.storeOpener(nil) == nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseServerConfig(configWith(c.set))
			if err != nil {
				t.Fatal(err)
			}
			if problems := cfg.check(); len(problems) > 0 {
				t.Fatalf("problems: %q", problems)
			}
			if !c.check(cfg) {
				t.Errorf("after defaults: %+v", cfg)
			}
		})
	}
}

// A file that cannot be read as a config is refused with the file's name
// and the reason, before any field is checked.
func TestLoadServerConfigErrors(t *testing.T) {
	t.Setenv("PELOTON_TEST_IP", "127.0.0.9")
	cases := []struct {
		name, text string
		want       string // after "PATH"
	}{
		{"not YAML", "region: [east", ": not valid YAML: "},
		{"an unknown field", "regoin: east\n", `: json: unknown field "regoin"`},
		{"a duration that is not one", "entitlementPeriod: soon\n", `"soon" is not a duration like 30s`},
		{"an unset variable", "addr: ${PELOTON_TEST_NOT_SET}:5390\n", ": environment variables not set: PELOTON_TEST_NOT_SET"},
		{"bad fields", "hosts: []\n", " is not a valid server config:\n  region: is required\n  dataDir: is required\n  hosts: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.yaml")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadServerConfig(path)
			if err == nil || !strings.HasPrefix(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("loadServerConfig: %v, want %s%s", err, path, c.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "server.yaml")
	if err := os.WriteFile(path, []byte("region: east\ndataDir: /d\nhosts: [sim]\naddr: ${PELOTON_TEST_IP}:5390\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadServerConfig(path)
	if err != nil || cfg.Addr != "127.0.0.9:5390" {
		t.Fatalf("with a variable set: %+v, %v", cfg, err)
	}
}
