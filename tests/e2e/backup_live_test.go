package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// startSecured starts `peloton server` for region east on loopback with a
// token file and a policy: root is an admin, ops an operator. store is
// the config's store section ("" for the embedded store). It returns the
// server and the tokens by name.
func startSecured(t *testing.T, hosts, store string) (*server, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	lab := testkit.NewLab(t, binary, dir, testkit.LabSpec{Tokens: []string{"root", "ops"},
		Policy: "bindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [ops], role: operator}\n"})
	addr, data := testkit.FreeAddr(t), filepath.Join(dir, "data")
	cfg := fmt.Sprintf("region: east\naddr: %s\ndataDir: %s\nhosts: [%q]\n%s\n%s", addr, data, hosts, lab.AuthConfig(""), store)
	return startPeloton(t, data, addr, "server", "--config", writeFile(t, dir, "server.yaml", cfg)), lab.Tokens
}

// dialAs is a gRPC connection to addr sending token (none: the dev
// cluster's, if addr is one).
func dialAs(t *testing.T, addr, token string) *grpc.ClientConn {
	t.Helper()
	creds := testkit.DevCredentials(addr)
	if token != "" {
		creds = grpc.WithPerRPCCredentials(auth.Bearer{Token: token})
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), creds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// ack is a job whose creation the server acknowledged, when, and how
// long the call took.
type ack struct {
	id   string
	spec *pb.JobSpec
	at   time.Time
	took time.Duration
}

// jobLoad creates jobs from several clients at once until stopped.
type jobLoad struct {
	mu    sync.Mutex
	acks  []ack
	fails map[codes.Code]int
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startJobLoad(conns []*grpc.ClientConn, instances uint32) *jobLoad {
	l := &jobLoad{fails: map[codes.Code]int{}, stop: make(chan struct{})}
	for c, cc := range conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			jobs := pb.NewJobServiceClient(cc)
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				spec := &pb.JobSpec{Name: fmt.Sprintf("live-%d-%d", c, i), Instances: instances,
					Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.5, MemMb: 8}}}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				sent := time.Now()
				resp, err := jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec})
				cancel()
				l.mu.Lock()
				if err != nil {
					l.fails[status.Code(err)]++
				} else {
					l.acks = append(l.acks, ack{id: resp.GetJob().GetId(), spec: resp.GetJob().GetSpec(), at: time.Now(), took: time.Since(sent)})
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// acked returns the jobs acknowledged so far.
func (l *jobLoad) acked() []ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ack(nil), l.acks...)
}

func (l *jobLoad) finish() {
	close(l.stop)
	l.wg.Wait()
}

// allJobs lists every job of the region behind cc.
func allJobs(t *testing.T, cc *grpc.ClientConn, view pb.JobView) map[string]*pb.Job {
	t.Helper()
	out := map[string]*pb.Job{}
	req := &pb.ListJobsRequest{Limit: 5000, View: view}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		resp, err := pb.NewJobServiceClient(cc).ListJobs(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("list jobs: %v", err)
		}
		for _, j := range resp.GetJobs() {
			out[j.GetId()] = j
		}
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			return out
		}
	}
}

// backupJobs opens a copy of a backup file as a store and checks that it
// is whole: every job has exactly the tasks its record says were created
// (a job and its new tasks are one write), and a job that succeeded has
// every task succeeded (the last task and the job's end are one write).
// It returns the jobs by id and the number of tasks.
func backupJobs(t *testing.T, file string) (map[string]*model.Job, int) {
	t.Helper()
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "check.db")
	if err := boltstore.Restore(in, path); err != nil {
		t.Fatalf("the backup is not a store: %v", err)
	}
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	list, err := st.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jobs, ntasks := map[string]*model.Job{}, 0
	for _, j := range list {
		jobs[string(j.ID)] = j
		tasks, err := st.ListTasks(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		ntasks += len(tasks)
		if uint32(len(tasks)) != j.Status.TasksCreated {
			t.Errorf("job %s in the backup: %d tasks stored, its record says %d created", j.ID, len(tasks), j.Status.TasksCreated)
		}
		for i, tk := range tasks {
			if tk.ID.Instance != uint32(i) {
				t.Errorf("job %s in the backup: instance %d missing", j.ID, i)
				break
			}
			if j.Status.State == model.JobSucceeded && tk.State != model.TaskSucceeded {
				t.Errorf("job %s succeeded in the backup, its task %d is %v", j.ID, i, tk.State)
			}
		}
	}
	return jobs, ntasks
}

