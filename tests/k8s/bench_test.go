package k8stest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	k8s "github.com/peloton-federated/peloton/hostmgr-k8s"
)

// benchSize is one run of the side-by-side benchmark, from the environment:
// K8S_BENCH_NODES (1000), K8S_BENCH_PODS (10000), K8S_BENCH_QPS (0: the
// Peloton host manager's default, no client-side limit; else Peloton's
// client QPS, burst twice that, which the equal-QPS kube-scheduler run
// takes too), K8S_BENCH_PARALLEL (0: the host manager's default creates
// in flight) and K8S_BENCH_CPUPROFILE (a file for Peloton's CPU profile).
type benchSize struct {
	nodes, pods, qps, parallel int
	cpuProfile                 string
}

func benchSizeFromEnv() benchSize {
	get := func(key string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
			return v
		}
		return def
	}
	return benchSize{nodes: get("K8S_BENCH_NODES", 1000), pods: get("K8S_BENCH_PODS", 10000), qps: get("K8S_BENCH_QPS", 0),
		parallel: get("K8S_BENCH_PARALLEL", 0), cpuProfile: os.Getenv("K8S_BENCH_CPUPROFILE")}
}

// podClock records, per pod of a namespace, when it was first seen bound
// and first seen Running.
type podClock struct {
	mu             sync.Mutex
	bound, running map[string]time.Time
}

func watchPods(ctx context.Context, client kubernetes.Interface, namespace string) *podClock {
	pc := &podClock{bound: map[string]time.Time{}, running: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	see := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		pc.mu.Lock()
		defer pc.mu.Unlock()
		if _, seen := pc.bound[pod.Name]; !seen && pod.Spec.NodeName != "" {
			pc.bound[pod.Name] = now
		}
		if _, seen := pc.running[pod.Name]; !seen && pod.Status.Phase == corev1.PodRunning {
			pc.running[pod.Name] = now
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }})
	factory.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	return pc
}

// wait returns when n pods were bound and when n were Running.
func (pc *podClock) wait(tb testing.TB, n int, d time.Duration) (allBound, allRunning time.Time) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		pc.mu.Lock()
		b, r := len(pc.bound), len(pc.running)
		if b >= n && r >= n {
			for _, t := range pc.bound {
				allBound = later(allBound, t)
			}
			for _, t := range pc.running {
				allRunning = later(allRunning, t)
			}
			pc.mu.Unlock()
			return allBound, allRunning
		}
		pc.mu.Unlock()
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %d of %d pods bound, %d running", d, b, n, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fastClient is a client without a rate limit, speaking protobuf as
// Kubernetes' own components and the Peloton host manager do, for setting
// up and for measuring the API server's own ceiling.
func fastClient(tb testing.TB) kubernetes.Interface {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = k8s.ProtobufContentType
	cfg.AcceptContentTypes = k8s.ProtobufContentType + ",application/json"
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// createPods creates n pods from make with workers in parallel and returns
// how long that took.
func createPods(tb testing.TB, client kubernetes.Interface, namespace string, n, workers int, make func(i int) *corev1.Pod) time.Duration {
	tb.Helper()
	var next atomic.Int64
	var failed atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := client.CoreV1().Pods(namespace).Create(context.Background(), make(i), metav1.CreateOptions{}); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatalf("creating pods: %v", err)
	}
	return time.Since(start)
}

func benchPod(name, node, scheduler string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:      node,
			SchedulerName: scheduler,
			Containers: []corev1.Container{{Name: "task", Image: "busybox:stable", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		},
	}
}

// emptyNamespace deletes every pod of a namespace, 64 at a time (one
// DeleteCollection of thousands of pods outlasts a request's timeout on a
// loaded machine), and waits until none is left.
func emptyNamespace(tb testing.TB, client kubernetes.Interface, namespace string) {
	tb.Helper()
	ctx := context.Background()
	zero := int64(0)
	waitFor(tb, 10*time.Minute, "namespace "+namespace+" empty", func() bool {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			tb.Logf("listing the pods of %s: %v (retrying)", namespace, err)
			return false
		}
		if len(list.Items) == 0 {
			return true
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < len(list.Items); i = int(next.Add(1)) - 1 {
					err := client.CoreV1().Pods(namespace).Delete(ctx, list.Items[i].Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
					if err != nil && !apierrors.IsNotFound(err) {
						tb.Logf("deleting pod %s/%s: %v (retrying)", namespace, list.Items[i].Name, err)
					}
				}
			}()
		}
		wg.Wait()
		return false
	})
}

