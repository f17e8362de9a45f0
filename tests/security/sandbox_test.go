package security

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/tests/testkit"
	"google.golang.org/grpc"
)

// A pool owner's job on a secured server's local host tries to read what
// would make it admin or another user: the CA's and the region's keys,
// the token file, every file of the server's data directory (its store
// among them), the server's environment, and another pool's task's
// sandbox and log. Each attempt is refused: the task runs as a uid of its
// own, not root. (Before tasks were sandboxed they ran as the server's
// user and read all of it.)
func TestLocalTasksCannotReachTheServerOrEachOther(t *testing.T) {
	pki, toks := lab(t, []string{"east"}, nil, []string{"root", "alice", "bob"}, `bindings:
  - {subjects: [root], role: admin}
  - {subjects: [alice], role: pool-owner, pools: [/a]}
  - {subjects: [bob], role: pool-owner, pools: [/b]}
`)
	// Laid out as in production: the keys' directory and the data
	// directory's parents may be searched by anyone (/etc/peloton,
	// /var/lib); what guards them is their modes and the server's.
	openToTasks(t, pki, 0o755)
	base := t.TempDir()
	openToTasks(t, base, 0o711)
	data := filepath.Join(base, "east")
	east := startRegionOn(t, pki, "east", fmt.Sprintf("127.0.0.1:%d", freePort(t)), data, `"local"`, "", "")
	root, alice, bob := caller{name: "root", token: toks["root"]}, caller{name: "alice", token: toks["alice"]}, caller{name: "bob", token: toks["bob"]}
	ctx := context.Background()
	for _, p := range []string{"/a", "/b"} {
		if _, err := pb.NewPoolServiceClient(east.conn(root)).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: p, Reservation: &pb.Resources{Cpu: 0.5, MemMb: 256}}}); err != nil {
			t.Fatalf("create pool %s: %v", p, err)
		}
	}

	// bob's task keeps a secret in its sandbox and one in its log.
	bobs := east.conn(bob)
	bobJob := runJob(t, bobs, "/b", "echo bob-secret > secret; echo bob-log-secret; sleep 300")
	waitLog(t, bobs, bobJob, "bob-log-secret")
	runs, _ := filepath.Glob(filepath.Join(data, "hosts", "local", "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("run directories %v, want bob's alone", runs)
	}
	bobRun := runs[0]

	targets := map[string]string{
		"ca-key":      filepath.Join(pki, "ca.key"),
		"region-key":  filepath.Join(pki, "east.key"),
		"tokens":      filepath.Join(pki, "tokens.yaml"),
		"store":       filepath.Join(data, "store.db"),
		"environ":     "/proc/" + strconv.Itoa(east.proc.Pid()) + "/environ",
		"bob-sandbox": filepath.Join(bobRun, "sandbox", "secret"),
		"bob-log":     filepath.Join(bobRun, "stdout"),
	}
	// Every other file the server keeps in its data directory too.
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(path, "/sandbox/") {
			rel, _ := filepath.Rel(data, path)
			targets["data:"+rel] = path
		}
		return nil
	})
	script := `try() { if cat "$2" > /dev/null 2>&1; then echo "READ $1"; else echo "DENIED $1"; fi; }
echo "UID $(id -u)"
if ls "` + data + `" > /dev/null 2>&1; then echo "READ data-dir-listing"; else echo "DENIED data-dir-listing"; fi
`
	for what, path := range targets {
		script += fmt.Sprintf("try %q %q\n", what, path)
	}
	alices := east.conn(alice)
	aliceJob := runJob(t, alices, "/a", script)
	waitState(t, alices, aliceJob, pb.TaskState_TASK_STATE_SUCCEEDED)
	out := logsOf(t, alices, aliceJob)

	uid := -1
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "UID "); ok {
			uid, _ = strconv.Atoi(v)
		}
	}
	if uid <= 0 {
		t.Errorf("the task ran as uid %d, want an unprivileged one:\n%s", uid, out)
	}
	for what := range targets {
		if !strings.Contains(out, "DENIED "+what+"\n") {
			t.Errorf("%s (%s) was not refused", what, targets[what])
		}
	}
	if !strings.Contains(out, "DENIED data-dir-listing\n") {
		t.Error("the task listed the data directory")
	}
	if t.Failed() {
		t.Logf("alice's task said:\n%s", out)
	}
	// Another user of the machine (nobody) reads neither bob's log nor
	// his sandbox, nor lists the runs: the files are 0600, the
	// directories traverse-only.
	for what, path := range map[string]string{"bob-log": filepath.Join(bobRun, "stdout"), "bob-sandbox": filepath.Join(bobRun, "sandbox", "secret")} {
		cat := exec.Command("/bin/cat", path)
		cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if got, err := cat.CombinedOutput(); err == nil {
			t.Errorf("nobody read %s (%s): %q", what, path, got)
		}
	}
	ls := exec.Command("/bin/ls", filepath.Dir(bobRun))
	ls.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if got, err := ls.CombinedOutput(); err == nil {
		t.Errorf("nobody listed the runs: %q", got)
	}
	// The server itself reads the task's logs (above), and bob's.
	if got := logsOf(t, bobs, bobJob); !strings.Contains(got, "bob-log-secret") {
		t.Errorf("bob's log through the API: %q", got)
	}
}

