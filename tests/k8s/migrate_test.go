package k8stest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// startMesos starts the Mesos master emulator in process with n agents of
// cpu cores and 8 GiB each.
func startMesos(t *testing.T, n int, cpu float64) *testkit.MesosMaster {
	t.Helper()
	specs := make([]mesostest.AgentSpec, n)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("agent-%d", i), CPU: cpu, MemMB: 8192, DiskMB: 10000}
	}
	return testkit.ServeMesos(t, mesosConfig, specs...)
}

// mesosConfig is the emulator's configuration in this package's tests.
var mesosConfig = mesostest.Config{HeartbeatInterval: time.Second, AllocationInterval: 20 * time.Millisecond, UpdateRetry: 2 * time.Second}

// startMixed starts a shard with the Kubernetes cluster "kube" (nodes
// added by the caller) and the Mesos cluster "dc1" (the emulator), and
// waits for both clusters' hosts; hostParams are the k8s cluster's.
func startMixed(t *testing.T, namespace string, kubeNodes, agents int, cpu float64, hostParams ...string) (*shard, *mesostest.Master) {
	t.Helper()
	m := startMesos(t, agents, cpu)
	s := startShardWith(t, t.TempDir(), namespace, []string{"--hosts", "mesos:dc1,master=" + m.URL}, hostParams...)
	s.waitHosts(kubeNodes, "UP")
	waitFor(t, 30*time.Second, "the Mesos agents", func() bool {
		var out struct {
			Hosts []struct {
				State string `json:"state"`
			} `json:"hosts"`
		}
		s.JSON("GET", "/v1/hosts?cluster=dc1", "", &out)
		up := 0
		for _, h := range out.Hosts {
			if h.State == "HOST_STATE_UP" {
				up++
			}
		}
		return up == agents
	})
	return s, m.Master
}

// sampledTasks reads the job's tasks; it is safe from any goroutine.
func (s *shard) sampledTasks(job string) ([]testkit.Task, error) {
	var out struct{ Tasks []testkit.Task }
	err := s.Get("/v1/jobs/"+job+"/tasks", &out)
	return out.Tasks, err
}

// sampler reads a job's tasks every 100 ms, as testkit.SLAScenario does,
// and keeps the most of its first n instances unavailable at once.
type sampler struct {
	maxDown int
	// effective: the job's n less every available task, surge
	// instances included (what the engine reports).
	effective int
	most      int // most tasks the job had
	stop      func() (samples, failed int)
}

func (s *shard) sample(job string, n int) *sampler {
	sm := &sampler{}
	sm.stop = testkit.Sample(&s.API, job, 100*time.Millisecond, func(ts []testkit.Task) {
		down, avail := n, 0
		for _, tk := range ts {
			if int(tk.Instance) < n && tk.Available() {
				down--
			}
			if tk.Available() {
				avail++
			}
		}
		sm.effective = max(sm.effective, n-min(n, avail))
		sm.maxDown, sm.most = max(sm.maxDown, down), max(sm.most, len(ts))
	})
	return sm
}

func (sm *sampler) end() (maxDown, samples, most int) {
	samples, _ = sm.stop()
	return sm.maxDown, samples, sm.most
}

// peloton runs the CLI (for up to 5 minutes: it waits for migrations)
// and returns its output and exit code.
func (s *shard) peloton(args ...string) (string, int) {
	s.T.Helper()
	r := s.run(args...)
	return r.Output(), r.Code
}

// run runs the CLI, failing the test if it could not run or was stopped.
func (s *shard) run(args ...string) testkit.Result {
	s.T.Helper()
	r := testkit.CLI{Bin: pelotonBin, Addr: s.Addr, Within: 5 * time.Minute}.Run(args...)
	if r.Code == -1 {
		s.T.Fatalf("peloton %s: %s", strings.Join(args, " "), r.Stderr)
	}
	return r
}

