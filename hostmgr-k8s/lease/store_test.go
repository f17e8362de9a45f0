package lease

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/storetest"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// TestContract runs the store's lease contract suite on a real
// kube-apiserver (deploy/k8s/cluster.sh; skipped when it is not built,
// failed when CI=true), each subtest in a namespace of its own.
func TestContract(t *testing.T) {
	kubeconfig := testkit.Kube(t)
	rc, err := RESTConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	storetest.RunLeases(t, func(t *testing.T) storetest.LeaseBackend {
		ns := fmt.Sprintf("lease-%d-%d", time.Now().Unix()%100000, n.Add(1))
		_, err := client.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating namespace %s: %v", ns, err)
		}
		s, err := New(Config{Kubeconfig: kubeconfig, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})

	// A missing namespace is named, not taken for an API server that is
	// down or a lease held by another.
	t.Run("MissingNamespace", func(t *testing.T) {
		s, err := New(Config{Kubeconfig: kubeconfig, Namespace: "no-such-namespace"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.AcquireLease(context.Background(), "shard", "a", time.Minute)
		if err == nil || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrConflict) ||
			!strings.Contains(err.Error(), "namespace no-such-namespace does not exist") {
			t.Fatalf("AcquireLease in a missing namespace: %v, want an error naming it", err)
		}
	})
}

// TestUnreachableAPIServer checks that every call to an API server that
// does not answer is store.ErrUnavailable.
func TestUnreachableAPIServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + addr, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Client: client, Namespace: "peloton"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]error{
		"RenewLease":   s.RenewLease(ctx, "shard", "a", 1, time.Minute),
		"ReleaseLease": s.ReleaseLease(ctx, "shard", "a", 1),
	}
	_, checks["AcquireLease"] = s.AcquireLease(ctx, "shard", "a", time.Minute)
	_, _, checks["LeaseHolder"] = s.LeaseHolder(ctx, "shard")
	for call, err := range checks {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", call, err)
		}
	}
}

// TestCallerCancellation checks that the caller's own cancellation is
// answered as such, not as an unavailable API server.
func TestCallerCancellation(t *testing.T) {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Client: client, Namespace: "peloton"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.AcquireLease(ctx, "shard", "a", time.Minute)
	if !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("AcquireLease with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cases := map[string]Config{
		"no namespace":              {Kubeconfig: "/nonexistent"},
		"namespace not a DNS label": {Namespace: "Peloton_NS", Kubeconfig: "/nonexistent"},
		"kubeconfig missing":        {Namespace: "peloton", Kubeconfig: "/nonexistent/kubeconfig"},
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	cases["in-cluster outside a pod"] = Config{Namespace: "peloton"}
	for name, cfg := range cases {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}
