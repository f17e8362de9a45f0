package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func TestHostDescribesThisMachine(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	sink.waitUntil(t, "host report", func([]hostmgr.TaskStatus) bool { return len(sink.hosts) > 0 })
	sink.mu.Lock()
	h := sink.hosts[0]
	sink.mu.Unlock()
	if h.ID != "local/box" || h.Cluster != "local" || h.Kind != HostKind || h.State != model.HostUp {
		t.Errorf("host = %+v", h)
	}
	if h.Capacity.MilliCPU != int64(runtime.NumCPU())*1000 || h.Capacity.MemMB <= 0 || h.Capacity.DiskMB <= 0 || h.Capacity.GPU != 0 {
		t.Errorf("capacity = %v", h.Capacity)
	}
	for k, want := range map[string]string{"hostname": "box", "os": runtime.GOOS, "arch": runtime.GOARCH} {
		if h.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, h.Labels[k], want)
		}
	}
	if p.Cluster() != "local" {
		t.Errorf("Cluster() = %q", p.Cluster())
	}
}

// A bad config is refused naming the field, the first in field order.
func TestNewRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no cluster", Config{Dir: dir}, `Cluster ""`},
		{"slash in cluster", Config{Cluster: "a/b", Dir: dir}, `Cluster "a/b"`},
		{"no dir", Config{Cluster: "local"}, "Dir is required"},
		{"negative poll", Config{Cluster: "local", Dir: dir, PollInterval: -time.Second}, "PollInterval -1s is negative"},
		{"executable a directory", Config{Cluster: "local", Dir: dir, Executable: dir, Hostname: "a/b"}, "Executable " + fmt.Sprintf("%q", dir) + " is not a file"},
		{"slash in hostname", Config{Cluster: "local", Dir: dir, Hostname: "a/b"}, `Hostname "a/b" holds a '/'`},
		{"no port range", Config{Cluster: "local", Dir: dir, Executable: exe, Hostname: "box", Ports: []model.PortRange{}}, "Ports: no port range"},
		{"overlapping ranges", Config{Cluster: "local", Dir: dir, Hostname: "box", Ports: []model.PortRange{{From: 10, To: 20}, {From: 20, To: 30}}},
			"Ports: ranges 10-20 and 20-30 overlap"},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig saying %q", c.name, err, c.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg := Config{Cluster: "local", Dir: "rel", Hostname: "box"}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if cfg.PollInterval != DefaultPollInterval || cfg.Clock == nil || cfg.Logger == nil || cfg.Executable != exe ||
		len(cfg.Ports) != len(model.DefaultPorts) || cfg.Path == "" || !filepath.IsAbs(cfg.Dir) {
		t.Errorf("defaults not filled: %+v", cfg)
	}
	t.Setenv("PATH", "")
	cfg = Config{Cluster: "local", Dir: "rel", Hostname: "box"}
	if err := cfg.check(); err != nil || cfg.Path != DefaultPath {
		t.Errorf("Path without one in the environment = %q, %v; want DefaultPath", cfg.Path, err)
	}
}