// openToTasks gives dir mode and lets others search every directory from
// the temporary root down to it (t.TempDir makes them 0700).
func openToTasks(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	root := filepath.Clean(os.TempDir())
	for d := filepath.Dir(dir); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
}

// runJob creates a one-instance batch job of a shell script in pool and
// returns its id.
func runJob(t *testing.T, cc *grpc.ClientConn, pool, script string) string {
	t.Helper()
	resp, err := pb.NewJobServiceClient(cc).CreateJob(context.Background(), &pb.CreateJobRequest{Spec: &pb.JobSpec{
		Name: "sandbox", Pool: pool, Instances: 1,
		Task: &pb.TaskSpec{Command: "sh", Args: []string{"-c", script}, Resources: &pb.Resources{Cpu: 0.1, MemMb: 32}},
	}})
	if err != nil {
		t.Fatalf("create job in %s: %v", pool, err)
	}
	return resp.GetJob().GetId()
}

// waitState waits until the job's instance 0 is in state.
func waitState(t *testing.T, cc *grpc.ClientConn, job string, state pb.TaskState) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := pb.NewTaskServiceClient(cc).GetTask(context.Background(), &pb.GetTaskRequest{JobId: job})
		if err == nil && resp.GetTask().GetState() == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: task %v (%v), want %v", job, resp.GetTask(), err, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog waits until the job's instance 0 printed want.
func waitLog(t *testing.T, cc *grpc.ClientConn, job, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logsOf(t, cc, job), want) {
		if time.Now().After(deadline) {
			task, err := pb.NewTaskServiceClient(cc).GetTask(context.Background(), &pb.GetTaskRequest{JobId: job})
			t.Fatalf("job %s did not print %q: task %v %v", job, want, task.GetTask(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logsOf is the stdout of the job's instance 0 so far, read through the
// API ("" before it runs).
func logsOf(t *testing.T, cc *grpc.ClientConn, job string) string {
	t.Helper()
	resp, err := pb.NewTaskServiceClient(cc).GetTaskLogs(context.Background(), &pb.GetTaskLogsRequest{JobId: job})
	if err != nil {
		return ""
	}
	return string(resp.GetData())
}

// A secured server that cannot sandbox its local tasks (it runs as nobody,
// so it cannot switch users) refuses to start, naming the flag that
// allows it; with the flag it starts, and says loudly that tasks are not
// sandboxed.
func TestSecuredServerRefusesLocalTasksItCannotSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (to run a server as nobody)", "run the security tests as root")
	}
	pki, _ := lab(t, []string{"east"}, nil, []string{"root"}, "bindings:\n  - {subjects: [root], role: admin}\n")
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	openToTasks(t, shared, 0o755)
	// nobody's copies of the binary and the region's files.
	copyTo := func(src, dst string, mode fs.FileMode) {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, raw, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dst, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(shared, "peloton")
	copyTo(binary, bin, 0o755)
	for _, f := range []string{"east.crt", "east.key", "ca.crt", "tokens.yaml", "policy.yaml"} {
		copyTo(filepath.Join(pki, f), filepath.Join(shared, f), 0o600)
	}
	data := filepath.Join(shared, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(shared, "east.yaml")
	copyToText := fmt.Sprintf("region: east\naddr: 127.0.0.1:%d\ndataDir: %s\nhosts: [local]\ntls: {cert: %s, key: %s, ca: %s}\nauth: {tokens: %s, policy: %s}\n",
		freePort(t), data, filepath.Join(shared, "east.crt"), filepath.Join(shared, "east.key"), filepath.Join(shared, "ca.crt"),
		filepath.Join(shared, "tokens.yaml"), filepath.Join(shared, "policy.yaml"))
	if err := os.WriteFile(cfg, []byte(copyToText), 0o644); err != nil {
		t.Fatal(err)
	}
	asNobody := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + shared}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
	out, err := asNobody("server", "--config", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-unsandboxed-local-tasks") {
		t.Fatalf("a secured server as nobody with local hosts: %v\n%s\nwant a refusal naming --allow-unsandboxed-local-tasks", err, out)
	}
	t.Logf("refused: %s", testkit.LastLines(strings.TrimSpace(string(out)), 1))

	srv := testkit.StartCmd(t, asNobody("server", "--config", cfg, "--allow-unsandboxed-local-tasks"))
	testkit.WaitFor(t, 30*time.Second, "the allowed server to say tasks are not sandboxed", func() bool {
		return strings.Contains(srv.Output(), "NOT SANDBOXED")
	})
}
