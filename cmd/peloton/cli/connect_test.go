package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Connection settings: flags win over the environment, which wins over
// the current context, which wins over the defaults.
func TestConnectionSettings(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envConfig, filepath.Join(dir, "config.yaml"))
	for _, env := range []string{envAddr, envToken, envCA, envCert, envKey, envContext} {
		t.Setenv(env, "")
	}
	tokenFile := filepath.Join(dir, "east.token")
	if err := os.WriteFile(tokenFile, []byte("pel_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(argv ...string) (*app, string) {
		a := &app{}
		root := newRootCommand(a)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(argv)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return a, out.String()
	}
	run("context", "set", "east", "--addr", "east:5390", "--ca", "ca.crt", "--token-file", tokenFile)
	run("context", "set", "west", "--addr", "https://west:5390")
	_, list := run("context", "list")
	if !strings.Contains(list, "*        east") || !strings.Contains(list, "west") {
		t.Fatalf("context list:\n%s", list)
	}
	resolve := func(argv ...string) connection {
		a, _ := run(append([]string{"context", "list"}, argv...)...)
		c, err := a.resolve()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := resolve()
	if c.addr != "east:5390" || c.token != "pel_fromfile" || !strings.HasSuffix(c.ca, "ca.crt") || !c.tls || c.context != "east" {
		t.Fatalf("from the current context: %+v", c)
	}
	t.Setenv(envAddr, "env:1")
	if c := resolve(); c.addr != "env:1" || c.token != "pel_fromfile" {
		t.Fatalf("the environment over the context: %+v", c)
	}
	if c := resolve("--addr", "flag:2", "--token", "pel_flag"); c.addr != "flag:2" || c.token != "pel_flag" {
		t.Fatalf("flags over the environment: %+v", c)
	}
	t.Setenv(envAddr, "")
	run("context", "use", "west")
	if c := resolve(); c.addr != "https://west:5390" || !c.tls || c.token != "" {
		t.Fatalf("after context use west: %+v", c)
	}
	if c := resolve("--context", "east"); c.addr != "east:5390" {
		t.Fatalf("--context east: %+v", c)
	}
	// A token is not sent in the clear off loopback.
	plain := connection{addr: "10.0.0.1:5390", token: "pel_x"}
	if _, err := plain.dialOptions("10.0.0.1:5390"); err == nil || !strings.Contains(err.Error(), "in the clear") {
		t.Fatalf("token in the clear: %v", err)
	}
	if _, err := plain.dialOptions("127.0.0.1:5390"); err != nil {
		t.Fatalf("token to loopback: %v", err)
	}
}