func TestRunEndings(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	cases := []struct {
		name        string
		task        *model.TaskSpec
		host        model.HostID // empty: the plugin's host
		wantState   model.TaskState
		wantReason  string
		wantCode    int32
		wantMessage string
		wantRunning bool
	}{
		{name: "true", task: &model.TaskSpec{Command: "true"},
			wantState: model.TaskSucceeded, wantReason: model.ReasonExitZero, wantMessage: "exit code 0", wantRunning: true},
		{name: "exit3", task: &model.TaskSpec{Command: "sh", Args: []string{"-c", "echo hi; exit 3"}},
			wantState: model.TaskFailed, wantReason: model.ReasonExitNonZero, wantCode: 3, wantMessage: "exit code 3", wantRunning: true},
		{name: "signal9", task: &model.TaskSpec{Command: "sh", Args: []string{"-c", "kill -9 $$"}},
			wantState: model.TaskFailed, wantReason: model.ReasonExitNonZero, wantCode: 137, wantMessage: "killed by signal 9", wantRunning: true},
		{name: "env", task: &model.TaskSpec{Command: "sh", Args: []string{"-c", `test "$GREETING" = hello && test "$PELOTON_RUN_ID" = env`}, Env: map[string]string{"GREETING": "hello"}},
			wantState: model.TaskSucceeded, wantReason: model.ReasonExitZero, wantMessage: "exit code 0", wantRunning: true},
		{name: "sandbox", task: &model.TaskSpec{Command: "sh", Args: []string{"-c", `test "$(basename "$PWD")" = sandbox`}},
			wantState: model.TaskSucceeded, wantReason: model.ReasonExitZero, wantMessage: "exit code 0", wantRunning: true},
		{name: "missing", task: &model.TaskSpec{Command: "no-such-command-anywhere"},
			wantState: model.TaskFailed, wantReason: model.ReasonLaunchError, wantCode: 127, wantMessage: `cannot start "no-such-command-anywhere": command not found`},
		{name: "nocommand", task: &model.TaskSpec{},
			wantState: model.TaskFailed, wantReason: model.ReasonLaunchError, wantMessage: "task has no command"},
		{name: "nospec", task: nil,
			wantState: model.TaskFailed, wantReason: model.ReasonLaunchError, wantMessage: "no task spec"},
		{name: "badenv", task: &model.TaskSpec{Command: "true", Env: map[string]string{"A=B": "x"}},
			wantState: model.TaskFailed, wantReason: model.ReasonLaunchError, wantMessage: `task env name "A=B" is not valid`},
		{name: "otherhost", task: &model.TaskSpec{Command: "true"}, host: "local/elsewhere",
			wantState: model.TaskLost, wantReason: model.ReasonHostLost, wantMessage: `host "local/elsewhere" is not this machine (local/box)`},
	}
	for _, tc := range cases {
		host := tc.host
		if host == "" {
			host = p.Host().ID
		}
		if err := p.Launch(context.Background(), []hostmgr.Launch{{Run: model.RunID(tc.name), Host: host, Task: tc.task}}); err != nil {
			t.Fatalf("%s: Launch: %v", tc.name, err)
		}
	}
	for _, tc := range cases {
		run := model.RunID(tc.name)
		end := sink.waitTerminal(t, run)
		if end.State != tc.wantState || end.Reason != tc.wantReason || end.ExitCode != tc.wantCode || end.Message != tc.wantMessage {
			t.Errorf("%s: ended %v/%s code %d %q, want %v/%s code %d %q", tc.name,
				end.State, end.Reason, end.ExitCode, end.Message, tc.wantState, tc.wantReason, tc.wantCode, tc.wantMessage)
		}
		var states []string
		for _, st := range sink.history(run) {
			states = append(states, st.State.String())
		}
		want := tc.wantState.String()
		if tc.wantRunning {
			want = "RUNNING " + want
		}
		if got := strings.Join(states, " "); got != want {
			t.Errorf("%s: states %q, want %q", tc.name, got, want)
		}
	}
}

