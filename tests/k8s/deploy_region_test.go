package k8stest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// manifestConfig is what the test reads of the server config in the
// manifests' ConfigMap.
type manifestConfig struct {
	Region string   `json:"region"`
	Addr   string   `json:"addr"`
	Hosts  []string `json:"hosts"`
	HA     struct {
		Lease     string `json:"lease"`
		Namespace string `json:"namespace"`
	} `json:"ha"`
}

// The region of deploy/kubernetes, run: the manifests are applied for real
// to the test control plane (all but the ServiceMonitor, whose CRD is the
// Prometheus Operator's: TestDeployManifests dry-runs it), their shape is
// checked against the server config they carry, and three `peloton server`
// processes run that config as the StatefulSet's pods would. kwok runs no
// containers, so the pods themselves are not started; what a pod gets from
// its cluster is stood in for, and only that:
//
//   - ${POD_IP}, set in the environment as the StatefulSet does: a
//     loopback address per member, so the config's ports stay as they are;
//   - the in-cluster credentials: a kubeconfig holding a token of the
//     manifests' service account (TokenRequest), so every call of the host
//     manager and the lease is authorised by the manifests' RBAC;
//   - the Cassandra address, a scratch keyspace with one replica (the test
//     Cassandra has one node), the gossip seed's DNS name (member 0's
//     address) and the data directory.
//
// The member holding the Lease "peloton-<region>" leads; every member
// passes the readiness probe (/healthz) once one holds it, since a standby
// forwards every call to the leader. A job created at a standby runs its
// pods on kwok's nodes in the tasks' namespace; the leader is killed
// (SIGKILL) mid-job, another member takes the Lease at a higher
// transition count, adopts the job's pods and the job succeeds, each task
// in its first run, one pod each.
func TestDeployedRegion(t *testing.T) {
	needCluster(t)
	cass := os.Getenv("PELOTON_TEST_CASSANDRA")
	if cass == "" {
		testenv.Missing(t, "a test Cassandra (PELOTON_TEST_CASSANDRA)", "deploy/cassandra/cassandra.sh start, then set PELOTON_TEST_CASSANDRA=127.0.0.1:PORT")
	}
	ctx := context.Background()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(rc)
	files, _ := filepath.Glob(testkit.RepoPath("deploy", "kubernetes", "*.yaml"))
	for _, o := range readManifests(t, files...) {
		if o.GetKind() == "ServiceMonitor" {
			continue
		}
		if err := apply(ctx, dyn, o, false); err != nil {
			t.Fatalf("apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	const ns = "peloton"
	sts, err := kube.AppsV1().StatefulSets(ns).Get(ctx, "peloton", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configText, cfg := checkDeployShape(t, ctx, sts)

	// What a pod gets from its cluster.
	kc := serviceAccountKubeconfig(t, ctx, sts.Spec.Template.Spec.ServiceAccountName)
	_, port, err := net.SplitHostPort(strings.ReplaceAll(cfg.Addr, "${POD_IP}", "127.0.0.1"))
	if err != nil {
		t.Fatalf("config addr %q: %v", cfg.Addr, err)
	}
	ips := loopbackIPs(t, 3, port, "7946")
	keyspace := fmt.Sprintf("peloton_deploy_%d", time.Now().UnixNano()%1e9)
	text := configText
	haNamespace := regexp.MustCompile(`(?m)^ +namespace: ` + regexp.QuoteMeta(cfg.HA.Namespace) + "\n").FindString(text)
	for _, r := range []struct{ old, new string }{
		{"hosts: [cassandra.cassandra.svc.cluster.local]", fmt.Sprintf("hosts: [%q]", cass)},
		{"keyspace: peloton_" + cfg.Region, "keyspace: " + keyspace},
		{`replication: "3"`, `replication: "1"`},
		{"peloton-0.peloton-gossip.peloton.svc.cluster.local:7946", ips[0] + ":7946"},
		{cfg.Hosts[0], cfg.Hosts[0] + ",kubeconfig=" + kc},
		{haNamespace, haNamespace + strings.Replace(haNamespace, "namespace: "+cfg.HA.Namespace, "kubeconfig: "+kc, 1)},
	} {
		if !strings.Contains(text, r.old) {
			t.Fatalf("the ConfigMap's server.yaml no longer holds %q, which the test replaces:\n%s", r.old, configText)
		}
		text = strings.Replace(text, r.old, r.new, 1)
	}
	nodes := []string{"deploy-1", "deploy-2"}
	addNodes(t, "8", "16Gi", nil, nodes...)

	type pod struct {
		name, ip, api string
		p             *testkit.Process
	}
	var pods []*pod
	for i, ip := range ips {
		dir := t.TempDir()
		conf := filepath.Join(dir, "server.yaml")
		if err := os.WriteFile(conf, []byte(strings.Replace(text, "dataDir: /var/lib/peloton", "dataDir: "+filepath.Join(dir, "data"), 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		c := sts.Spec.Template.Spec.Containers[0]
		args := append([]string{}, c.Args...)
		for j, a := range args {
			if a == "/etc/peloton/server.yaml" {
				args[j] = conf
			}
		}
		cmd := exec.Command(pelotonBin, args...)
		cmd.Env = append(os.Environ(), "POD_IP="+ip)
		pods = append(pods, &pod{name: fmt.Sprintf("peloton-%d", i), ip: ip, api: net.JoinHostPort(ip, port), p: testkit.StartCmd(t, cmd)})
	}
	ready := func(p *pod) bool { return testkit.Healthy(http.DefaultClient, "http://"+p.api) }
	leaseName := "peloton-" + cfg.Region
	holder := func() (string, int32) {
		l, err := kube.CoordinationV1().Leases(cfg.HA.Namespace).Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || l.Spec.LeaseTransitions == nil {
			return "", 0
		}
		return *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions
	}
	var leader *pod
	took := waitFor(t, 90*time.Second, "a member holding the Lease "+leaseName, func() bool {
		for _, p := range pods {
			if p.p.Exited() {
				t.Fatalf("%s exited:\n%s", p.name, testkit.LastLines(p.p.Output(), 20))
			}
		}
		h, _ := holder()
		for _, p := range pods {
			if p.api == h {
				leader = p
			}
		}
		return leader != nil
	})
	waitFor(t, 60*time.Second, "every member ready (/healthz, the readiness probe)", func() bool {
		return ready(pods[0]) && ready(pods[1]) && ready(pods[2])
	})
	_, firstTerm := holder()
	t.Logf("%s holds the Lease %s/%s (transitions %d) %.1fs after the start; all three members ready", leader.name, cfg.HA.Namespace, leaseName, firstTerm, took.Seconds())
	var standby *pod
	for _, p := range pods {
		if p != leader {
			standby = p
			break
		}
	}
	tasksNS := hostsParam(t, cfg.Hosts[0], "namespace")
	api := &testkit.API{T: t, URL: "http://" + standby.api}
	id := api.CreateJob(batchJob("deployed", 6, "4s", 0, ""))
	waitFor(t, 60*time.Second, "the job's pods running on kwok's nodes", func() bool {
		n := 0
		for _, p := range podsOf(t, tasksNS) {
			if p.Labels["peloton.job"] == id && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n > 0
	})
	killed := time.Now()
	leader.p.Kill()
	var next *pod
	took = waitFor(t, 60*time.Second, "another member holding the Lease", func() bool {
		h, term := holder()
		for _, p := range pods {
			if p != leader && p.api == h && term > firstTerm {
				next = p
			}
		}
		return next != nil
	})
	_, term := holder()
	waitFor(t, 60*time.Second, "the two members left ready", func() bool {
		n := 0
		for _, p := range pods {
			if p != leader && ready(p) {
				n++
			}
		}
		return n == 2
	})
	api.URL = "http://" + next.api
	tasks := api.WaitJob(id, "JOB_STATE_SUCCEEDED", 2*time.Minute)
	for _, tk := range tasks {
		if tk.State != "TASK_STATE_SUCCEEDED" || !strings.HasPrefix(tk.Host, "deploy-") || tk.Run != 1 {
			t.Fatalf("task %+v: want SUCCEEDED on a node of this test in its first run (the new leader adopts the pods)", tk)
		}
	}
	jobPods := 0
	for _, p := range podsOf(t, tasksNS) {
		if p.Labels["peloton.job"] == id {
			jobPods++
		}
	}
	if jobPods != len(tasks) {
		t.Fatalf("%d pods of the job for %d tasks: want one each", jobPods, len(tasks))
	}
	t.Logf("leader %s killed: %s took the Lease %.1fs later (transitions %d); the job of %d tasks created at a standby succeeded %.1fs after the kill, its pods in %s",
		leader.name, next.name, took.Seconds(), term, len(tasks), time.Since(killed).Seconds(), tasksNS)
}

// checkDeployShape checks that the StatefulSet, the Services and the RBAC
// of deploy/kubernetes fit the server config the ConfigMap carries, and
// returns that config.
func checkDeployShape(t *testing.T, ctx context.Context, sts *appsv1.StatefulSet) (string, manifestConfig) {
	t.Helper()
	ns := sts.Namespace
	spec := sts.Spec.Template.Spec
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Errorf("StatefulSet replicas %v, want 3 (a leader and two standbys)", sts.Spec.Replicas)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("StatefulSet: %d containers, want one", len(spec.Containers))
	}
	c := spec.Containers[0]
	// The config: the ConfigMap mounted where the container's args read it.
	var cmName, mountPath string
	for _, v := range spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				cmName, mountPath = v.ConfigMap.Name, m.MountPath
			}
		}
	}
	if cmName == "" || strings.Join(c.Args, " ") != "server --config "+mountPath+"/server.yaml" {
		t.Fatalf("the container runs %q with the ConfigMap %q mounted at %q: want `server --config <mount>/server.yaml`", c.Args, cmName, mountPath)
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, cmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := cm.Data["server.yaml"]
	var cfg manifestConfig
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("ConfigMap %s server.yaml: %v", cmName, err)
	}
	if cfg.HA.Lease != "kubernetes" || cfg.HA.Namespace != ns || len(cfg.Hosts) != 1 {
		t.Fatalf("server.yaml: ha.lease %q in %q, hosts %v: want the Kubernetes Lease in %s and one cluster", cfg.HA.Lease, cfg.HA.Namespace, cfg.Hosts, ns)
	}
	// ${POD_IP} comes from the pod's status; the API port is the one the
	// probe and the Service name.
	var podIP bool
	for _, e := range c.Env {
		podIP = podIP || (e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP")
	}
	if !podIP || !strings.HasPrefix(cfg.Addr, "${POD_IP}:") {
		t.Errorf("addr %q, POD_IP from status.podIP %v: want the pod's own address", cfg.Addr, podIP)
	}
	apiPort := map[string]int32{}
	for _, p := range c.Ports {
		apiPort[p.Name] = p.ContainerPort
	}
	if fmt.Sprint(apiPort["api"]) != strings.TrimPrefix(cfg.Addr, "${POD_IP}:") {
		t.Errorf("container port api %d, config addr %s: want the same port", apiPort["api"], cfg.Addr)
	}
	for name, probe := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != "/healthz" || probe.HTTPGet.Port.String() != "api" {
			t.Errorf("%s probe %+v: want GET /healthz on port api", name, probe)
		}
	}
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "peloton", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range svc.Spec.Selector {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("Service peloton selects %s=%s, which the pods do not carry", k, v)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "api" {
		t.Errorf("Service peloton ports %+v: want the api port", svc.Spec.Ports)
	}
	// The service account exists and may take the region's Lease.
	if _, err := kube.CoreV1().ServiceAccounts(ns).Get(ctx, spec.ServiceAccountName, metav1.GetOptions{}); err != nil {
		t.Errorf("service account %q of the StatefulSet: %v", spec.ServiceAccountName, err)
	}
	role, err := kube.RbacV1().Roles(ns).Get(ctx, "peloton-lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !namesResource(role.Rules, "leases", "peloton-"+cfg.Region) {
		t.Errorf("Role peloton-lease names no Lease %q (region %s): the leader could not renew it", "peloton-"+cfg.Region, cfg.Region)
	}
	return text, cfg
}

// namesResource reports whether a rule names the resource by name.
func namesResource(rules []rbacv1.PolicyRule, resource, name string) bool {
	for _, r := range rules {
		for _, res := range r.Resources {
			for _, n := range r.ResourceNames {
				if res == resource && n == name {
					return true
				}
			}
		}
	}
	return false
}

// serviceAccountKubeconfig writes a kubeconfig for the test control plane
// that authenticates as the service account sa of namespace peloton, with
// a token from the TokenRequest API: what a pod of the StatefulSet gets
// mounted.
func serviceAccountKubeconfig(t *testing.T, ctx context.Context, sa string) string {
	t.Helper()
	base, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tok, err := kube.CoreV1().ServiceAccounts("peloton").CreateToken(ctx, sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of service account peloton/%s: %v", sa, err)
	}
	cur := base.Contexts[base.CurrentContext]
	cluster := base.Clusters[cur.Cluster]
	out := clientcmdapi.NewConfig()
	out.Clusters["test"] = cluster
	out.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	out.Contexts["sa"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa", Namespace: "peloton"}
	out.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// loopbackIPs returns n addresses of 127.0.0.0/8 on which every one of
// ports is free.
func loopbackIPs(t *testing.T, n int, ports ...string) []string {
	t.Helper()
	var out []string
	for tries := 0; len(out) < n && tries < 200; tries++ {
		ip := fmt.Sprintf("127.0.%d.%d", 100+rand.IntN(100), 2+rand.IntN(250))
		free := true
		for _, p := range ports {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, p))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			out = append(out, ip)
		}
	}
	if len(out) < n {
		t.Fatalf("no %d loopback addresses with ports %v free", n, ports)
	}
	return out
}

// hostsParam reads one parameter of a hosts: entry ("k8s:NAME,k=v,...").
func hostsParam(t *testing.T, entry, key string) string {
	t.Helper()
	for _, kv := range strings.Split(entry, ",")[1:] {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	t.Fatalf("hosts entry %q has no %s", entry, key)
	return ""
}
