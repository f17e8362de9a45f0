package k8stest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

func repoRoot() string { return filepath.Join("..", "..") }

func clusterScript() string { return filepath.Join(repoRoot(), "deploy", "k8s", "cluster.sh") }

func TestMain(m *testing.M) {
	testkit.UseDevTokens()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "peloton-k8s-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bin, cleanup, err := testkit.BuildPeloton()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	pelotonBin = bin
	clusterDir = filepath.Join(tmp, "cluster")
	if dir := os.Getenv("PELOTON_K8S_CLUSTER"); dir != "" {
		// A cluster already started with cluster.sh start DIR, kept between runs.
		clusterDir = dir
	}
	if reason := startCluster(clusterDir); reason != "" {
		unavailable = reason
		if testenv.Strict() {
			fmt.Fprintf(os.Stderr, "FAIL: the Kubernetes test control plane is not available: %s\n"+
				"Build it with: bash deploy/k8s/cluster.sh build\n", reason)
			return 1
		}
	} else if os.Getenv("PELOTON_K8S_CLUSTER") == "" {
		defer exec.Command("bash", clusterScript(), "stop", clusterDir).Run()
	}
	return m.Run()
}

// startCluster starts etcd, kube-apiserver and kwok; it returns why not.
func startCluster(dir string) string {
	out, err := exec.Command("bash", clusterScript(), "bin-dir").Output()
	if err != nil {
		return "deploy/k8s/cluster.sh bin-dir: " + err.Error()
	}
	bin := strings.TrimSpace(string(out))
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return fmt.Sprintf("%s is not built in %s", name, bin)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err != nil {
		start := exec.Command("bash", clusterScript(), "start", dir)
		var log bytes.Buffer
		start.Stdout, start.Stderr = &log, &log
		if err := start.Run(); err != nil {
			return fmt.Sprintf("cluster.sh start: %v\n%s", err, log.String())
		}
	}
	kubeconfig = filepath.Join(dir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "reading kubeconfig: " + err.Error()
	}
	cfg.QPS, cfg.Burst = 500, 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "client: " + err.Error()
	}
	kube = client
	return ""
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
	waitFor(t, 30*time.Second, "nodes Ready", func() bool {
		for _, name := range names {
			n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeIsReady(n) {
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
	size := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods: resource.MustParse("1000"),
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Status.Allocatable, current.Status.Capacity = size, size
		_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("sizing node %s: %w", node.Name, err)
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
type shard struct {
	t       testing.TB
	addr    string
	dataDir string
	cmd     *exec.Cmd
	log     *bytes.Buffer
	done    chan error
}

// startShard starts `peloton dev` on dataDir with the cluster as host
// manager "kube", its pods in namespace, and waits until it is healthy.
func startShard(t testing.TB, dataDir, namespace string, hostParams ...string) *shard {
	return startShardWith(t, dataDir, namespace, nil, hostParams...)
}

// startShardWith also passes further dev flags (more --hosts clusters).
func startShardWith(t testing.TB, dataDir, namespace string, extra []string, hostParams ...string) *shard {
	t.Helper()
	hosts := strings.Join(append([]string{"k8s:kube", "kubeconfig=" + kubeconfig, "namespace=" + namespace}, hostParams...), ",")
	s := &shard{t: t, addr: testkit.FreeAddr(t), dataDir: dataDir, log: &bytes.Buffer{}, done: make(chan error, 1)}
	args := append([]string{"dev", "--data-dir", dataDir, "--addr", s.addr, "--hosts", hosts}, extra...)
	s.cmd = exec.Command(pelotonBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("peloton dev log (last 60 lines):\n%s", testkit.LastLines(s.log.String(), 60))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-s.done:
			t.Fatalf("peloton dev exited early: %v\n%s", err, s.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("peloton dev not healthy after 60s\n%s", s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop interrupts the shard as Ctrl-C would and waits for it to exit.
func (s *shard) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("peloton dev did not stop cleanly: %v\n%s", err, s.log)
		}
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("peloton dev did not stop within 30s\n%s", s.log)
	}
}

// cli runs the peloton CLI against the shard and returns stdout; a
// non-zero exit fails the test.
func (s *shard) cli(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pelotonBin, args...)
	cmd.Env = append(os.Environ(), "PELOTON_ADDR="+s.addr)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("peloton %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// call does a JSON request against the shard's HTTP gateway.
func (s *shard) call(method, path string, body io.Reader, out any) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

type jobJSON struct {
	ID     string `json:"id"`
	Status struct {
		State   string `json:"state"`
		Message string `json:"message"`
	} `json:"status"`
}

type taskJSON struct {
	Instance uint32 `json:"instance"`
	State    string `json:"state"`
	Run      uint32 `json:"run"`
	Host     string `json:"host"`
	Cluster  string `json:"cluster"`
	ExitCode int32  `json:"exitCode"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

func (s *shard) createJob(spec string) string {
	s.t.Helper()
	var out struct{ Job jobJSON }
	s.call("POST", "/v1/jobs", strings.NewReader(spec), &out)
	if out.Job.ID == "" {
		s.t.Fatalf("no job id for %s", spec)
	}
	return out.Job.ID
}

func (s *shard) job(id string) jobJSON {
	s.t.Helper()
	var out struct{ Job jobJSON }
	s.call("GET", "/v1/jobs/"+id, nil, &out)
	return out.Job
}

func (s *shard) tasks(id string) []taskJSON {
	s.t.Helper()
	var out struct{ Tasks []taskJSON }
	s.call("GET", "/v1/jobs/"+id+"/tasks", nil, &out)
	return out.Tasks
}

// waitJob waits until the job reaches state and returns its tasks.
func (s *shard) waitJob(id, state string, d time.Duration) []taskJSON {
	s.t.Helper()
	var last jobJSON
	waitFor(s.t, d, "job "+id+" "+state, func() bool {
		last = s.job(id)
		return last.Status.State == state
	})
	return s.tasks(id)
}

// waitHosts waits until the shard lists n hosts of cluster "kube" in state.
func (s *shard) waitHosts(n int, state string) {
	s.t.Helper()
	waitFor(s.t, 60*time.Second, fmt.Sprintf("%d hosts %s", n, state), func() bool {
		var out struct {
			Hosts []struct {
				Cluster string `json:"cluster"`
				State   string `json:"state"`
			} `json:"hosts"`
		}
		s.call("GET", "/v1/hosts?cluster=kube", nil, &out)
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