func TestKillStopsRunAndIsIdempotent(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	host := p.Host().ID
	launchOne(t, p, "sleeper", &model.TaskSpec{Command: "sleep", Args: []string{"30"}})
	sink.waitState(t, "sleeper", model.TaskRunning)
	if err := p.Kill(context.Background(), "sleeper", host, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	end := sink.waitTerminal(t, "sleeper")
	if end.State != model.TaskKilled || end.Reason != model.ReasonKilled || end.Message != "killed by signal 15" {
		t.Errorf("ended %+v", end)
	}
	// Killing again, or killing what never existed, is not an error.
	if err := p.Kill(context.Background(), "sleeper", host, 0); err != nil {
		t.Errorf("second kill: %v", err)
	}
	if err := p.Kill(context.Background(), "nobody", host, 0); err != nil {
		t.Errorf("kill of unknown run: %v", err)
	}
	sink.waitUntil(t, "repeated KILLED", func(statuses []hostmgr.TaskStatus) bool {
		n := 0
		for _, st := range historyOf(statuses, "sleeper") {
			if st.State == model.TaskKilled {
				n++
			}
		}
		return n == 2
	})
	if st := sink.waitTerminal(t, "nobody"); st.State != model.TaskLost || st.Reason != model.ReasonUnknownTask {
		t.Errorf("unknown run: %+v", st)
	}
}

func TestKillEscalatesAfterGrace(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	launchOne(t, p, "stubborn", &model.TaskSpec{Command: "sh", Args: []string{"-c", `trap "" TERM; echo ready; sleep 30`}})
	sink.waitState(t, "stubborn", model.TaskRunning)
	waitForLog(t, p, "stubborn", "ready")
	if err := p.Kill(context.Background(), "stubborn", p.Host().ID, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	end := sink.waitTerminal(t, "stubborn")
	if end.State != model.TaskKilled || end.Message != "killed by signal 9" || end.ExitCode != 137 {
		t.Errorf("ended %+v", end)
	}
}

// waitForLog waits until a run's stdout holds want.
func waitForLog(t *testing.T, p *Plugin, run model.RunID, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("stdout of %s to hold %q", run, want), func() bool {
		data, _, _, err := p.ReadLog(context.Background(), run, p.Host().ID, "stdout", 0, 0)
		return err == nil && strings.Contains(string(data), want)
	})
}

func TestReadLog(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	host := p.Host().ID
	launchOne(t, p, "talker", &model.TaskSpec{Command: "sh", Args: []string{"-c", "printf hello; printf oops >&2"}})
	sink.waitTerminal(t, "talker")
	cases := []struct {
		stream        string
		offset, limit int64
		want          string
		wantNext      int64
		wantSize      int64
	}{
		{"stdout", 0, 0, "hello", 5, 5},
		{"stdout", -3, 0, "llo", 5, 5},
		{"stdout", -100, 2, "he", 2, 5},
		{"stdout", 1, 2, "el", 3, 5},
		{"stdout", 5, 0, "", 5, 5},
		{"stdout", 100, 0, "", 5, 5},
		{"stderr", 0, 0, "oops", 4, 4},
	}
	for _, tc := range cases {
		data, next, size, err := p.ReadLog(context.Background(), "talker", host, tc.stream, tc.offset, tc.limit)
		if err != nil || string(data) != tc.want || next != tc.wantNext || size != tc.wantSize {
			t.Errorf("ReadLog(%s, %d, %d) = %q, %d, %d, %v; want %q, %d, %d", tc.stream, tc.offset, tc.limit,
				data, next, size, err, tc.want, tc.wantNext, tc.wantSize)
		}
	}
	if _, _, _, err := p.ReadLog(context.Background(), "talker", host, "stdin", 0, 0); !errors.Is(err, ErrUnknownStream) || !strings.Contains(err.Error(), `"stdin"`) {
		t.Errorf("unknown stream: err = %v", err)
	}
	if _, _, _, err := p.ReadLog(context.Background(), "nobody", host, "stdout", 0, 0); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("unknown run: err = %v", err)
	}
	if _, _, _, err := p.ReadLog(context.Background(), "talker", "local/elsewhere", "stdout", 0, 0); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("unknown host: err = %v", err)
	}
	if _, _, _, err := p.ReadLog(context.Background(), "talker", host, "stdout", 0, -1); err == nil {
		t.Error("negative limit: no error")
	}
}

