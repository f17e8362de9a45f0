package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/tests/testkit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// cassandraNode is a throwaway Cassandra of this test, so it may be
// stopped without disturbing other tests: a node of its own, or one of a
// cluster it started (cluster_test.go).
type cassandraNode struct {
	script, dir       string
	addr              string // a loopback address
	port, storagePort int
}

// cassandraScript is deploy/cassandra/cassandra.sh.
func cassandraScript(t *testing.T) string {
	script, err := filepath.Abs("../../deploy/cassandra/cassandra.sh")
	if err != nil {
		t.Fatal(err)
	}
	return script
}

// runScript runs cassandra.sh with args and fails the test if it fails.
func runScript(t *testing.T, script string, args ...string) {
	t.Helper()
	out, err := exec.Command(script, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cassandra.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (n *cassandraNode) run(t *testing.T, command string, flags ...string) {
	t.Helper()
	runScript(t, n.script, n.args(command, flags...)...)
}

// args are cassandra.sh's arguments for command on the node.
func (n *cassandraNode) args(command string, flags ...string) []string {
	args := []string{command, "--dir", n.dir}
	if command == "start" {
		args = append(args, "--address", n.addr, "--port", fmt.Sprint(n.port), "--storage-port", fmt.Sprint(n.storagePort))
	}
	return append(args, flags...)
}

// hostPort is the node's CQL address.
func (n *cassandraNode) hostPort() string { return fmt.Sprintf("%s:%d", n.addr, n.port) }

// signal sends sig to the node's JVM (the pid the script recorded).
func (n *cassandraNode) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dir, "cassandra.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("cassandra.pid: %v", err)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to Cassandra (pid %d): %v", sig, pid, err)
	}
}

// outcome is what one create call got.
type outcome int

const (
	acked   outcome = iota // 200 / OK with a job id
	refused                // 503 / Unavailable
	shed                   // 429 / ResourceExhausted
	broken                 // anything else: 500, Internal, a call that hung
)

// call is one create call of the load.
type call struct {
	at, took time.Duration // since the load began
	via      string        // "http" or "grpc"
	outcome  outcome
	job      string
	detail   string
}

// outageLoad submits small jobs without pause, alternately over HTTP/JSON
// and gRPC, and records what each call got.
type outageLoad struct {
	addr  string
	grpc  pb.JobServiceClient
	begin time.Time
	// hang is how long a call may take before it counts as hung.
	hang time.Duration

	mu    sync.Mutex
	calls []call // creates
	reads []call
}

const outageJobSpec = `{"name":"outage","instances":%d,"preemptible":true,"task":{"command":"sim","resources":{"cpu":0.5,"memMb":1}}}`

// outageTasks is the instances of each job of the load.
const outageTasks = 4

func (l *outageLoad) createHTTP() call {
	ctx, cancel := context.WithTimeout(context.Background(), l.hang)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+l.addr+"/v1/jobs", strings.NewReader(fmt.Sprintf(outageJobSpec, outageTasks)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return call{outcome: broken, detail: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		var out struct {
			Job struct {
				ID string `json:"id"`
			} `json:"job"`
		}
		if json.Unmarshal(body, &out) != nil || out.Job.ID == "" {
			return call{outcome: broken, detail: "200 without a job id: " + string(body)}
		}
		return call{outcome: acked, job: out.Job.ID}
	case http.StatusServiceUnavailable:
		return call{outcome: refused, detail: string(body)}
	case http.StatusTooManyRequests:
		return call{outcome: shed, detail: string(body)}
	}
	return call{outcome: broken, detail: fmt.Sprintf("%d %s", resp.StatusCode, body)}
}

func (l *outageLoad) createGRPC() call {
	ctx, cancel := context.WithTimeout(context.Background(), l.hang)
	defer cancel()
	resp, err := l.grpc.CreateJob(ctx, &pb.CreateJobRequest{Spec: &pb.JobSpec{
		Name: "outage", Instances: outageTasks, Preemptible: true,
		Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.5, MemMb: 1}},
	}})
	switch status.Code(err) {
	case codes.OK:
		return call{outcome: acked, job: resp.GetJob().GetId()}
	case codes.Unavailable:
		return call{outcome: refused, detail: err.Error()}
	case codes.ResourceExhausted:
		return call{outcome: shed, detail: err.Error()}
	}
	return call{outcome: broken, detail: err.Error()}
}

