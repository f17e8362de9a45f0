package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr/local"
	"github.com/peloton-federated/peloton/shard/model"
)

func TestPortsParam(t *testing.T) {
	cases := []struct {
		spec    string
		want    []model.PortRange
		wantErr string
	}{
		{spec: "local", want: nil},
		{spec: "local,ports=31000-31999", want: []model.PortRange{{From: 31000, To: 31999}}},
		{spec: "local,ports=40000-40010|8080", want: []model.PortRange{{From: 40000, To: 40010}, {From: 8080, To: 8080}}},
		{spec: "local,ports=31000-", wantErr: `ports="31000-": "31000-" is not a port range like 31000-31999`},
		{spec: "local,ports=a-b", wantErr: `"a-b" is not a port range`},
		{spec: "local,ports=1-70000", wantErr: `"1-70000" is not a port range`},
		{spec: "local,ports=1-2|", wantErr: `"" is not a port range`},
	}
	for _, tc := range cases {
		s, err := parsePluginSpec(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.portsParam("ports")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

// taskReachableDir is a temporary data directory whose parent the users
// local tasks run as may search (t.TempDir makes it 0700).
func taskReachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLocalHostsOptionSetsPorts(t *testing.T) {
	plugins, err := buildPlugins([]string{"local,ports=41000-41099"}, pluginEnv{DataDir: taskReachableDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	h := plugins[0].(*local.Plugin).Host()
	if !slices.Equal(h.Ports, []model.PortRange{{From: 41000, To: 41099}}) || h.RunsImages {
		t.Errorf("host ports %v, runs images %v", h.Ports, h.RunsImages)
	}
	_, err = buildPlugins([]string{"local,ports=200-100"}, pluginEnv{DataDir: taskReachableDir(t)})
	if err == nil || !strings.Contains(err.Error(), "--hosts local:") || !strings.Contains(err.Error(), "range 200-100 ends before it starts") {
		t.Errorf("reversed range: err = %v", err)
	}
}

func TestLocalHostsUserParams(t *testing.T) {
	cases := []struct {
		spec     string
		wantUIDs local.UIDRange
		wantUser string
		wantErr  string
	}{
		{spec: "local"},
		{spec: "local,uids=300000-300999", wantUIDs: local.UIDRange{From: 300000, To: 300999}},
		{spec: "local,user=nobody", wantUser: "nobody"},
		{spec: "local,uids=0-10", wantErr: `--hosts local: uids="0-10": uid 0 is root`},
		{spec: "local,uids=lots", wantErr: `--hosts local: uids="lots": "lots" is not a uid range like 200000-265535`},
		{spec: "local,user=", wantErr: `--hosts local: user="": not a user name or number`},
		{spec: "local,user=a b", wantErr: `--hosts local: user="a b": not a user name or number`},
	}
	for _, tc := range cases {
		s, err := parsePluginSpec(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := localConfig(s, pluginEnv{DataDir: "/data"})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cfg.UIDs != tc.wantUIDs || cfg.User != tc.wantUser || cfg.TraverseFrom != "/data" || cfg.Dir != "/data/hosts/local" {
			t.Errorf("%s: %+v, %v", tc.spec, cfg, err)
		}
	}
	// A user that does not exist is refused when the plugin is made.
	_, err := buildPlugins([]string{"local,user=no-such-user-here"}, pluginEnv{DataDir: taskReachableDir(t)})
	if err == nil || !strings.Contains(err.Error(), `User: user "no-such-user-here"`) {
		t.Errorf("unknown user: err = %v", err)
	}
}

// A secured server refuses a local host that cannot sandbox its tasks,
// unless allowed; dev mode and a host that sandboxes are never refused.
func TestSecuredServerRefusesUnsandboxedLocalHosts(t *testing.T) {
	cases := []struct {
		sandboxed, secured, allowed bool
		refused                     bool
	}{
		{sandboxed: true, secured: true},
		{secured: true, refused: true},
		{secured: true, allowed: true},
		{},
	}
	for _, tc := range cases {
		err := checkSandbox("local", tc.sandboxed, pluginEnv{Secured: tc.secured, AllowUnsandboxed: tc.allowed})
		if refused := errors.Is(err, errUnsandboxed); refused != tc.refused {
			t.Errorf("%+v: err = %v", tc, err)
		}
		if err != nil && (!strings.Contains(err.Error(), allowUnsandboxedFlag) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("the refusal is not one line naming %s: %v", allowUnsandboxedFlag, err)
		}
	}
}