type migrationJSON struct {
	ID              string `json:"id"`
	State           string `json:"state"`
	Message         string `json:"message"`
	Paused          bool   `json:"paused"`
	Duration        string `json:"duration"`
	InstancesMoved  uint32 `json:"instancesMoved"`
	InstancesTotal  uint32 `json:"instancesTotal"`
	InstancesFlight uint32 `json:"instancesInFlight"`
	Jobs            []struct {
		JobID             string `json:"jobId"`
		FromCluster       string `json:"fromCluster"`
		Instances         uint32 `json:"instances"`
		Moved             uint32 `json:"moved"`
		MaxUnavailable    uint32 `json:"maxUnavailable"`
		SLAMaxUnavailable uint32 `json:"slaMaxUnavailable"`
		Failures          uint32 `json:"failures"`
		Retries           uint32 `json:"retries"`
		Done              bool   `json:"done"`
	} `json:"jobs"`
}

func decodeMigration(t *testing.T, out string) migrationJSON {
	t.Helper()
	var m migrationJSON
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("migration JSON: %v\n%s", err, out)
	}
	return m
}

func (s *shard) migration(id string) migrationJSON {
	s.T.Helper()
	var out struct{ Migration migrationJSON }
	s.JSON("GET", "/v1/migrations/"+id, "", &out)
	return out.Migration
}

// perCluster counts a job's running tasks per cluster.
func perCluster(ts []testkit.Task) map[string]int {
	out := map[string]int{}
	for _, tk := range ts {
		if tk.State == "TASK_STATE_RUNNING" {
			out[tk.Cluster]++
		}
	}
	return out
}

// liveMesosTasks counts the tasks the Mesos master still has that have not
// ended.
func liveMesosTasks(m *mesostest.Master) int {
	n := 0
	for _, tk := range m.Tasks() {
		switch tk.State {
		case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
			mesos.TASK_DROPPED, mesos.TASK_GONE:
		default:
			n++
		}
	}
	return n
}

const serviceSpec = `name: %s
type: service
instances: %d
sla: {maxUnavailable: %d}
clusters: {avoid: ["k8s:kube"]}
task:
  container: {image: "nginx:1.27"}
  env: {PELOTON_SIM_DURATION: 1h}   # how long the Mesos emulator runs it
  ports: [{name: http}]
  healthCheck: {http: {port: http, path: /healthz}, initialDelay: 1s, interval: 500ms}
  resources: {cpu: 0.25, memMb: 64}
`

// startService creates a service on Mesos through the CLI and waits until
// every instance is available there.
func (s *shard) startService(name string, n, maxUnavailable int) string {
	s.T.Helper()
	file := filepath.Join(s.DataDir, name+".yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(serviceSpec, name, n, maxUnavailable)), 0o644); err != nil {
		s.T.Fatal(err)
	}
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", file))
	var last []testkit.Task
	s.T.Cleanup(func() {
		if s.T.Failed() {
			for _, tk := range last {
				s.T.Logf("last seen: %+v", tk)
			}
		}
	})
	waitFor(s.T, 2*time.Minute, fmt.Sprintf("%d instances available on Mesos", n), func() bool {
		ts, err := s.sampledTasks(job)
		last = ts
		if err != nil || len(ts) != n {
			return false
		}
		for _, tk := range ts {
			if !tk.Available() || tk.Cluster != "dc1" {
				return false
			}
		}
		return true
	})
	return job
}

