package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`

// writeServerConfig writes a server config with the given ha section
// (and region) to a file and returns its path.
func writeServerConfig(t *testing.T, region, ha string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.yaml")
	cfg := "region: " + region + `
dataDir: /var/lib/peloton
hosts: ["sim"]
store: {kind: cassandra, cassandra: {hosts: [127.0.0.1]}}
` + ha
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServerConfigHALease(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		region string
		ha     string
		// wantErrs are the fields the error must name, each with a
		// piece of its message; none: the config is valid.
		wantErrs map[string]string
		// wantLease is ha.lease after defaults.
		wantLease string
	}{
		{name: "lease in the store by default", region: "east", ha: "ha: {leaseTTL: 5s}", wantLease: "store"},
		{name: "lease in the store", region: "east", ha: "ha: {lease: store}", wantLease: "store"},
		{name: "kubernetes lease", region: "us-east-1",
			ha:        "ha: {leaseTTL: 10s, lease: kubernetes, kubeconfig: " + kubeconfig + ", namespace: peloton}",
			wantLease: "kubernetes"},
		{name: "unknown lease kind", region: "east", ha: "ha: {lease: etcd}",
			wantErrs: map[string]string{"ha.lease": `must be store or kubernetes, not "etcd"`}},
		{name: "kubernetes fields with the store's lease", region: "east",
			ha: "ha: {kubeconfig: " + kubeconfig + ", namespace: peloton}",
			wantErrs: map[string]string{
				"ha.kubeconfig": "only read with ha.lease kubernetes",
				"ha.namespace":  "only read with ha.lease kubernetes",
			}},
		{name: "kubernetes lease without a namespace", region: "east",
			ha:       "ha: {lease: kubernetes, kubeconfig: " + kubeconfig + "}",
			wantErrs: map[string]string{"ha.namespace": "is required with ha.lease kubernetes"}},
		{name: "kubernetes lease in a namespace that cannot exist", region: "east",
			ha:       "ha: {lease: kubernetes, kubeconfig: " + kubeconfig + ", namespace: Peloton_NS}",
			wantErrs: map[string]string{"ha.namespace": `"Peloton_NS" is not a Kubernetes namespace name`}},
		{name: "kubernetes lease for a region that cannot name a Lease", region: "US_East",
			ha:       "ha: {lease: kubernetes, kubeconfig: " + kubeconfig + ", namespace: peloton}",
			wantErrs: map[string]string{"region": `cannot name the Lease "peloton-US_East"`}},
		{name: "kubeconfig that does not exist", region: "east",
			ha:       "ha: {lease: kubernetes, kubeconfig: /nonexistent/kubeconfig, namespace: peloton}",
			wantErrs: map[string]string{"ha.kubeconfig": "/nonexistent/kubeconfig"}},
		{name: "in-cluster config outside a pod", region: "east",
			ha:       "ha: {lease: kubernetes, namespace: peloton}",
			wantErrs: map[string]string{"ha.kubeconfig": "no kubeconfig given, and no in-cluster config"}},
		{name: "ttl too short", region: "east",
			ha:       "ha: {leaseTTL: 500ms, lease: kubernetes, kubeconfig: " + kubeconfig + ", namespace: peloton}",
			wantErrs: map[string]string{"ha.leaseTTL": "at least 1s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadServerConfig(writeServerConfig(t, c.region, c.ha))
			if len(c.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("loadServerConfig: %v", err)
				}
				if cfg.HA.Lease != c.wantLease {
					t.Fatalf("ha.lease = %q, want %q", cfg.HA.Lease, c.wantLease)
				}
				return
			}
			if err == nil {
				t.Fatalf("loadServerConfig accepted %s", c.ha)
			}
			for field, msg := range c.wantErrs {
				if !strings.Contains(err.Error(), "\n  "+field+": ") || !strings.Contains(err.Error(), msg) {
					t.Errorf("error does not name %s with %q:\n%v", field, msg, err)
				}
			}
		})
	}
}

func TestServerConfigKubernetesLeaseNeedsASharedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.yaml")
	cfg := `region: east
dataDir: /var/lib/peloton
hosts: ["sim"]
ha: {lease: kubernetes, kubeconfig: /nonexistent, namespace: peloton}
`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadServerConfig(path)
	if err == nil || !strings.Contains(err.Error(), "ha: needs store.kind cassandra") {
		t.Fatalf("loadServerConfig: %v, want ha to need the shared store", err)
	}
}

func TestServerConfigHADefaults(t *testing.T) {
	cfg, err := loadServerConfig(writeServerConfig(t, "east", "ha: {}"))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(cfg.HA.LeaseTTL) != 10*time.Second || cfg.HA.Lease != leaseInStore {
		t.Fatalf("ha defaults: ttl %v, lease %q", time.Duration(cfg.HA.LeaseTTL), cfg.HA.Lease)
	}
}

func TestServerConfigCassandraTimeout(t *testing.T) {
	write := func(t *testing.T, timeout string) string {
		path := filepath.Join(t.TempDir(), "server.yaml")
		cfg := `region: east
dataDir: /var/lib/peloton
hosts: ["sim"]
store: {kind: cassandra, cassandra: {hosts: [127.0.0.1], timeout: ` + timeout + `}}
`
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg, err := loadServerConfig(write(t, "3s"))
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(cfg.Store.Cassandra.Timeout); got != 3*time.Second {
		t.Fatalf("store.cassandra.timeout = %v, want 3s", got)
	}
	for _, bad := range []string{"10ms", "1h", "-1s"} {
		_, err := loadServerConfig(write(t, bad))
		if err == nil || !strings.Contains(err.Error(), "store.cassandra.timeout: must be between 100ms and 5m") {
			t.Errorf("timeout %s: %v, want it refused naming the field", bad, err)
		}
	}
	if _, err := loadServerConfig(write(t, "soon")); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Errorf("timeout soon: %v, want a parse error", err)
	}
}
