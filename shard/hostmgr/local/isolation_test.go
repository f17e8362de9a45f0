package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// needRoot stops a test that runs tasks as other users when this process
// cannot switch users.
func needRoot(t *testing.T) {
	t.Helper()
	if !canSwitchUsers() {
		testenv.Missing(t, "root (to run tasks as other users)", "run the tests as root")
	}
}

// ownerOfPath returns the mode and owner of a path.
func ownerOfPath(t *testing.T, path string) fileOwner {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return ownerOf(info)
}

func TestTasksRunAsTheirOwnUID(t *testing.T) {
	needRoot(t)
	p, sink, _ := startPlugin(t, t.TempDir())
	if !p.Sandboxed() {
		t.Fatal("root plugin does not sandbox")
	}
	// Both runs are alive at once: each prints who it is, then waits.
	who := &model.TaskSpec{Command: "sh", Args: []string{"-c", `echo "$(id -u) $(id -g) $(id -G) $(grep NoNewPrivs /proc/self/status | tr -d '\t')"; sleep 30`}}
	launch(t, p, hostmgr.Launch{Run: "one", Task: who})
	launch(t, p, hostmgr.Launch{Run: "two", Task: who})
	var uids []string
	for _, run := range []model.RunID{"one", "two"} {
		sink.waitState(t, run, model.TaskRunning)
		var line string
		eventually(t, string(run)+" to print", func() bool {
			data, _, _, _ := p.ReadLog(context.Background(), run, p.Host().ID, "stdout", 0, 0)
			line = strings.TrimSpace(string(data))
			return line != ""
		})
		f := strings.Fields(line)
		uid, err := strconv.ParseUint(f[0], 10, 32)
		if len(f) != 4 || err != nil || uint32(uid) < DefaultUIDs.From || uint32(uid) > DefaultUIDs.To {
			t.Fatalf("%s: %q: want a uid of %s", run, line, DefaultUIDs)
		}
		if f[1] != f[0] || f[2] != f[0] || f[3] != "NoNewPrivs:1" {
			t.Errorf("%s: %q: want gid = uid, no other groups, no_new_privs", run, line)
		}
		uids = append(uids, f[0])
		var rec launchRecord
		if ok, err := readJSON(filepath.Join(p.runsDir, string(run), launchFile), &rec); !ok || err != nil || rec.User == nil || strconv.Itoa(int(rec.User.UID)) != f[0] {
			t.Errorf("%s: launch record %+v %v: want user %s", run, rec.User, err, f[0])
		}
	}
	if uids[0] == uids[1] {
		t.Errorf("two live runs share uid %s", uids[0])
	}
}