// The acceptance scenario: a 30-instance service (image, port, HTTP health
// check, maxUnavailable 3) on Mesos is migrated to Kubernetes with --surge
// while the test samples availability every 100 ms. Never more than 3 of
// its instances are unavailable; at the end every instance runs as a pod,
// no Mesos task is left, and the report agrees with the test's count.
func TestSurgeMigrationFromMesosToKubernetes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "migrate")
	addNodes(t, "4", "8Gi", nil, "mig-k1", "mig-k2", "mig-k3", "mig-k4")
	s, m := startMixed(t, "migrate", 4, 4, 4, "ports=32000-32999")
	job := s.startService("web", 30, 3)
	if n := liveMesosTasks(m); n != 30 {
		t.Fatalf("%d live Mesos tasks before the migration, want 30", n)
	}

	sm := s.sample(job, 30)
	start := time.Now()
	// The migration is JSON on stdout; --wait's progress lines go to
	// stderr.
	r := s.run("migrate", "start", "--job", job, "--to", "k8s:kube", "--surge", "--batch-size", "3", "--wait", "--timeout", "4m", "-o", "json")
	took := time.Since(start)
	maxDown, samples, most := sm.end()
	if r.Code != 0 {
		t.Fatalf("migrate start --wait: exit %d\n%s", r.Code, r.Output())
	}
	rep := decodeMigration(t, r.Stdout)
	if rep.State != "MIGRATION_STATE_SUCCEEDED" || len(rep.Jobs) != 1 {
		t.Fatalf("migration: %+v", rep)
	}

	ts, err := s.sampledTasks(job)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, tk := range ts {
		if tk.Cluster == "kube" && tk.Available() && tk.Run > 1 {
			moved++
		}
	}
	if len(ts) != 30 || perCluster(ts)["kube"] != 30 {
		t.Fatalf("after the migration: %d tasks, per cluster %v; want 30 on kube", len(ts), perCluster(ts))
	}
	waitFor(t, 30*time.Second, "no Mesos task left", func() bool { return liveMesosTasks(m) == 0 })
	live := 0
	for _, p := range podsOf(t, "migrate") {
		if p.DeletionTimestamp == nil {
			live++
		}
	}
	if live != 30 {
		t.Errorf("%d pods not being deleted, want 30", live)
	}
	j := rep.Jobs[0]
	if int(j.Moved) != moved || j.Moved != 30 || j.Instances != 30 || j.FromCluster != "dc1" || !j.Done {
		t.Errorf("report %+v; the test counted %d instances moved", j, moved)
	}
	if j.MaxUnavailable > 3 || j.SLAMaxUnavailable != 3 || sm.effective > 3 {
		t.Errorf("report: max unavailable %d (SLA %d); the test saw at most %d fewer available than 30", j.MaxUnavailable, j.SLAMaxUnavailable, sm.effective)
	}
	if maxDown > 3 {
		t.Errorf("%d instances unavailable at once; the SLA allows 3", maxDown)
	}
	if most > 33 {
		t.Errorf("the job grew to %d tasks; surge adds at most the batch (3)", most)
	}
	t.Logf("surge migration of 30 instances Mesos -> Kubernetes: %s (report %s); of instances 0-29 at most %d unavailable (SLA 3) over %d samples; "+
		"at most %d fewer available than 30 counting surge instances (report: %d); at most %d tasks; %d failures, %d retries",
		took.Round(100*time.Millisecond), rep.Duration, maxDown, samples, sm.effective, j.MaxUnavailable, most, j.Failures, j.Retries)
	fmt.Printf("migration scenario: 30 instances moved in %s, max unavailable %d (SLA 3), %d samples every 100ms\n", took.Round(100*time.Millisecond), maxDown, samples)
}

