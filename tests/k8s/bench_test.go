package k8stest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	"github.com/peloton-federated/peloton/tests/testkit"
)

// benchSize is one run of the side-by-side benchmark, from the environment:
// K8S_BENCH_NODES (1000), K8S_BENCH_PODS (10000), K8S_BENCH_QPS (0: the
// Peloton host manager's default, no client-side limit; else Peloton's
// client QPS, burst twice that, which the equal-QPS kube-scheduler run
// takes too), K8S_BENCH_PARALLEL (0: the host manager's default creates
// in flight), K8S_BENCH_ROUNDS (3: Peloton runs, each between two
// measurements of the ceiling) and K8S_BENCH_CPUPROFILE (a file for the
// CPU profile of Peloton's first run).
type benchSize struct {
	nodes, pods, qps, parallel, rounds int
	cpuProfile                         string
}

func benchSizeFromEnv() benchSize {
	get := func(key string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
			return v
		}
		return def
	}
	return benchSize{nodes: get("K8S_BENCH_NODES", 1000), pods: get("K8S_BENCH_PODS", 10000), qps: get("K8S_BENCH_QPS", 0),
		parallel: get("K8S_BENCH_PARALLEL", 0), rounds: get("K8S_BENCH_ROUNDS", 3), cpuProfile: os.Getenv("K8S_BENCH_CPUPROFILE")}
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

// podTimes are when a watch saw the first pod bound, the last one bound
// and the last one Running.
type podTimes struct{ firstBound, allBound, allRunning time.Time }

// wait returns once n pods were bound and n were Running.
func (pc *podClock) wait(tb testing.TB, n int, d time.Duration) podTimes {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		pc.mu.Lock()
		b, r := len(pc.bound), len(pc.running)
		if b >= n && r >= n {
			var pt podTimes
			for _, t := range pc.bound {
				pt.allBound = later(pt.allBound, t)
				if pt.firstBound.IsZero() || t.Before(pt.firstBound) {
					pt.firstBound = t
				}
			}
			for _, t := range pc.running {
				pt.allRunning = later(pt.allRunning, t)
			}
			pc.mu.Unlock()
			return pt
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

// benchPod is a pod of the shape the Peloton host manager creates for the
// benchmark's task (about 960 bytes in protobuf): four labels, two
// annotations, six environment variables, requests and a memory limit,
// restart policy Never. The ceiling and kube-scheduler get the same pods,
// so that every phase asks the API server for the same work.
func benchPod(name, node, scheduler string) *corev1.Pod {
	job := "00000000-0000-4000-8000-" + fmt.Sprintf("%012d", len(name))
	run := job + "-" + name + "-1"
	env := []corev1.EnvVar{{Name: "PELOTON_API_ADDR", Value: "127.0.0.1:5390"}, {Name: "PELOTON_HOST", Value: node},
		{Name: "PELOTON_HOST_ID", Value: "kube/" + node}, {Name: "PELOTON_INSTANCE_ID", Value: name},
		{Name: "PELOTON_JOB_ID", Value: job}, {Name: "PELOTON_RUN_ID", Value: run}}
	grace := int64(10)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "bench", "peloton.instance": name, "peloton.job": job, "peloton.run": "1"},
			Annotations: map[string]string{"peloton.io/host-id": "kube/" + node, "peloton.io/run-id": run}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			SchedulerName:                 scheduler,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "task", Image: "busybox:stable", Command: []string{"sleep"}, Args: []string{"3600"}, Env: env,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
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

// schedulerRun is one phase, timed from its first request (the first
// create, or the job's submission) to what a watch saw.
type schedulerRun struct {
	name                       string
	firstBound, bound, running time.Duration
	boundPerSec                float64
}

func newRun(name string, pods int, start time.Time, pt podTimes) schedulerRun {
	r := schedulerRun{name: name, firstBound: pt.firstBound.Sub(start), bound: pt.allBound.Sub(start), running: pt.allRunning.Sub(start)}
	r.boundPerSec = float64(pods) / r.bound.Seconds()
	return r
}

func (r schedulerRun) String() string {
	return fmt.Sprintf("%-40s first bound %5.1fs  all bound %6.1fs %6.0f pods bound/s  all Running %6.1fs",
		r.name, r.firstBound.Seconds(), r.bound.Seconds(), r.boundPerSec, r.running.Seconds())
}

// measureCeiling creates pods already bound with writers in parallel and
// no client limit: the API server's own create rate, timed like the
// schedulers from the first create to the last pod a watch saw bound.
func measureCeiling(b *testing.B, client kubernetes.Interface, size benchSize, namespace string, writers int) schedulerRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newNamespace(b, namespace)
	clock := watchPods(ctx, client, namespace)
	start := time.Now()
	createPods(b, client, namespace, size.pods, writers, func(i int) *corev1.Pod {
		return benchPod(fmt.Sprintf("c-%05d", i), fmt.Sprintf("bench-%04d", i%size.nodes), "none")
	})
	r := newRun(fmt.Sprintf("API server ceiling, %d writers (%s)", writers, namespace), size.pods, start, clock.wait(b, size.pods, 30*time.Minute))
	b.Logf("%s", r)
	emptyNamespace(b, client, namespace)
	return r
}

// runKubeScheduler creates unbound pods at full speed and times how fast
// kube-scheduler, its client at qps/burst (0: its own defaults; qps < 0:
// no client-side limit), binds them.
func runKubeScheduler(b *testing.B, client kubernetes.Interface, size benchSize, namespace, name string, qps float64, burst int) schedulerRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newNamespace(b, namespace)
	startScheduler(b, qps, burst)
	clock := watchPods(ctx, client, namespace)
	start := time.Now()
	createPods(b, client, namespace, size.pods, 64, func(i int) *corev1.Pod {
		return benchPod(fmt.Sprintf("k-%05d", i), "", "default-scheduler")
	})
	r := newRun(name, size.pods, start, clock.wait(b, size.pods, 30*time.Minute))
	stopScheduler(b)
	b.Logf("%s", r)
	emptyNamespace(b, client, namespace)
	return r
}

