package ha

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// The same takeover with the region's lease in a Kubernetes Lease object
// ("peloton-r") of a real kube-apiserver (ha.lease kubernetes) instead of
// Cassandra; the test reads the object to check who holds it at which
// term (spec.leaseTransitions).
func TestStandbyFinishesTheJobKubernetesLease(t *testing.T) {
	cassandraAddr(t) // skip before starting a control plane
	kubeconfig := testkit.Kube(t)
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ns = "peloton-ha"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	leaseHolder := func() (string, uint64) {
		l, err := client.CoordinationV1().Leases(ns).Get(ctx, "peloton-r", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the region's Lease: %v", err)
		}
		if l.Spec.HolderIdentity == nil || l.Spec.LeaseTransitions == nil {
			return "", 0
		}
		return *l.Spec.HolderIdentity, uint64(*l.Spec.LeaseTransitions)
	}
	standbyFinishesTheJob(t, fmt.Sprintf("ha: {leaseTTL: 3s, lease: kubernetes, kubeconfig: %s, namespace: %s}", kubeconfig, ns), leaseHolder)
}