// Pause, resume, rollback (refused while the source is drained) and abort,
// through the CLI and HTTP; bad input is refused and changes nothing.
func TestMigrationControlOnMesosAndKubernetes(t *testing.T) {
	needCluster(t)
	newNamespace(t, "migctl")
	addNodes(t, "4", "8Gi", nil, "migctl-k1", "migctl-k2")
	s, m := startMixed(t, "migctl", 2, 2, 4, "ports=32000-32999")
	job := s.startService("ctl", 8, 2)

	// Bad input: exit 1 or 5 naming what is wrong, HTTP 4xx, nothing stored.
	for _, c := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{"migrate", "start", "--job", job, "--to", "nowhere"}, 1, "to_cluster"},
		{[]string{"migrate", "start", "--job", job, "--to", "mesos:kube"}, 1, "to_cluster"},
		{[]string{"migrate", "start", "--job", job, "--to", "kube", "--batch-size", "0"}, 1, "batch_size"},
		{[]string{"migrate", "start", "--to", "kube"}, 1, "--job"},
		{[]string{"migrate", "start", "--job", "ghost", "--to", "kube"}, 4, "ghost"},
	} {
		out, code := s.peloton(c.args...)
		if code != c.code || !strings.Contains(out, c.text) {
			t.Errorf("peloton %s: exit %d, want %d naming %s\n%s", strings.Join(c.args, " "), code, c.code, c.text, out)
		}
	}
	if code, _ := s.HTTP("POST", "/v1/migrations", `{"jobId":"`+job+`","toCluster":"nowhere"}`); code != http.StatusBadRequest {
		t.Errorf("POST /v1/migrations to an unknown cluster: HTTP %d, want 400", code)
	}
	if out := s.MustCLI("migrate", "list"); strings.Count(out, "\n") > 1 {
		t.Fatalf("refused migrations were stored:\n%s", out)
	}

	// Started paused, nothing moves; resumed, it moves everything within
	// the SLA.
	rep := decodeMigration(t, s.MustCLI("migrate", "start", "--job", job, "--to", "k8s:kube", "--start-paused", "-o", "json"))
	time.Sleep(time.Second)
	if ts, _ := s.sampledTasks(job); perCluster(ts)["kube"] != 0 {
		t.Fatalf("a paused migration moved instances: %v", perCluster(ts))
	}
	if !strings.Contains(s.MustCLI("migrate", "get", rep.ID), "paused") {
		t.Fatalf("migrate get does not say paused")
	}
	sm := s.sample(job, 8)
	s.MustCLI("migrate", "resume", rep.ID)
	waitFor(t, 2*time.Minute, "migration succeeded", func() bool { return s.migration(rep.ID).State == "MIGRATION_STATE_SUCCEEDED" })
	if down, _, _ := sm.end(); down > 2 {
		t.Errorf("%d instances unavailable at once while moving; the SLA allows 2", down)
	}
	waitFor(t, 30*time.Second, "no Mesos task left", func() bool { return liveMesosTasks(m) == 0 })

	// What still runs where, per cluster.
	var cl struct {
		Cluster struct {
			Tasks uint32 `json:"tasks"`
			Jobs  []struct {
				Name  string `json:"name"`
				Tasks uint32 `json:"tasks"`
			} `json:"jobs"`
		} `json:"cluster"`
	}
	s.JSON("GET", "/v1/clusters/kube", "", &cl)
	if cl.Cluster.Tasks != 8 || len(cl.Cluster.Jobs) != 1 || cl.Cluster.Jobs[0].Name != job {
		t.Fatalf("cluster kube: %+v", cl.Cluster)
	}

	// Rolling back onto a drained cluster is refused and changes nothing.
	s.MustCLI("cluster", "drain", "mesos:dc1")
	if out := s.MustCLI("cluster", "get", "dc1"); !strings.Contains(out, "DRAINED") {
		t.Fatalf("cluster get after a drain:\n%s", out)
	}
	if out, code := s.peloton("migrate", "rollback", rep.ID); code != 5 || !strings.Contains(out, "drained") {
		t.Fatalf("rollback onto a drained cluster: exit %d\n%s", code, out)
	}
	if got := s.migration(rep.ID); got.State != "MIGRATION_STATE_SUCCEEDED" {
		t.Fatalf("a refused rollback changed the migration: %+v", got)
	}
	s.MustCLI("cluster", "undrain", "dc1")
	sm = s.sample(job, 8)
	if out, code := s.peloton("migrate", "rollback", rep.ID, "--wait", "--timeout", "2m"); code != 0 {
		t.Fatalf("rollback --wait: exit %d\n%s", code, out)
	}
	if down, _, _ := sm.end(); down > 2 {
		t.Errorf("%d instances unavailable at once while rolling back; the SLA allows 2", down)
	}
	waitFor(t, time.Minute, "every instance back on Mesos", func() bool {
		ts, _ := s.sampledTasks(job)
		return perCluster(ts)["dc1"] == 8 && len(ts) == 8
	})

	// Abort leaves instances where they are.
	rep = decodeMigration(t, s.MustCLI("migrate", "start", "--job", job, "--to", "kube", "--batch-size", "1", "-o", "json"))
	waitFor(t, time.Minute, "one instance moved", func() bool { return s.migration(rep.ID).InstancesMoved >= 1 })
	s.MustCLI("migrate", "pause", rep.ID)
	var aborted struct{ Migration migrationJSON }
	s.JSON("POST", "/v1/migrations/"+rep.ID+":abort", "{}", &aborted)
	if aborted.Migration.State != "MIGRATION_STATE_ABORTED" {
		t.Fatalf("abort over HTTP: %+v", aborted.Migration)
	}
	time.Sleep(time.Second)
	ts, _ := s.sampledTasks(job)
	if got := perCluster(ts); got["kube"] < 1 || got["kube"]+got["dc1"] != 8 {
		t.Fatalf("after the abort: %v", got)
	}
	if out, code := s.peloton("migrate", "resume", rep.ID); code != 5 {
		t.Fatalf("resume of an aborted migration: exit %d\n%s", code, out)
	}
}