// runPeloton submits one batch job of size.pods tasks to a fresh `peloton
// dev` whose k8s host manager creates each pod bound to the node placement
// chose.
func runPeloton(b *testing.B, client kubernetes.Interface, size benchSize, namespace string, hostParams, extra []string) schedulerRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newNamespace(b, namespace)
	s := startShardWith(b, b.TempDir(), namespace, extra, hostParams...)
	s.waitHosts(size.nodes, "UP")
	clock := watchPods(ctx, client, namespace)
	start := time.Now()
	s.CreateJob(fmt.Sprintf(`{"name":"bench","instances":%d,"task":{"command":"sleep","args":["3600"],"resources":{"cpu":1,"memMb":1024}}}`, size.pods))
	r := newRun("Peloton, its default ("+namespace+")", size.pods, start, clock.wait(b, size.pods, 30*time.Minute))
	s.Stop()
	b.Logf("%s", r)
	emptyNamespace(b, client, namespace)
	return r
}

// BenchmarkPelotonVsKubeScheduler places the same pods on the same kwok
// nodes of one API server: through kube-scheduler (pods created unbound,
// then bound by it) at its own default client limit and at Peloton's, and
// through Peloton at its default configuration (a batch job; the k8s host
// manager creates pods already bound), each Peloton run between two
// measurements of the API server's own pod-create ceiling. It prints pods
// bound per second and the time until all run, Peloton's ratio to the
// higher of the ceilings around it (median over the runs) and to
// kube-scheduler. Run it alone:
//
//	go test ./tests/k8s -run '^$' -bench PelotonVsKubeScheduler -benchtime 1x -timeout 90m
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

	kubeDefault := runKubeScheduler(b, client, size, "kube-default", "kube-scheduler, its default (QPS 50)", 0, 0)
	kubeEqual := runKubeScheduler(b, client, size, "kube-equal", "kube-scheduler, Peloton's client limit", kubeQPS, kubeBurst)
	// The ceiling's writers alternate between 64 and 32 (which of the two
	// the server takes faster varies), so every Peloton run is compared
	// with the better of both.
	writers := func(i int) int { return 64 >> (i % 2) }
	ceilings := []schedulerRun{measureCeiling(b, client, size, "ceiling-0", writers(0))}
	var pelotons []schedulerRun
	var ratios, pelotonRates []float64
	for r := 1; r <= size.rounds; r++ {
		var extra []string
		if size.cpuProfile != "" && r == 1 {
			extra = append(extra, "--cpuprofile", size.cpuProfile)
		}
		p := runPeloton(b, client, size, fmt.Sprintf("peloton-%d", r), hostParams, extra)
		pelotons = append(pelotons, p)
		pelotonRates = append(pelotonRates, p.boundPerSec)
		ceilings = append(ceilings, measureCeiling(b, client, size, fmt.Sprintf("ceiling-%d", r), writers(r)))
		ratios = append(ratios, p.boundPerSec/max(ceilings[r-1].boundPerSec, ceilings[r].boundPerSec))
	}
	ratio, pelotonRate := median(ratios), median(pelotonRates)

	fmt.Printf("\nside-by-side on one kube-apiserver: %d kwok nodes, %d pods; Peloton at %s\n", size.nodes, size.pods, pelotonLimit)
	fmt.Println("  (ceiling: bound pods created without a client limit, in protobuf; every phase creates pods of the shape Peloton's are and is timed from its first request to what a watch saw)")
	fmt.Println("  " + kubeDefault.String())
	fmt.Println("  " + kubeEqual.String())
	for i, p := range pelotons {
		fmt.Println("  " + ceilings[i].String())
		fmt.Println("  " + p.String())
	}
	fmt.Println("  " + ceilings[len(ceilings)-1].String())
	fmt.Printf("  Peloton / ceiling (the higher of the two around each run): median %.2f (runs", ratio)
	for _, x := range ratios {
		fmt.Printf(" %.2f", x)
	}
	fmt.Println(")")
	fmt.Printf("  Peloton / kube-scheduler, pods bound/s: %.2fx at its default, %.2fx at Peloton's client limit (Peloton's median)\n",
		pelotonRate/kubeDefault.boundPerSec, pelotonRate/kubeEqual.boundPerSec)
	b.ReportMetric(pelotonRate, "peloton-bound/s")
	b.ReportMetric(kubeDefault.boundPerSec, "kube-default-bound/s")
	b.ReportMetric(kubeEqual.boundPerSec, "kube-equal-bound/s")
	b.ReportMetric(ratio, "ratio-to-ceiling")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
	out, err := exec.Command("bash", testkit.RepoPath("deploy", "k8s", "cluster.sh"), "start-scheduler", clusterDir, "--config", cfg).CombinedOutput()
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