func TestRunFilesAreEachTheirOwnersAlone(t *testing.T) {
	needRoot(t)
	p, sink, _ := startPlugin(t, t.TempDir())
	vol := filepath.Join(p.cfg.Dir, "volumes", "db-0-data")
	if err := os.MkdirAll(filepath.Join(vol, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "old", "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	launch(t, p, hostmgr.Launch{Run: "r", Gang: []hostmgr.GangMember{{Instance: 0, Host: p.Host().ID}},
		Volumes: []hostmgr.VolumeMount{{ID: "db-0-data", Volume: model.Volume{Name: "data", Path: "/data"}}},
		Task:    &model.TaskSpec{Command: "sh", Args: []string{"-c", `cat "$PELOTON_GANG_FILE" > /dev/null && echo ok > "$PELOTON_VOLUME_DATA/old/file" && echo hi && sleep 30`}}})
	sink.waitState(t, "r", model.TaskRunning)
	waitForLog(t, p, "r", "hi")
	run := filepath.Join(p.runsDir, "r")
	var rec launchRecord
	readJSON(filepath.Join(run, launchFile), &rec)
	if rec.User == nil {
		t.Fatal("no user in the launch record")
	}
	task := rec.User.UID
	want := []struct {
		path string
		mode fs.FileMode
		uid  uint32
	}{
		{p.cfg.Dir, fs.ModeDir | 0o711, 0},
		{p.runsDir, fs.ModeDir | 0o711, 0},
		{run, fs.ModeDir | 0o711, 0},
		{filepath.Join(run, launchFile), 0o600, 0},
		{filepath.Join(run, executorFile), 0o600, 0},
		{filepath.Join(run, startedFile), 0o600, 0},
		{filepath.Join(run, executorLog), 0o600, 0},
		{filepath.Join(run, stdoutFile), 0o600, 0},
		{filepath.Join(run, stderrFile), 0o600, 0},
		{filepath.Join(run, sandboxDir), fs.ModeDir | 0o700, task},
		{filepath.Join(run, sandboxDir, hostmgr.GangFileName), 0o600, task},
		{filepath.Join(p.cfg.Dir, "volumes"), fs.ModeDir | 0o711, 0},
		{vol, fs.ModeDir | 0o700, task},
		{filepath.Join(vol, "old", "file"), 0o644, task},
	}
	for _, w := range want {
		got := ownerOfPath(t, w.path)
		if got.Mode != w.mode || got.UID != w.uid {
			t.Errorf("%s: %v uid %d, want %v uid %d", w.path, got.Mode, got.UID, w.mode, w.uid)
		}
	}
	stopRun(t, p, "r")
	// Ended, the sandbox is the server's again: a later run given the
	// same uid cannot enter it.
	if got := ownerOfPath(t, filepath.Join(run, sandboxDir)); got.UID != 0 || got.Mode != fs.ModeDir|0o700 {
		t.Errorf("ended sandbox: %v uid %d, want 0700 of root", got.Mode, got.UID)
	}
	if got := ownerOfPath(t, filepath.Join(run, exitFile)); got.Mode != 0o600 {
		t.Errorf("exit record: %v", got.Mode)
	}
}

func TestTaskCannotReachTheServerOrOtherRuns(t *testing.T) {
	needRoot(t)
	p, sink, _ := startPlugin(t, t.TempDir())
	launch(t, p, hostmgr.Launch{Run: "victim", Task: &model.TaskSpec{Command: "sh", Args: []string{"-c", `echo secret > secret; echo victim-log; sleep 30`}}})
	sink.waitState(t, "victim", model.TaskRunning)
	waitForLog(t, p, "victim", "victim-log")
	var victim startedRecord
	if ok, err := readJSON(filepath.Join(p.runsDir, "victim", startedFile), &victim); !ok || err != nil {
		t.Fatalf("victim's started record: %v %v", ok, err)
	}
	// Each attempt prints READ or DENIED; the first must succeed.
	script := `try() { if sh -c "$2" >/dev/null 2>&1; then echo "READ $1"; else echo "DENIED $1"; fi; }
echo mine > mine
try own-sandbox "cat mine"
try sandbox "cat ../../victim/sandbox/secret"
try log "cat ../../victim/stdout"
try launch "cat ../../victim/launch.json"
try own-launch "cat ../launch.json"
try own-log "cat ../stdout"
try runs "ls ` + p.runsDir + `"
try environ "cat /proc/1/environ"
try signal "kill -0 ` + strconv.Itoa(victim.Child.Pid) + `"
`
	launch(t, p, hostmgr.Launch{Run: "intruder", Task: &model.TaskSpec{Command: "sh", Args: []string{"-c", script}}})
	out := stdoutOf(t, p, sink, "intruder")
	if !strings.Contains(out, "READ own-sandbox\n") {
		t.Errorf("the task could not read its own sandbox:\n%s", out)
	}
	for _, what := range []string{"sandbox", "log", "launch", "own-launch", "own-log", "runs", "environ", "signal"} {
		if !strings.Contains(out, "DENIED "+what+"\n") {
			t.Errorf("%s was not denied:\n%s", what, out)
		}
	}
}