// A pool with a 2,000-task batch job running on Mesos, more queued, is
// migrated: tasks placed from then on land on Kubernetes, tasks running
// finish on Mesos, and none is lost or run twice.
func TestPoolMigrationOfABatchJob(t *testing.T) {
	needCluster(t)
	newNamespace(t, "migbatch")
	addNodes(t, "4", "8Gi", nil, "migbatch-k1", "migbatch-k2", "migbatch-k3", "migbatch-k4")
	s, m := startMixed(t, "migbatch", 4, 4, 4, "ports=32000-32999")
	s.JSON("POST", "/v1/pools", `{"path":"/batch","clusters":{"avoid":["kube"]}}`, nil)
	var lastTask testkit.Task
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last task seen: %+v", lastTask)
		}
	})
	job := s.CreateJob(`{"name":"batch","pool":"/batch","instances":2000,"preemptible":true,"task":{"command":"sh","args":["-c","work"],` +
		`"env":{"FAKE_RUN_FOR":"3s","PELOTON_SIM_DURATION":"3s"},"resources":{"cpu":0.25,"memMb":32}}}`)
	waitFor(t, 2*time.Minute, "some tasks done on Mesos", func() bool {
		ts, _ := s.sampledTasks(job)
		done := 0
		for _, tk := range ts {
			if tk.State == "TASK_STATE_SUCCEEDED" {
				done++
			}
			lastTask = tk
		}
		return done >= 100
	})
	start := time.Now()
	rep := decodeMigration(t, s.MustCLI("migrate", "start", "--pool", "/batch", "--to", "kube", "-o", "json"))
	// Runs placed before the policy changed stay where they are.
	before := map[uint32]bool{}
	ts, err := s.sampledTasks(job)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		switch tk.State {
		case "TASK_STATE_PLACED", "TASK_STATE_LAUNCHING", "TASK_STATE_RUNNING", "TASK_STATE_SUCCEEDED":
			before[tk.Instance] = true
		}
	}
	s.WaitJob(job, "JOB_STATE_SUCCEEDED", 5*time.Minute)
	waitFor(t, time.Minute, "migration succeeded", func() bool { return s.migration(rep.ID).State == "MIGRATION_STATE_SUCCEEDED" })
	took := time.Since(start)
	ts, err = s.sampledTasks(job)
	if err != nil {
		t.Fatal(err)
	}
	onKube, onMesos, wrong := 0, 0, 0
	for _, tk := range ts {
		if tk.State != "TASK_STATE_SUCCEEDED" || tk.Run != 1 {
			t.Errorf("task %d: %s, run %d; want SUCCEEDED on its first run", tk.Instance, tk.State, tk.Run)
		}
		switch tk.Cluster {
		case "kube":
			onKube++
		case "dc1":
			onMesos++
			if !before[tk.Instance] {
				wrong++
			}
		}
	}
	if len(ts) != 2000 || onKube+onMesos != 2000 || wrong > 0 {
		t.Fatalf("%d tasks: %d on Kubernetes, %d on Mesos, %d placed on Mesos after the migration started", len(ts), onKube, onMesos, wrong)
	}
	if liveMesosTasks(m) != 0 {
		t.Errorf("Mesos tasks left: %d", liveMesosTasks(m))
	}
	got := s.migration(rep.ID)
	if int(got.Jobs[0].Moved) != onKube {
		t.Errorf("report: %d moved; %d tasks ran on Kubernetes", got.Jobs[0].Moved, onKube)
	}
	t.Logf("pool migration: %d of 2000 tasks ran on Kubernetes, %d on Mesos (started before); %s", onKube, onMesos, took.Round(100*time.Millisecond))
}
