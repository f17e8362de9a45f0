package k8stest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// Shared by every test of the package.
var (
	pelotonBin string
	clusterDir string
	kubeconfig string
	kube       kubernetes.Interface
	// unavailable says why the control plane could not be started.
	unavailable string
)

// TestMain starts one control plane for every test of the package (or
// uses the kept one of $PELOTON_K8S_CLUSTER) and builds the binary.
func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	stop, err := startCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return testkit.Run(m, &pelotonBin)
}

// startCluster starts etcd, kube-apiserver and kwok; the function it
// returns stops them. Without them the tests are skipped, or, under
// PELOTON_TEST_STRICT, the package fails.
func startCluster() (func(), error) {
	tmp, err := os.MkdirTemp("", "peloton-k8s-test")
	if err != nil {
		return nil, err
	}
	c, err := testkit.StartKubeCluster(filepath.Join(tmp, "cluster"))
	if err == nil {
		clusterDir = c.Dir
		err = connect(c.Kubeconfig)
	}
	stop := func() {
		if c != nil {
			c.Stop()
		}
		os.RemoveAll(tmp)
	}
	if err != nil {
		unavailable = err.Error()
		if testenv.Strict() {
			stop()
			return nil, fmt.Errorf("FAIL: the Kubernetes test control plane is not available: %s\n"+
				"Build it with: bash deploy/k8s/cluster.sh build", unavailable)
		}
	}
	return stop, nil
}

// connect makes the package's client of the control plane.
func connect(config string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", config)
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	kubeconfig, kube = config, client
	return nil
}

// needCluster skips a test when the control plane is not available (and
// not in CI, where TestMain already failed).
func needCluster(t testing.TB) {
	t.Helper()
	if unavailable != "" {
		testenv.Missing(t, "the Kubernetes test control plane", unavailable+"; build it with deploy/k8s/cluster.sh build")
	}
}

// newNamespace creates a namespace for one test's pods.
func newNamespace(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// addNodes creates fake nodes that kwok keeps Ready, and deletes them when
// the test ends.
func addNodes(t testing.TB, cpu, mem string, labels map[string]string, names ...string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		}}
		if err := createNode(ctx, node, cpu, mem); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, name := range names {
			_ = kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	// kwok fills in a new node's status with its own sizes (1000 cpu) when
	// it first takes the node, which may come after the sizing above: a
	// node is ready once it is Ready at the size asked, sized again if
	// kwok's status won.
	want := resource.MustParse(cpu)
	waitFor(t, 30*time.Second, "nodes Ready at their size", func() bool {
		for _, name := range names {
			n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeIsReady(n) {
				return false
			}
			if n.Status.Allocatable.Cpu().Cmp(want) != 0 {
				if err := sizeNode(ctx, name, cpu, mem); err != nil {
					t.Fatal(err)
				}
				return false
			}
		}
		return true
	})
}

// createNode creates a node and sets its size; kwok may update its status
// at the same time, so the sizing retries on conflicts.
func createNode(ctx context.Context, node *corev1.Node, cpu, mem string) error {
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", node.Name, err)
	}
	return sizeNode(ctx, node.Name, cpu, mem)
}

// sizeNode sets a node's capacity and allocatable.
func sizeNode(ctx context.Context, name, cpu, mem string) error {
	size := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods: resource.MustParse("1000"),
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Status.Allocatable, current.Status.Capacity = size, size
		_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("sizing node %s: %w", name, err)
	}
	return nil
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// shard is a running `peloton dev` with a k8s host manager.
type shard struct{ *testkit.Server }

// startShard starts `peloton dev` on dataDir with the cluster as host
// manager "kube", its pods in namespace, and waits until it is healthy.
func startShard(t testing.TB, dataDir, namespace string, hostParams ...string) *shard {
	return startShardWith(t, dataDir, namespace, nil, hostParams...)
}

// startShardWith also passes further dev flags (more --hosts clusters).
// The shard has 60 s to answer /healthz and 30 s to stop cleanly.
func startShardWith(t testing.TB, dataDir, namespace string, extra []string, hostParams ...string) *shard {
	t.Helper()
	hosts := strings.Join(append([]string{"k8s:kube", "kubeconfig=" + kubeconfig, "namespace=" + namespace}, hostParams...), ",")
	o := testkit.ServerOptions{
		Options: testkit.Options{Stop: testkit.Stopping{Within: 30 * time.Second, Cleanly: true}, LogLines: 60},
		Healthy: 60 * time.Second,
	}
	return &shard{testkit.StartDevWith(t, pelotonBin, o, dataDir, append([]string{"--hosts", hosts}, extra...)...)}
}

// waitHosts waits until the shard lists n hosts of cluster "kube" in state.
func (s *shard) waitHosts(n int, state string) {
	s.T.Helper()
	waitFor(s.T, 60*time.Second, fmt.Sprintf("%d hosts %s", n, state), func() bool {
		var out struct {
			Hosts []struct {
				Cluster string `json:"cluster"`
				State   string `json:"state"`
			} `json:"hosts"`
		}
		s.JSON("GET", "/v1/hosts?cluster=kube", "", &out)
		got := 0
		for _, h := range out.Hosts {
			if h.Cluster == "kube" && strings.HasSuffix(h.State, state) {
				got++
			}
		}
		return got >= n
	})
}

var waitFor = testkit.WaitFor

// podsOf lists the pods of a namespace.
func podsOf(t testing.TB, namespace string) []corev1.Pod {
	t.Helper()
	list, err := kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
