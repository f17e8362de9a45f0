package k8s

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestParsePortRanges(t *testing.T) {
	tests := []struct {
		in   string
		want []model.PortRange
	}{
		{"31000-32000", []model.PortRange{{From: 31000, To: 32000}}},
		{"8080", []model.PortRange{{From: 8080, To: 8080}}},
		{"31000-31010+40000-40100", []model.PortRange{{From: 31000, To: 31010}, {From: 40000, To: 40100}}},
		{"", nil}, {"0-10", nil}, {"20-10", nil}, {"1-70000", nil}, {"a-b", nil}, {"31000-", nil},
	}
	for _, tc := range tests {
		got, err := ParsePortRanges(tc.in)
		if tc.want == nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("ParsePortRanges(%q) = %v, %v; want an invalid config error", tc.in, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePortRanges(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigPortsAndVolumes(t *testing.T) {
	cfg, err := Config{Cluster: "c", Client: fake.NewSimpleClientset()}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Ports, model.DefaultPorts) || cfg.VolumeBasePath != DefaultVolumeBasePath || cfg.StorageClass != DefaultStorageClass {
		t.Fatalf("defaults: ports %v base %q class %q", cfg.Ports, cfg.VolumeBasePath, cfg.StorageClass)
	}
	for _, bad := range []Config{
		{Cluster: "c", Client: fake.NewSimpleClientset(), VolumeBasePath: "relative"},
		{Cluster: "c", Client: fake.NewSimpleClientset(), Ports: []model.PortRange{{From: 10, To: 5}}},
	} {
		if _, err := bad.withDefaults(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v accepted: %v", bad, err)
		}
	}
}