type schedulerRun struct {
	name           string
	bound, running time.Duration
	boundPerSec    float64
}

func (r schedulerRun) String() string {
	return fmt.Sprintf("%-40s all bound %7.1fs %7.0f pods bound/s   all Running %7.1fs", r.name, r.bound.Seconds(), r.boundPerSec, r.running.Seconds())
}

// measureCeiling creates pods already bound with 64 writers and no client
// limit, and returns the API server's create rate.
func measureCeiling(b *testing.B, ctx context.Context, client kubernetes.Interface, size benchSize, namespace string) float64 {
	newNamespace(b, namespace)
	clock := watchPods(ctx, client, namespace)
	createTime := createPods(b, client, namespace, size.pods, 64, func(i int) *corev1.Pod {
		return benchPod(fmt.Sprintf("c-%05d", i), fmt.Sprintf("bench-%04d", i%size.nodes), "none")
	})
	clock.wait(b, size.pods, 10*time.Minute)
	emptyNamespace(b, client, namespace)
	rate := float64(size.pods) / createTime.Seconds()
	b.Logf("ceiling (%s): %.0f pods created/s", namespace, rate)
	return rate
}

// runKubeScheduler creates unbound pods at full speed and times how fast
// kube-scheduler, its client at qps/burst (0: its own defaults; qps < 0:
// no client-side limit), binds them.
func runKubeScheduler(b *testing.B, ctx context.Context, client kubernetes.Interface, size benchSize, namespace, name string, qps float64, burst int) schedulerRun {
	newNamespace(b, namespace)
	startScheduler(b, qps, burst)
	clock := watchPods(ctx, client, namespace)
	start := time.Now()
	createPods(b, client, namespace, size.pods, 64, func(i int) *corev1.Pod {
		return benchPod(fmt.Sprintf("k-%05d", i), "", "default-scheduler")
	})
	bound, running := clock.wait(b, size.pods, 30*time.Minute)
	stopScheduler(b)
	r := schedulerRun{name: name, bound: bound.Sub(start), running: running.Sub(start)}
	r.boundPerSec = float64(size.pods) / r.bound.Seconds()
	b.Logf("%s", r)
	emptyNamespace(b, client, namespace)
	return r
}