// The embedded store of a serving region, backed up through the binary
// (`peloton store backup --server`) while four clients keep creating jobs:
// the copy holds every job acknowledged before the backup began, each
// whole (its tasks as its record says, nothing half-written); a region
// restored from it (`peloton store restore`, then a server on it) has
// exactly the backup's jobs with their specs, and runs them all to
// success (tasks it finds RUNNING on hosts that do not know them run
// again, at least once). An operator is refused (PermissionDenied, exit
// 7), an existing --out is refused and kept, and both backups are in the
// audit log under their callers.
func TestStoreBackupOfAServingRegion(t *testing.T) {
	const hosts = "sim,hosts=4,cpu=16,duration=500ms"
	const instances = 10
	s, tokens := startSecured(t, hosts, "")
	root := dialAs(t, s.Addr, tokens["root"])
	conns := []*grpc.ClientConn{root}
	for range 3 {
		conns = append(conns, dialAs(t, s.Addr, tokens["root"]))
	}
	load := startJobLoad(conns, instances)
	defer func() {
		select {
		case <-load.stop:
		default:
			load.finish()
		}
	}()
	// PELOTON_BACKUP_JOBS makes the store larger (docs/reliability.md
	// quotes a run with 3000).
	prefill := envInt(t, "PELOTON_BACKUP_JOBS", 300)
	waitFor(t, time.Duration(prefill)*time.Second, fmt.Sprintf("%d jobs created", prefill), func() bool { return len(load.acked()) >= prefill })

	// An operator may not, and writes nothing.
	dir := t.TempDir()
	denied := filepath.Join(dir, "denied.db")
	if r := s.CLI("store", "backup", "--server", s.Addr, "--token", tokens["ops"], "--out", denied); r.Code != cli.ExitDenied || !strings.Contains(r.Stderr, "backup-store") {
		t.Fatalf("an operator's backup: exit %d, %s", r.Code, r.Stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused backup left %v", entries)
	}

	file := filepath.Join(dir, "east.db")
	began := time.Now()
	out := s.MustCLI("store", "backup", "--server", s.Addr, "--token", tokens["root"], "--out", file)
	took := time.Since(began)
	time.Sleep(300 * time.Millisecond) // the load goes on past the backup
	load.finish()
	t.Logf("%s", strings.TrimSpace(out))
	acks := load.acked()
	var before, during int
	var slowestBefore, slowestDuring time.Duration
	for _, a := range acks {
		switch {
		case a.at.Before(began):
			before++
			slowestBefore = max(slowestBefore, a.took)
		case a.at.Before(began.Add(took)):
			during++
			slowestDuring = max(slowestDuring, a.took)
		}
	}

	// An existing --out is refused and kept as it was.
	kept, _ := os.ReadFile(file)
	if r := s.CLI("store", "backup", "--server", s.Addr, "--token", tokens["root"], "--out", file); r.Code == 0 || !strings.Contains(r.Stderr, "--out") || !strings.Contains(r.Stderr, "exists") {
		t.Fatalf("a backup over an existing file: exit %d, %s", r.Code, r.Stderr)
	}
	if again, _ := os.ReadFile(file); string(again) != string(kept) {
		t.Fatal("a refused backup changed the existing file")
	}

	// Both backups are audited under their callers.
	waitFor(t, 30*time.Second, "the backups in the audit log", func() bool {
		resp, err := pb.NewAuditServiceClient(root).ListAudit(context.Background(), &pb.ListAuditRequest{Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range resp.GetRecords() {
			if r.GetRpc() == pb.SystemService_BackupStore_FullMethodName {
				seen[r.GetName()+" "+r.GetCode()+" "+r.GetResource()] = true
			}
		}
		return seen["root OK store of the receiving region"] && seen["ops PermissionDenied "]
	})
	s.Stop()
	server := "not logged"
	if m := regexp.MustCompile(`msg="store backed up".* copy=(\S+) total=(\S+)`).FindStringSubmatch(s.Output()); m != nil {
		server = "copy " + m[1] + ", in all " + m[2]
	}

	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	jobs, ntasks := backupJobs(t, file)
	specs := map[string]*pb.JobSpec{}
	for _, a := range acks {
		specs[a.id] = a.spec
	}
	for _, a := range acks {
		if a.at.Before(began) {
			if _, ok := jobs[a.id]; !ok {
				t.Errorf("job %s, acknowledged before the backup began, is not in it", a.id)
			}
		}
	}
	for id := range jobs {
		if specs[id] == nil {
			t.Errorf("job %s is in the backup but was never acknowledged", id)
		}
	}
	t.Logf("store %d bytes, %d jobs with %d tasks; the backup took %v through the CLI (the server's: %s); jobs acknowledged: %d before it began, %d while it ran, %d in all; %d jobs in it acknowledged after it began; creates refused %v; slowest create acknowledged before it %v, while it ran %v",
		info.Size(), len(jobs), ntasks, took.Round(time.Millisecond), server, before, during, len(acks), len(jobs)-before, load.fails,
		slowestBefore.Round(time.Millisecond), slowestDuring.Round(time.Millisecond))

	// A region restored from the backup has its jobs, and runs them.
	fresh := t.TempDir()
	restoring := time.Now()
	s.MustCLI("store", "restore", "--in", file, "--db", filepath.Join(fresh, "store.db"))
	restoreTook := time.Since(restoring)
	r := startDev(t, fresh, "--region", "east", "--hosts", hosts)
	restored := dialAs(t, r.Addr, "")
	got := allJobs(t, restored, pb.JobView_JOB_VIEW_FULL)
	if len(got) != len(jobs) {
		t.Errorf("%d jobs in the restored region, %d in the backup", len(got), len(jobs))
	}
	for id := range jobs {
		j, ok := got[id]
		if !ok {
			t.Errorf("job %s of the backup is not in the restored region", id)
			continue
		}
		if !proto.Equal(j.GetSpec(), specs[id]) {
			t.Errorf("job %s restored with spec %v, created with %v", id, j.GetSpec(), specs[id])
		}
	}
	ran := waitFor(t, 10*time.Minute, "every restored job to succeed", func() bool {
		for _, j := range allJobs(t, restored, pb.JobView_JOB_VIEW_SUMMARY) {
			if j.GetStatus().GetState() != pb.JobState_JOB_STATE_SUCCEEDED {
				return false
			}
		}
		return true
	})
	for id, j := range allJobs(t, restored, pb.JobView_JOB_VIEW_SUMMARY) {
		if n := j.GetStatus().GetTaskStates()["SUCCEEDED"]; n != instances {
			t.Errorf("restored job %s: %d of %d tasks succeeded (%v)", id, n, instances, j.GetStatus().GetTaskStates())
		}
	}
	t.Logf("restore took %v; every restored job succeeded %v after the restored server was healthy", restoreTook.Round(time.Millisecond), ran.Round(time.Second))
}

// A region whose store is Cassandra refuses a server backup, naming the
// command that backs Cassandra up (exit 5, FailedPrecondition).
func TestStoreBackupOfACassandraRegionIsRefused(t *testing.T) {
	cass := os.Getenv("PELOTON_TEST_CASSANDRA")
	if cass == "" {
		testenv.Missing(t, "a test Cassandra (PELOTON_TEST_CASSANDRA)", "deploy/cassandra/cassandra.sh start, then set PELOTON_TEST_CASSANDRA=127.0.0.1:PORT")
	}
	keyspace := fmt.Sprintf("backup_refused_%d", time.Now().UnixNano())
	t.Cleanup(func() { // after the server stopped
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if st, err := cassandra.Open(ctx, cassandra.Config{Hosts: []string{cass}, Keyspace: keyspace}); err == nil {
			if err := st.DropKeyspace(ctx); err != nil {
				t.Logf("drop keyspace %s: %v", keyspace, err)
			}
			st.Close()
		}
	})
	s, tokens := startSecured(t, "sim,hosts=1", fmt.Sprintf("store: {kind: cassandra, cassandra: {hosts: [%q], keyspace: %s, migrate: true}}\n", cass, keyspace))
	out := filepath.Join(t.TempDir(), "east.db")
	r := s.CLI("store", "backup", "--server", s.Addr, "--token", tokens["root"], "--out", out)
	if r.Code != cli.ExitRefused || !strings.Contains(r.Stderr, "peloton store backup --cassandra") {
		t.Fatalf("a backup of a Cassandra region: exit %d, %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused backup wrote --out")
	}
	t.Logf("refused: %s", strings.TrimSpace(r.Stderr))
}
