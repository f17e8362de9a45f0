package k8s

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

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

// The client built from a kubeconfig sets no client-side rate limit unless
// QPS asks for one, speaks protobuf, and bounds launches by
// LaunchParallelism.
func TestConfigClientLimits(t *testing.T) {
	var contentType, accept atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		contentType.Store(r.Header.Get("Content-Type"))
		accept.Store(r.Header.Get("Accept"))
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "`+srv.URL+`"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user: {token: t}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		cfg      Config
		limited  bool
		qps      float32
		burst    int
		parallel int
	}{
		{"defaults", Config{}, false, 0, 0, DefaultLaunchParallelism},
		{"qps", Config{QPS: 200}, true, 200, 400, DefaultLaunchParallelism},
		{"qps and burst", Config{QPS: 200, Burst: 250, LaunchParallelism: 8}, true, 200, 250, 8},
	}
	for _, tc := range tests {
		tc.cfg.Cluster, tc.cfg.Kubeconfig = "c", kc
		cfg, err := tc.cfg.withDefaults()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.QPS != tc.qps || cfg.Burst != tc.burst || cfg.LaunchParallelism != tc.parallel {
			t.Errorf("%s: QPS %v burst %d parallel %d, want %v %d %d", tc.name, cfg.QPS, cfg.Burst, cfg.LaunchParallelism, tc.qps, tc.burst, tc.parallel)
		}
		rc := cfg.Client.(*kubernetes.Clientset).CoreV1().RESTClient().(*rest.RESTClient)
		if limited := rc.GetRateLimiter() != nil; limited != tc.limited {
			t.Errorf("%s: client rate limiter set = %v, want %v", tc.name, limited, tc.limited)
		}
		if got := rc.GetRateLimiter(); got != nil && got.QPS() != tc.qps {
			t.Errorf("%s: client QPS %v, want %v", tc.name, got.QPS(), tc.qps)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
		if _, err := cfg.Client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err == nil {
			t.Fatalf("%s: create answered 403 succeeded", tc.name)
		}
		if ct, _ := contentType.Load().(string); ct != ProtobufContentType {
			t.Errorf("%s: pod create sent as %q, want protobuf", tc.name, ct)
		}
		if a, _ := accept.Load().(string); !strings.HasPrefix(a, ProtobufContentType) {
			t.Errorf("%s: Accept %q does not prefer protobuf", tc.name, a)
		}
	}
	if _, err := (Config{Cluster: "c", Kubeconfig: kc, QPS: -1}).withDefaults(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative QPS accepted: %v", err)
	}
}