// BenchmarkPelotonVsKubeScheduler places the same pods on the same kwok
// nodes of one API server: through Peloton at its default configuration (a
// batch job; the k8s host manager creates pods already bound) and through
// kube-scheduler (pods created unbound, then bound by it) at its own
// default client limit and at Peloton's, and measures the API server's own
// pod-create ceiling before and after them. It prints pods bound per
// second, the time until all run, and Peloton's ratio to the ceiling (the
// higher of the two) and to kube-scheduler. Run it alone:
//
//	go test ./tests/k8s -run '^$' -bench PelotonVsKubeScheduler -benchtime 1x -timeout 60m
func BenchmarkPelotonVsKubeScheduler(b *testing.B) {
	needCluster(b)
	size := benchSizeFromEnv()
	client := fastClient(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pelotonLimit := "no client-side limit"
	var hostParams []string
	kubeQPS, kubeBurst := -1.0, 0
	if size.qps > 0 {
		pelotonLimit = fmt.Sprintf("client QPS %d/burst %d", size.qps, 2*size.qps)
		hostParams = append(hostParams, fmt.Sprintf("qps=%d", size.qps), fmt.Sprintf("burst=%d", 2*size.qps))
		kubeQPS, kubeBurst = float64(size.qps), 2*size.qps
	}
	parallel := k8s.DefaultLaunchParallelism
	if size.parallel > 0 {
		parallel = size.parallel
		hostParams = append(hostParams, fmt.Sprintf("parallel=%d", size.parallel))
	}
	pelotonLimit += fmt.Sprintf(", %d creates in flight", parallel)
	b.Logf("side-by-side: %d kwok nodes, %d pods; Peloton: %s", size.nodes, size.pods, pelotonLimit)

	// The nodes: 32 CPUs, 128 GiB each; every pod asks for 1 CPU, 1 GiB.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < size.nodes; i = int(next.Add(1)) - 1 {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%04d", i),
					Labels: map[string]string{"zone": fmt.Sprint("z", i%3)}, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
				if err := createNodeWith(ctx, client, node, "32", "128Gi"); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	waitFor(b, 5*time.Minute, "bench nodes Ready", func() bool {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		n := 0
		for i := range list.Items {
			if nodeIsReady(&list.Items[i]) {
				n++
			}
		}
		return n >= size.nodes
	})

	ceilingBefore := measureCeiling(b, ctx, client, size, "ceiling-1")
	kubeDefault := runKubeScheduler(b, ctx, client, size, "kube-default", "kube-scheduler (its default, QPS 50)", 0, 0)
	kubeEqual := runKubeScheduler(b, ctx, client, size, "kube-equal", "kube-scheduler (Peloton's client limit)", kubeQPS, kubeBurst)

	// Peloton: one batch job of size.pods tasks; the k8s host manager
	// creates each pod bound to the node placement chose.
	newNamespace(b, "peloton")
	var extra []string
	if size.cpuProfile != "" {
		extra = append(extra, "--cpuprofile", size.cpuProfile)
	}
	s := startShardWith(b, b.TempDir(), "peloton", extra, hostParams...)
	s.waitHosts(size.nodes, "UP")
	pelotonClock := watchPods(ctx, client, "peloton")
	pelotonStart := time.Now()
	s.createJob(fmt.Sprintf(`{"name":"bench","instances":%d,"task":{"command":"sleep","args":["3600"],"resources":{"cpu":1,"memMb":1024}}}`, size.pods))
	pb, pr := pelotonClock.wait(b, size.pods, 30*time.Minute)
	peloton := schedulerRun{name: "Peloton (its default)", bound: pb.Sub(pelotonStart), running: pr.Sub(pelotonStart)}
	peloton.boundPerSec = float64(size.pods) / peloton.bound.Seconds()
	s.stop()
	b.Logf("%s", peloton)
	emptyNamespace(b, client, "peloton")

	ceilingAfter := measureCeiling(b, ctx, client, size, "ceiling-2")
	ceiling := max(ceilingBefore, ceilingAfter)

	fmt.Printf("\nside-by-side on one kube-apiserver: %d kwok nodes, %d pods; Peloton at %s\n", size.nodes, size.pods, pelotonLimit)
	fmt.Printf("  %-40s %7.0f pods created/s before, %.0f after (bound pods, 64 writers, no client limit, protobuf)\n", "API server ceiling", ceilingBefore, ceilingAfter)
	for _, r := range []schedulerRun{peloton, kubeEqual, kubeDefault} {
		fmt.Println("  " + r.String())
	}
	fmt.Printf("  Peloton / ceiling (the higher): %.2f of the API server's create rate\n", peloton.boundPerSec/ceiling)
	fmt.Printf("  Peloton / kube-scheduler: bound/s %.2fx at its default, %.2fx at Peloton's client limit; time to all Running %.2fx, %.2fx (lower is faster)\n",
		peloton.boundPerSec/kubeDefault.boundPerSec, peloton.boundPerSec/kubeEqual.boundPerSec,
		peloton.running.Seconds()/kubeDefault.running.Seconds(), peloton.running.Seconds()/kubeEqual.running.Seconds())
	b.ReportMetric(peloton.boundPerSec, "peloton-bound/s")
	b.ReportMetric(kubeDefault.boundPerSec, "kube-default-bound/s")
	b.ReportMetric(kubeEqual.boundPerSec, "kube-equal-bound/s")
	b.ReportMetric(ceiling, "ceiling-creates/s")
	b.ReportMetric(peloton.boundPerSec/ceiling, "ratio-to-ceiling")
}

// createNodeWith is createNode with an explicit client.
func createNodeWith(ctx context.Context, client kubernetes.Interface, node *corev1.Node, cpu, mem string) error {
	saved := kube
	kube = client
	defer func() { kube = saved }()
	return createNode(ctx, node, cpu, mem)
}

// startScheduler starts kube-scheduler on the test cluster with its client
// at qps/burst; qps 0 keeps its defaults (50/100), a negative qps sets no
// client-side limit.
func startScheduler(tb testing.TB, qps float64, burst int) {
	tb.Helper()
	cfg := filepath.Join(clusterDir, "scheduler.yaml")
	limits := ""
	if qps != 0 {
		limits = fmt.Sprintf("  qps: %g\n  burst: %d\n", qps, burst)
	}
	conf := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
%sleaderElection:
  leaderElect: false
`, kubeconfig, limits)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command("bash", clusterScript(), "start-scheduler", clusterDir, "--config", cfg).CombinedOutput()
	if err != nil {
		tb.Fatalf("starting kube-scheduler: %v\n%s", err, out)
	}
}

func stopScheduler(tb testing.TB) {
	pidFile := filepath.Join(clusterDir, "pids", "kube-scheduler")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(string(trimNL(data))); err == nil {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	os.Remove(pidFile)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