func TestPathIsSearchedAsTheTasksUser(t *testing.T) {
	needRoot(t)
	p, sink, _ := startPlugin(t, t.TempDir())
	// A directory only root can search comes first on PATH, as /root/...
	// does on a developer's machine; the task finds the next one.
	base := reachable(t, t.TempDir())
	closed, open := filepath.Join(base, "closed"), filepath.Join(base, "open")
	for dir, mode := range map[string]fs.FileMode{closed: 0o700, open: 0o755} {
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\necho " + filepath.Base(dir) + "\n"
		if err := os.WriteFile(filepath.Join(dir, "which-one"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := closed + ":" + open + ":" + DefaultPath
	launch(t, p, hostmgr.Launch{Run: "found", Task: &model.TaskSpec{Command: "which-one", Env: map[string]string{"PATH": path}}})
	if got := stdoutOf(t, p, sink, "found"); got != "open\n" {
		t.Errorf("ran %q, want the one in %s", got, open)
	}
	launch(t, p, hostmgr.Launch{Run: "missing", Task: &model.TaskSpec{Command: "which-one", Env: map[string]string{"PATH": closed}}})
	if end := sink.waitTerminal(t, "missing"); end.Reason != model.ReasonLaunchError || !strings.Contains(end.Message, "command not found") {
		t.Errorf("only in a closed directory: %v %q", end.Reason, end.Message)
	}
	if got, err := lookPathAs("which-one", path, 0, 0); err != nil || got != filepath.Join(closed, "which-one") {
		t.Errorf("as root: %q %v, want the first", got, err)
	}
}

func TestAdoptedRunsKeepTheirUID(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	cfg := func() Config {
		return Config{Cluster: "local", Dir: reachable(t, dir), Clock: clock.Real{}, Hostname: "box", Executable: testExecutable(t),
			PollInterval: 20 * time.Millisecond, UIDs: UIDRange{From: 300000, To: 300001}}
	}
	first, firstSink, stopFirst := startPluginWith(t, cfg())
	launch(t, first, hostmgr.Launch{Run: "kept", Task: sleeper()})
	firstSink.waitState(t, "kept", model.TaskRunning)
	stopFirst()

	second, sink, _ := startPluginWith(t, cfg())
	if err := second.Reconcile(context.Background(), []hostmgr.RunRef{{Run: "kept", Host: second.Host().ID}}); err != nil {
		t.Fatal(err)
	}
	sink.waitState(t, "kept", model.TaskRunning)
	launch(t, second, hostmgr.Launch{Run: "new", Task: sleeper()})
	sink.waitState(t, "new", model.TaskRunning)
	var kept, fresh launchRecord
	readJSON(filepath.Join(second.runsDir, "kept", launchFile), &kept)
	readJSON(filepath.Join(second.runsDir, "new", launchFile), &fresh)
	if kept.User == nil || fresh.User == nil || kept.User.UID == fresh.User.UID {
		t.Errorf("kept %+v, new %+v: want the two uids of the range", kept.User, fresh.User)
	}
	launch(t, second, hostmgr.Launch{Run: "third", Task: sleeper()})
	if end := sink.waitTerminal(t, "third"); !strings.Contains(end.Message, "all 2 uids of 300000-300001 are held") {
		t.Errorf("third run: %q", end.Message)
	}
}

func TestFixedUser(t *testing.T) {
	needRoot(t)
	p, sink, _ := startPluginWith(t, Config{Cluster: "local", Dir: reachable(t, t.TempDir()), Hostname: "box", Executable: testExecutable(t), User: "65534"})
	launch(t, p, hostmgr.Launch{Run: "who", Task: &model.TaskSpec{Command: "id", Args: []string{"-u"}}})
	if got := stdoutOf(t, p, sink, "who"); got != "65534\n" {
		t.Errorf("ran as %q, want 65534", got)
	}
}

func TestWithoutSwitchingUsersTasksRunAsTheServer(t *testing.T) {
	saved := canSwitchUsers
	canSwitchUsers = func() bool { return false }
	t.Cleanup(func() { canSwitchUsers = saved })
	// Not reachable by anyone else: tasks of the server's own user need no way in.
	p, sink, _ := startPluginWith(t, Config{Cluster: "local", Dir: t.TempDir(), Hostname: "box", Executable: testExecutable(t)})
	if p.Sandboxed() {
		t.Fatal("Sandboxed without switching users")
	}
	launch(t, p, hostmgr.Launch{Run: "who", Task: &model.TaskSpec{Command: "id", Args: []string{"-u"}}})
	if got, want := stdoutOf(t, p, sink, "who"), strconv.Itoa(os.Getuid())+"\n"; got != want {
		t.Errorf("ran as %q, want %q", got, want)
	}
}

// A Dir below a directory task users cannot search (t.TempDir is 0700)
// keeps its runs in a stand-in below the system's temporary directory,
// named by Dir: tasks still reach their sandboxes, and a second plugin on
// the same Dir (a restart) finds the same place.
func TestADirTasksCannotReachHasAStandIn(t *testing.T) {
	needRoot(t)
	closed := filepath.Join(t.TempDir(), "closed", "hosts", "local")
	p, sink, _ := startPluginWith(t, Config{Cluster: "local", Dir: closed, Hostname: "box", Executable: testExecutable(t)})
	standIn := filepath.Join(os.TempDir(), "peloton-tasks", fallbackName(closed))
	t.Cleanup(func() { os.RemoveAll(standIn) })
	if p.runsDir != filepath.Join(standIn, "runs") {
		t.Fatalf("runs in %s, want them in the stand-in %s", p.runsDir, standIn)
	}
	launch(t, p, hostmgr.Launch{Run: "reach", Task: &model.TaskSpec{Command: "sh", Args: []string{"-c", "touch here && pwd"}}})
	if got, want := stdoutOf(t, p, sink, "reach"), filepath.Join(standIn, "runs", "reach", "sandbox")+"\n"; got != want {
		t.Errorf("the task ran in %q, want %q", got, want)
	}
	again, err := New(Config{Cluster: "local", Dir: closed, Hostname: "box", Executable: testExecutable(t)})
	if err != nil {
		t.Errorf("a restart on the same Dir: %v", err)
	} else if again.runsDir != p.runsDir {
		t.Errorf("a restart on the same Dir: runs in %s, want %s", again.runsDir, p.runsDir)
	}
	// A stand-in root another user made first is not used.
	if err := ownDir(filepath.Join(os.TempDir(), "peloton-tasks")); err != nil {
		t.Errorf("the stand-in root: %v", err)
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(theirs, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := ownDir(theirs); err == nil {
		t.Error("ownDir took a directory of another user")
	}
	// TraverseFrom opens the chain from the data directory down.
	data := filepath.Join(reachable(t, t.TempDir()), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Cluster: "local", Dir: filepath.Join(data, "hosts", "local"), TraverseFrom: data, Executable: testExecutable(t)}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{data, filepath.Join(data, "hosts"), filepath.Join(data, "hosts", "local", "runs")} {
		if got := ownerOfPath(t, d).Mode; got != fs.ModeDir|0o711 {
			t.Errorf("%s: %v, want traverse-only", d, got)
		}
	}
	if _, err := New(Config{Cluster: "local", Dir: data, TraverseFrom: "/elsewhere", Executable: testExecutable(t)}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("TraverseFrom not above Dir: %v", err)
	}
}

func TestReadLogOfAnUnknownRunIsNotFound(t *testing.T) {
	p, _, _ := startPlugin(t, t.TempDir())
	_, _, _, err := p.ReadLog(context.Background(), "never-ran", p.Host().ID, "stdout", 0, 0)
	if !errors.Is(err, hostmgr.ErrUnknownRun) || !errors.Is(err, ErrUnknownRun) {
		t.Errorf("err = %v, want one wrapping hostmgr.ErrUnknownRun", err)
	}
}