// read gets the first acknowledged job over HTTP. A read is served from
// the shard's memory, but it waits for the loop's pass in progress, and a
// pass holds the shard while it writes to the store: how long reads take
// is a figure of the run, not a check.
func (l *outageLoad) read() call {
	l.mu.Lock()
	job := ""
	for _, c := range l.calls {
		if c.outcome == acked {
			job = c.job
			break
		}
	}
	l.mu.Unlock()
	if job == "" {
		return call{outcome: shed} // nothing to read yet: not counted
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+l.addr+"/v1/jobs/"+job, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return call{outcome: broken, detail: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return call{outcome: broken, detail: fmt.Sprintf("%d %s", resp.StatusCode, body)}
	}
	return call{outcome: acked, job: job}
}

// run submits until ctx ends, one call at a time per transport, every
// interval, and reads a job as often.
func (l *outageLoad) run(ctx context.Context, interval time.Duration) {
	var wg sync.WaitGroup
	for _, via := range []string{"http", "grpc", "read"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for ctx.Err() == nil {
				start := time.Now()
				var c call
				switch via {
				case "http":
					c = l.createHTTP()
				case "grpc":
					c = l.createGRPC()
				default:
					c = l.read()
				}
				c.at, c.took, c.via = start.Sub(l.begin), time.Since(start), via
				l.mu.Lock()
				if via != "read" {
					l.calls = append(l.calls, c)
				} else if c.job != "" || c.outcome == broken {
					l.reads = append(l.reads, c)
				}
				l.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
}

// since returns the creates that started at or after d.
func (l *outageLoad) since(d time.Duration) []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []call
	for _, c := range l.calls {
		if c.at >= d {
			out = append(out, c)
		}
	}
	return out
}

// now is the time since the load began.
func (l *outageLoad) now() time.Duration { return time.Since(l.begin) }

// window counts the outcomes of the creates in flight at some time in
// [from, to), and the reads.
type window struct {
	acked, refused, shed, broken int
	slowest                      time.Duration // of the refused creates
	firstAck                     time.Duration // start of the first acknowledged create that started in the window; -1 if none
	brokenDetail                 []string
	reads, readsFailed           int
	slowestRead                  time.Duration
}

func (l *outageLoad) window(from, to time.Duration) window {
	w := window{firstAck: -1}
	l.mu.Lock()
	defer l.mu.Unlock()
	in := func(c call) bool { return c.at < to && c.at+c.took >= from }
	for _, c := range l.calls {
		if !in(c) {
			continue
		}
		switch c.outcome {
		case acked:
			w.acked++
			if c.at >= from && (w.firstAck < 0 || c.at < w.firstAck) {
				w.firstAck = c.at
			}
		case refused:
			w.refused++
			w.slowest = max(w.slowest, c.took)
		case shed:
			w.shed++
		case broken:
			w.broken++
			w.brokenDetail = append(w.brokenDetail, fmt.Sprintf("%s at %.1fs after %.1fs: %s", c.via, c.at.Seconds(), c.took.Seconds(), c.detail))
		}
	}
	for _, c := range l.reads {
		if !in(c) {
			continue
		}
		w.reads++
		w.slowestRead = max(w.slowestRead, c.took)
		if c.outcome == broken {
			w.readsFailed++
			w.brokenDetail = append(w.brokenDetail, fmt.Sprintf("read at %.1fs after %.1fs: %s", c.at.Seconds(), c.took.Seconds(), c.detail))
		}
	}
	return w
}

// Cassandra stopped under load, twice: paused (SIGSTOP, a node that takes
// connections and never answers) and killed (kill -9, then started again
// through deploy/cassandra/cassandra.sh). Jobs are submitted over HTTP/JSON
// and gRPC throughout while earlier ones run. During each outage every
// create is answered, within the store's timeout, with 503 / Unavailable
// (never a 500 or a call left hanging); a create refused while Cassandra
// is down changes nothing. Once Cassandra is back the shard carries on by
// itself: every acknowledged job is there and succeeds with every task, and
// no task ever had two runs RUNNING at once.
func TestCassandraOutage(t *testing.T) {
	cassandraAddr(t) // CI provides Cassandra (jars cached); this test runs its own node
	n := &cassandraNode{script: cassandraScript(t), dir: t.TempDir(), addr: "127.0.0.1", port: testkit.FreePort(t, "127.0.0.1"), storagePort: testkit.FreePort(t, "127.0.0.1")}
	// --durable: the schema is in the commit log, so a node killed with
	// SIGKILL comes back with its keyspace, as a real one does.
	n.run(t, "start", "--clean", "--durable")
	t.Cleanup(func() { n.run(t, "stop", "--kill") })

	const storeTimeout = 5 * time.Second
	r := startOutageRun(t, []string{n.hostPort()}, "1", storeTimeout)
	load := r.load
	r.acksAfter(0, 30*time.Second, "the first job acknowledged")
	time.Sleep(3 * time.Second) // load running: jobs queued, running and finishing

	// 1. Paused: connections stay open and nothing answers. Creates wait
	// for the store's timeout and are refused.
	paused := load.now()
	n.signal(t, syscall.SIGSTOP)
	waitFor(t, 30*time.Second, "a create refused while Cassandra is paused", func() bool {
		return load.window(paused, load.now()).refused >= 2
	})
	time.Sleep(2 * time.Second)
	n.signal(t, syscall.SIGCONT)
	resumed := load.now()
	firstAck := r.acksAfter(resumed, 60*time.Second, "a create acknowledged after SIGCONT")
	pause := load.window(paused, resumed)
	t.Logf("paused %.1fs: creates in flight %d acknowledged, %d refused (the slowest answered in %.1fs), %d shed, %d broken; reads %d (the slowest %.0fms), %d failed; the first create after SIGCONT acknowledged %.1fs later",
		(resumed - paused).Seconds(), pause.acked, pause.refused, pause.slowest.Seconds(), pause.shed, pause.broken,
		pause.reads, float64(pause.slowestRead.Microseconds())/1000, pause.readsFailed, (firstAck - resumed).Seconds())
	time.Sleep(3 * time.Second)

	// 2. Killed: connections refused. Creates are refused at once and
	// change nothing; the node is started again through the script.
	killed := load.now()
	n.run(t, "stop", "--kill")
	waitFor(t, 30*time.Second, "a create refused while Cassandra is down", func() bool {
		return load.window(killed, load.now()).refused >= 2
	})
	r.unchangedWhileRefused(2 * time.Second)
	restarting := load.now()
	n.run(t, "start", "--durable")
	ready := load.now()
	firstAck = r.acksAfter(ready, 90*time.Second, "a create acknowledged after the restart")
	down := load.window(killed, ready)
	t.Logf("killed, down %.1fs (the restart took %.1fs): creates in flight %d acknowledged, %d refused (the slowest answered in %.1fs), %d shed, %d broken; reads %d (the slowest %.0fms), %d failed; the first create after CQL was ready acknowledged %.1fs later",
		(ready - killed).Seconds(), (ready - restarting).Seconds(), down.acked, down.refused, down.slowest.Seconds(), down.shed, down.broken,
		down.reads, float64(down.slowestRead.Microseconds())/1000, down.readsFailed, (firstAck - ready).Seconds())
	// The jobs acknowledged before the kill finish once the shard resumed.
	beforeKill := r.ackedBefore(killed)
	r.waitSucceeded(beforeKill, 30*time.Second, "the jobs acknowledged before the kill to succeed")
	t.Logf("the %d jobs acknowledged before the kill all succeeded %.1fs after Cassandra answered again", len(beforeKill), (load.now() - ready).Seconds())
	time.Sleep(3 * time.Second)

	r.finish()
	if pause.refused == 0 || down.refused == 0 {
		t.Errorf("refused while paused %d, while down %d: want both above 0", pause.refused, down.refused)
	}
	for _, c := range load.since(0) {
		if c.at+c.took < paused && c.outcome != acked {
			t.Errorf("before the outage a create over %s got %s", c.via, c.detail)
		}
	}
}

// outageRun is a `peloton server` on a given Cassandra with the load of
// outageLoad running against it: the harness of the Cassandra fault tests
// (TestCassandraOutage, TestCassandraCluster).
type outageRun struct {
	t        *testing.T
	m        *member
	load     *outageLoad
	stopLoad func() // stops the load and waits for it; safe to call twice
}

// startOutageRun starts the server on the Cassandra at hosts, its
// keyspace "peloton" created with replication (cassandra.ParseReplication's
// form) and requests bounded by storeTimeout, waits until it is healthy
// and starts the load. The test's cleanups stop both.
func startOutageRun(t *testing.T, hosts []string, replication string, storeTimeout time.Duration) *outageRun {
	m := startSolo(t, "solo", hosts, "peloton", replication, storeTimeout)
	return startLoad(t, m, storeTimeout)
}

// startSolo starts a server of region r named name on the keyspace of the
// Cassandra at hosts (created with replication when missing), with 10
// simulated hosts, and waits until it is healthy. The test's cleanups
// stop it, and print its last lines if the test failed.
func startSolo(t *testing.T, name string, hosts []string, keyspace, replication string, storeTimeout time.Duration) *member {
	dir := t.TempDir()
	m := newMember(t, name)
	m.config = filepath.Join(dir, name+".yaml")
	quoted := make([]string, len(hosts))
	for i, h := range hosts {
		quoted[i] = strconv.Quote(h)
	}
	cfg := fmt.Sprintf(`region: r
addr: %s
dataDir: %s
hosts: ["sim,hosts=10,cpu=8,mem=65536,duration=1s"]
store: {kind: cassandra, cassandra: {hosts: [%s], keyspace: %s, replication: %q, migrate: true, timeout: %s}}
`, m.addr, filepath.Join(dir, "data"), strings.Join(quoted, ", "), keyspace, replication, storeTimeout)
	if err := os.WriteFile(m.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()
	m.proc.WaitHealthy(http.DefaultClient, m.URL, 60*time.Second)
	return m
}

// startLoad starts the load of outageLoad against m; the test's cleanups
// stop it.
func startLoad(t *testing.T, m *member, storeTimeout time.Duration) *outageRun {
	conn, err := grpc.NewClient(m.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	// A create answered later than this counts as hung: the store's
	// request timeout twice (a create waits for the pass in progress, and
	// the pass that found the outage waited for the store once) and a
	// margin.
	load := &outageLoad{addr: m.addr, grpc: pb.NewJobServiceClient(conn), begin: time.Now(), hang: 2*storeTimeout + 5*time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		load.run(ctx, 100*time.Millisecond)
	}()
	r := &outageRun{t: t, m: m, load: load, stopLoad: func() { cancel(); <-loadDone }}
	t.Cleanup(r.stopLoad)
	return r
}

// acksAfter waits until a create started after d was acknowledged and
// returns when that create started.
func (r *outageRun) acksAfter(d time.Duration, within time.Duration, what string) time.Duration {
	r.t.Helper()
	var first time.Duration
	waitFor(r.t, within, what, func() bool {
		first = r.load.window(d, r.load.now()).firstAck
		return first >= 0
	})
	return first
}

// jobStates lists every job's status in one call.
func (r *outageRun) jobStates() map[string]testkit.JobStatus {
	var out struct {
		Jobs []struct {
			ID     string            `json:"id"`
			Status testkit.JobStatus `json:"status"`
		} `json:"jobs"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := r.m.Get("/v1/jobs?limit=5000", &out); err != nil {
		r.t.Fatal(err)
	}
	if out.NextPageToken != "" {
		r.t.Fatal("more than 5000 jobs: the test reads one page")
	}
	states := make(map[string]testkit.JobStatus, len(out.Jobs))
	for _, j := range out.Jobs {
		states[j.ID] = j.Status
	}
	return states
}

// unchangedWhileRefused checks, while the store refuses writes, that the
// creates refused over d leave the shard's jobs as they were.
func (r *outageRun) unchangedWhileRefused(d time.Duration) {
	r.t.Helper()
	before := len(r.jobStates())
	time.Sleep(d)
	if after := len(r.jobStates()); after != before {
		r.t.Errorf("jobs refused while the store was down were kept: %d jobs, had %d", after, before)
	}
}

// ackedBefore returns the jobs whose create was acknowledged before d.
func (r *outageRun) ackedBefore(d time.Duration) []string {
	var jobs []string
	for _, c := range r.load.since(0) {
		if c.outcome == acked && c.at+c.took < d {
			jobs = append(jobs, c.job)
		}
	}
	sort.Strings(jobs)
	return jobs
}

// waitSucceeded waits until every one of jobs SUCCEEDED with all its
// tasks; a job gone, FAILED or KILLED fails the test at once. The jobs
// left run on the region's few hosts at the pace its store writes (on a
// three-node Cassandra cluster of a loaded machine, a pass's conditional
// writes take seconds), so what is bounded is progress: the test fails
// when no job succeeded for stall, or when jobs are left after the
// longest wait, ten times stall.
func (r *outageRun) waitSucceeded(jobs []string, stall time.Duration, what string) {
	r.t.Helper()
	var lagging []string
	defer func() {
		if r.t.Failed() && len(lagging) > 0 {
			r.t.Logf("jobs not succeeded, %d of %d: %s", len(lagging), len(jobs), strings.Join(lagging[:min(len(lagging), 10)], "; "))
		}
	}()
	started := time.Now()
	best, progressed := len(jobs)+1, time.Now()
	for {
		states := r.jobStates()
		lagging = lagging[:0]
		for _, id := range jobs {
			st, ok := states[id]
			if !ok {
				r.t.Fatalf("acknowledged job %s is gone", id)
			}
			if st.State == "JOB_STATE_FAILED" || st.State == "JOB_STATE_KILLED" {
				r.t.Fatalf("acknowledged job %s ended %s: %v", id, st.State, st.TaskStates)
			}
			if st.State == "JOB_STATE_SUCCEEDED" && st.TaskStates["SUCCEEDED"] != outageTasks {
				r.t.Fatalf("job %s succeeded with %v", id, st.TaskStates)
			}
			if st.State != "JOB_STATE_SUCCEEDED" {
				lagging = append(lagging, fmt.Sprintf("%s %s %v", id, st.State, st.TaskStates))
			}
		}
		if len(lagging) == 0 {
			return
		}
		if len(lagging) < best {
			best, progressed = len(lagging), time.Now()
		}
		switch {
		case time.Since(progressed) > stall:
			r.t.Fatalf("waiting for %s: no job succeeded for %v, %d of %d left", what, stall, len(lagging), len(jobs))
		case time.Since(started) > 10*stall:
			r.t.Fatalf("waiting for %s: %d of %d left after %v", what, len(lagging), len(jobs), 10*stall)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// finish stops the load and checks the run as a whole: every create was
// answered in time (acknowledged, or refused as Unavailable), every
// acknowledged job is there and succeeds with all its tasks, and no task
// had two runs RUNNING at once. It returns the outcomes of every create.
func (r *outageRun) finish() window {
	t := r.t
	r.stopLoad()
	all := r.load.window(0, r.load.now())
	if all.broken > 0 {
		t.Errorf("%d creates got neither an answer nor Unavailable in time:\n%s", all.broken, strings.Join(all.brokenDetail, "\n"))
	}
	jobs := r.ackedBefore(r.load.now())
	finished := time.Now()
	r.waitSucceeded(jobs, time.Minute, "every acknowledged job to succeed")
	settled := time.Since(finished)
	dups, events := 0, 0
	for _, id := range jobs {
		d, e := overlappingRuns(t, r.m, id)
		dups, events = dups+d, events+e
	}
	t.Logf("jobs acknowledged %d (%d tasks), refused %d, shed %d; every acknowledged job succeeded, the last %.1fs after the load stopped; tasks with two runs RUNNING at once %d (from %d events)",
		len(jobs), len(jobs)*outageTasks, all.refused, all.shed, settled.Seconds(), dups, events)
	if dups > 0 {
		t.Errorf("%d tasks had two runs RUNNING at once", dups)
	}
	return all
}
