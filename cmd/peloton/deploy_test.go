package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
)

// The three-region example configs pass `peloton server --check-config`,
// and a broken one does not.
func TestExampleConfigsCheck(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "examples", "*.yaml"))
	if err != nil || len(files) != 3 {
		t.Fatalf("deploy/examples: %v %v, want three region configs", files, err)
	}
	// They are secured: a lab PKI, a token file and a policy in PELOTON_ETC.
	etc := t.TempDir()
	for _, args := range [][]string{
		{"tls", "init", "--dir", filepath.Join(etc, "pki"), "--regions", "east,west,central", "--hosts", "10.1.0.10,10.2.0.10,10.3.0.10"},
		{"auth", "token", "create", "admin", "--file", filepath.Join(etc, "tokens.yaml")},
	} {
		root := cli.NewRootCommand()
		root.AddCommand(newTLSCommand())
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("peloton %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
	policy, err := os.ReadFile(filepath.Join("..", "..", "deploy", "secured", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "policy.yaml"), policy, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PELOTON_ETC", etc)
	run := func(path string) (string, error) {
		cmd := newServerCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"--config", path, "--check-config"})
		err := cmd.Execute()
		return out.String(), err
	}
	regions := map[string]bool{}
	for _, f := range files {
		out, err := run(f)
		if err != nil || !strings.Contains(out, "valid") {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
		c, err := loadServerConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		regions[c.Region] = true
		kinds := map[string]bool{}
		for _, h := range c.Hosts {
			s, _ := parsePluginSpec(h)
			kinds[s.Kind] = true
		}
		if c.Store.Kind != "cassandra" || !kinds["mesos"] || !kinds["k8s"] || c.Gossip == nil || c.HA == nil {
			t.Errorf("%s: want a Cassandra store, a Mesos and a Kubernetes cluster, gossip and HA", f)
		}
	}
	if len(regions) != 3 {
		t.Errorf("regions %v, want three different ones", regions)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	data, _ := os.ReadFile(files[0])
	os.WriteFile(bad, bytes.Replace(data, []byte("k8s:k8s-"), []byte("kubernetes:k8s-"), 1), 0o644)
	if out, err := run(bad); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("a config with an unknown host manager kind passed: %v %s", err, out)
	}
}

// The systemd units pass `systemd-analyze verify` without a warning (the
// binaries they start pointed at stand-ins that exist here).
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is needed (Debian: apt-get install systemd)")
	}
	units, _ := filepath.Glob(filepath.Join("..", "..", "deploy", "systemd", "*.service"))
	if len(units) < 2 {
		t.Fatalf("deploy/systemd: %v", units)
	}
	self, _ := os.Executable()
	dir := t.TempDir()
	var paths []string
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("/usr/local/bin/peloton", self, "/opt/cassandra/bin/cassandra", self).Replace(string(data))
		p := filepath.Join(dir, filepath.Base(u))
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, paths...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// It does catch mistakes.
	broken := filepath.Join(dir, "broken.service")
	os.WriteFile(broken, []byte("[Service]\nExecStart="+self+"\nRestart=sometimes\n"), 0o644)
	if out, _ := exec.Command(analyze, "verify", broken).CombinedOutput(); len(bytes.TrimSpace(out)) == 0 {
		t.Fatal("systemd-analyze verify said nothing of a broken unit")
	}
}