func TestRestartAdoptsAndReconciles(t *testing.T) {
	dir := t.TempDir()
	first, firstSink, stopFirst := startPlugin(t, dir)
	host := first.Host().ID
	launchOne(t, first, "long", &model.TaskSpec{Command: "sleep", Args: []string{"30"}})
	launchOne(t, first, "short", &model.TaskSpec{Command: "sh", Args: []string{"-c", "exit 4"}})
	launchOne(t, first, "ends-while-down", &model.TaskSpec{Command: "sleep", Args: []string{"30"}})
	firstSink.waitState(t, "long", model.TaskRunning)
	firstSink.waitState(t, "ends-while-down", model.TaskRunning)
	firstSink.waitTerminal(t, "short")
	stopFirst()

	// While no plugin runs, one command is ended from outside.
	downDir := filepath.Join(dir, "runs", "ends-while-down")
	var started startedRecord
	if ok, err := readJSON(filepath.Join(downDir, startedFile), &started); !ok || err != nil {
		t.Fatalf("started record: %v %v", ok, err)
	}
	if err := syscall.Kill(started.Child.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(downDir, exitFile))

	second, sink, _ := startPlugin(t, dir)
	refs := []hostmgr.RunRef{{Run: "long", Host: host}, {Run: "short", Host: host}, {Run: "ends-while-down", Host: host}, {Run: "never-launched", Host: host}}
	if err := second.Reconcile(context.Background(), refs); err != nil {
		t.Fatal(err)
	}
	want := map[model.RunID]struct {
		state model.TaskState
		msg   string
	}{
		"long":            {model.TaskRunning, ""},
		"short":           {model.TaskFailed, "exit code 4"},
		"ends-while-down": {model.TaskFailed, "killed by signal 15"},
		"never-launched":  {model.TaskLost, "no such run on this host"},
	}
	for run, w := range want {
		st := sink.waitState(t, run, w.state)
		if st.Message != w.msg {
			t.Errorf("%s: message %q, want %q", run, st.Message, w.msg)
		}
	}

	// The adopted run is polled: killing it through the new instance
	// reports its end.
	if err := second.Kill(context.Background(), "long", host, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if end := sink.waitTerminal(t, "long"); end.State != model.TaskKilled {
		t.Errorf("long ended %+v", end)
	}

	// A third instance learns the kill from the run directory.
	third, thirdSink, _ := startPlugin(t, dir)
	if err := third.Reconcile(context.Background(), refs[:1]); err != nil {
		t.Fatal(err)
	}
	if end := thirdSink.waitTerminal(t, "long"); end.State != model.TaskKilled || end.Message != "killed by signal 15" {
		t.Errorf("third instance: long %+v", end)
	}
}

func TestAdoptedRunEndingOnItsOwnIsReported(t *testing.T) {
	dir := t.TempDir()
	first, firstSink, stopFirst := startPlugin(t, dir)
	host := first.Host().ID
	fifo := filepath.Join(dir, "gate")
	// The task, of another uid, reads it.
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	launchOne(t, first, "gated", &model.TaskSpec{Command: "sh", Args: []string{"-c", "read line < " + fifo + "; exit 6"}})
	firstSink.waitState(t, "gated", model.TaskRunning)
	stopFirst()

	second, sink, _ := startPlugin(t, dir)
	if err := second.Reconcile(context.Background(), []hostmgr.RunRef{{Run: "gated", Host: host}}); err != nil {
		t.Fatal(err)
	}
	sink.waitState(t, "gated", model.TaskRunning)
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if end := sink.waitTerminal(t, "gated"); end.State != model.TaskFailed || end.ExitCode != 6 {
		t.Errorf("gated ended %+v", end)
	}
}

func TestRelaunchOfExistingRunDoesNotStartItAgain(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	launchOne(t, p, "once", &model.TaskSpec{Command: "sh", Args: []string{"-c", "echo ran"}})
	sink.waitTerminal(t, "once")
	launchOne(t, p, "once", &model.TaskSpec{Command: "sh", Args: []string{"-c", "echo ran"}})
	sink.waitUntil(t, "second report", func(statuses []hostmgr.TaskStatus) bool { return len(historyOf(statuses, "once")) >= 3 })
	data, _, _, err := p.ReadLog(context.Background(), "once", p.Host().ID, "stdout", 0, 0)
	if err != nil || string(data) != "ran\n" {
		t.Errorf("stdout = %q, %v; want one line", data, err)
	}
}

func TestManyConcurrentRuns(t *testing.T) {
	const n = 200
	p, sink, _ := startPlugin(t, t.TempDir())
	launches := make([]hostmgr.Launch, n)
	for i := range launches {
		launches[i] = hostmgr.Launch{Run: model.RunID(fmt.Sprintf("true-%d", i)), Host: p.Host().ID, Task: &model.TaskSpec{Command: "true"}}
	}
	if err := p.Launch(context.Background(), launches); err != nil {
		t.Fatal(err)
	}
	sink.waitUntil(t, fmt.Sprintf("%d runs to succeed", n), func(statuses []hostmgr.TaskStatus) bool {
		done := 0
		for _, st := range statuses {
			if st.State == model.TaskSucceeded {
				done++
			}
		}
		return done == n
	})
	for _, l := range launches {
		h := sink.history(l.Run)
		if len(h) != 2 || h[0].State != model.TaskRunning || h[1].State != model.TaskSucceeded {
			t.Errorf("%s: history %+v", l.Run, h)
		}
	}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	eventually(t, path+" to appear", func() bool { return fileExists(path) })
}
