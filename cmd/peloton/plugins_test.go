package main

import (
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

func TestLocalHostsOptionSetsPorts(t *testing.T) {
	plugins, err := buildPlugins([]string{"local,ports=41000-41099"}, pluginEnv{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := plugins[0].(*local.Plugin).Host()
	if !slices.Equal(h.Ports, []model.PortRange{{From: 41000, To: 41099}}) || h.RunsImages {
		t.Errorf("host ports %v, runs images %v", h.Ports, h.RunsImages)
	}
	_, err = buildPlugins([]string{"local,ports=200-100"}, pluginEnv{DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "--hosts local:") || !strings.Contains(err.Error(), "range 200-100 ends before it starts") {
		t.Errorf("reversed range: err = %v", err)
	}
}
