package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// stdoutOf waits for a run to succeed and returns its stdout.
func stdoutOf(t *testing.T, p *Plugin, sink *recordingSink, run model.RunID) string {
	t.Helper()
	if end := sink.waitTerminal(t, run); end.State != model.TaskSucceeded {
		t.Fatalf("%s ended %v: %s", run, end.State, end.Message)
	}
	data, _, _, err := p.ReadLog(context.Background(), run, p.Host().ID, "stdout", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestTaskEnvironmentIsOnlyItsOwn(t *testing.T) {
	t.Setenv("PELOTON_TEST_SERVER_ONLY", "leaked")
	p, sink, _ := startPlugin(t, t.TempDir())
	launch(t, p, hostmgr.Launch{
		Run: "env",
		Task: &model.TaskSpec{Command: "env", Env: map[string]string{
			"GREETING": "hello", "PORT_HTTP": "1", "PATH": "/bin:/usr/bin",
		}},
		Env:   map[string]string{"PELOTON_JOB_ID": "j", "PORT_HTTP": "31001"},
		Ports: []model.NamedPort{{Name: "http", Port: 31001}},
	})
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdoutOf(t, p, sink, "env")), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	sandbox := filepath.Join(p.runsDir, "env", sandboxDir)
	want := map[string]string{
		"PATH":           "/bin:/usr/bin", // the task's own PATH wins over the base
		"HOME":           sandbox,
		"PWD":            sandbox, // set by the executor, as a shell would
		"GREETING":       "hello",
		"PORT_HTTP":      "31001", // the shard's variables win over the spec's
		"PELOTON_JOB_ID": "j",
		EnvRunID:         "env",
		EnvHostID:        "local/box",
		EnvSandbox:       sandbox,
	}
	if len(got) != len(want) {
		t.Errorf("environment has %d variables, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["PELOTON_TEST_SERVER_ONLY"]; ok {
		t.Error("the task sees a variable of the server's environment")
	}
}

func TestRunEnvBase(t *testing.T) {
	l := hostmgr.Launch{Task: &model.TaskSpec{Command: "x"}}
	got := runEnv("/opt/bin", l, map[string]string{EnvSandbox: "/s"})
	want := []string{"HOME=/s", "PATH=/opt/bin", EnvSandbox + "=/s"}
	if !slices.Equal(got, want) {
		t.Errorf("runEnv = %q, want %q", got, want)
	}
}

func TestVolumeEnv(t *testing.T) {
	for name, want := range map[string]string{
		"data": "PELOTON_VOLUME_DATA", "wal-log": "PELOTON_VOLUME_WAL_LOG", "db.v2": "PELOTON_VOLUME_DB_V2", "X9": "PELOTON_VOLUME_X9",
	} {
		if got := VolumeEnv(name); got != want {
			t.Errorf("VolumeEnv(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestVolumesPersistAcrossRunsUntilRemoved(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	vols := []hostmgr.VolumeMount{{ID: "db-0-wal-log", Volume: model.Volume{Name: "wal-log", SizeMB: 10, Path: "/var/wal"}}}
	appendLine := func(run model.RunID, line string) string {
		launch(t, p, hostmgr.Launch{Run: run, Volumes: vols, Task: &model.TaskSpec{
			Command: "sh", Args: []string{"-c", `echo ` + line + ` >> "$PELOTON_VOLUME_WAL_LOG/log" && cat "$PELOTON_VOLUME_WAL_LOG/log"`},
		}})
		return stdoutOf(t, p, sink, run)
	}
	if got := appendLine("db-0-1", "one"); got != "one\n" {
		t.Errorf("first run saw %q", got)
	}
	if got := appendLine("db-0-2", "two"); got != "one\ntwo\n" {
		t.Errorf("second run saw %q, want both lines", got)
	}
	dir := filepath.Join(p.cfg.Dir, "volumes", "db-0-wal-log")
	if data, err := os.ReadFile(filepath.Join(dir, "log")); err != nil || string(data) != "one\ntwo\n" {
		t.Errorf("volume file: %q, %v", data, err)
	}

	var remover hostmgr.VolumeRemover = p
	if err := remover.RemoveVolumes(context.Background(), p.Host().ID, []string{"db-0-wal-log", "never-made"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("volume still there: %v", err)
	}
	if err := remover.RemoveVolumes(context.Background(), p.Host().ID, []string{"db-0-wal-log"}); err != nil {
		t.Errorf("removing again: %v", err)
	}
	if err := remover.RemoveVolumes(context.Background(), "local/elsewhere", []string{"x"}); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("other host: err = %v", err)
	}
	if err := remover.RemoveVolumes(context.Background(), p.Host().ID, []string{""}); err == nil {
		t.Error("empty id: no error")
	}
	// An id cannot reach outside the volumes directory.
	outside := filepath.Join(p.cfg.Dir, "keep")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := remover.RemoveVolumes(context.Background(), p.Host().ID, []string{"../keep", ".."}); err != nil {
		t.Fatal(err)
	}
	if !fileExists(outside) || !fileExists(filepath.Join(p.cfg.Dir, "runs")) {
		t.Error("RemoveVolumes deleted outside the volumes directory")
	}
}

func TestGangFile(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	gang := []hostmgr.GangMember{
		{Instance: 4, Host: "local/box", Hostname: "box", Ports: []model.NamedPort{{Name: "rpc", Port: 31004}}},
		{Instance: 5, Host: "local/other", Hostname: "other", Ports: []model.NamedPort{{Name: "rpc", Port: 31007}}},
	}
	launch(t, p, hostmgr.Launch{Run: "member", Gang: gang, Task: &model.TaskSpec{
		Command: "sh", Args: []string{"-c", `test "$PELOTON_GANG_FILE" = "$PWD/` + hostmgr.GangFileName + `" && cat "$PELOTON_GANG_FILE"`},
	}})
	out := stdoutOf(t, p, sink, "member")
	want := `[{"Instance":4,"Host":"local/box","Hostname":"box","Ports":[{"Name":"rpc","Port":31004}]},` +
		`{"Instance":5,"Host":"local/other","Hostname":"other","Ports":[{"Name":"rpc","Port":31007}]}]` + "\n"
	if out != want {
		t.Errorf("gang file\n%s\nwant\n%s", out, want)
	}
	var got []hostmgr.GangMember
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 || got[1].Ports[0].Port != 31007 {
		t.Errorf("gang file reads back as %+v, %v", got, err)
	}

	// Without a gang there is neither file nor variable.
	launch(t, p, hostmgr.Launch{Run: "alone", Task: &model.TaskSpec{
		Command: "sh", Args: []string{"-c", `test -z "${PELOTON_GANG_FILE+set}" && ! test -e ` + hostmgr.GangFileName}}})
	stdoutOf(t, p, sink, "alone")
}

func TestLaunchesThatCannotRun(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	touch := func() *model.TaskSpec { return &model.TaskSpec{Command: "touch", Args: []string{marker}} }
	image, badProbe, badEnv := touch(), touch(), touch()
	image.Container = &model.Container{Image: "nginx:1.27"}
	badProbe.HealthCheck = &model.HealthCheck{Kind: model.ProbeHTTP, Port: "web"}
	cases := map[model.RunID]struct {
		launch hostmgr.Launch
		want   string
	}{
		"image": {hostmgr.Launch{Task: image},
			`task runs in image "nginx:1.27", but host local/box runs no images: the local host manager runs commands on the host`},
		"probe": {hostmgr.Launch{Task: badProbe, Ports: []model.NamedPort{{Name: "http", Port: 31000}}},
			`health check: port "web" is neither a named port of the task nor a port number`},
		"env": {hostmgr.Launch{Task: badEnv, Env: map[string]string{"": "x"}}, `launch env name "" is not valid`},
	}
	for run, tc := range cases {
		tc.launch.Run = run
		launch(t, p, tc.launch)
	}
	for run, tc := range cases {
		end := sink.waitTerminal(t, run)
		if end.State != model.TaskFailed || end.Reason != model.ReasonLaunchError || end.Message != tc.want {
			t.Errorf("%s: ended %v/%s %q, want FAILED/%s %q", run, end.State, end.Reason, end.Message, model.ReasonLaunchError, tc.want)
		}
		if fileExists(filepath.Join(p.runsDir, string(run))) {
			t.Errorf("%s: a run directory was made", run)
		}
	}
	if fileExists(marker) {
		t.Error("a refused command ran")
	}
}

func TestHostPorts(t *testing.T) {
	dir := reachable(t, t.TempDir())
	p, err := New(Config{Cluster: "local", Dir: dir, Executable: testExecutable(t)})
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Host(); !slices.Equal(h.Ports, model.DefaultPorts) || h.RunsImages {
		t.Errorf("default: ports %v, runs images %v", h.Ports, h.RunsImages)
	}
	ranges := []model.PortRange{{From: 40000, To: 40010}, {From: 31000, To: 31999}}
	p, err = New(Config{Cluster: "local", Dir: dir, Executable: testExecutable(t), Ports: ranges})
	if err != nil {
		t.Fatal(err)
	}
	h := p.Host()
	if !slices.Equal(h.Ports, ranges) || h.PortCount() != 1011 {
		t.Errorf("configured: ports %v (%d)", h.Ports, h.PortCount())
	}
	h.Ports[0].From = 1
	if p.Host().Ports[0].From != 40000 {
		t.Error("Host() hands out its own port ranges")
	}
}

func TestCheckPortRanges(t *testing.T) {
	cases := []struct {
		ranges []model.PortRange
		want   string
	}{
		{[]model.PortRange{{From: 31000, To: 32000}}, ""},
		{[]model.PortRange{{From: 1, To: 1}, {From: 65535, To: 65535}}, ""},
		{[]model.PortRange{{From: 2, To: 3}, {From: 1, To: 1}}, ""},
		{nil, "no port range"},
		{[]model.PortRange{{From: 0, To: 10}}, "range 0-10 is outside 1-65535"},
		{[]model.PortRange{{From: 65000, To: 70000}}, "range 65000-70000 is outside 1-65535"},
		{[]model.PortRange{{From: 10, To: 9}}, "range 10-9 ends before it starts"},
		{[]model.PortRange{{From: 20, To: 30}, {From: 10, To: 20}}, "ranges 10-20 and 20-30 overlap"},
	}
	for _, tc := range cases {
		err := checkPortRanges(tc.ranges)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%v: %q, want %q", tc.ranges, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%v: no error, want %q", tc.ranges, tc.want)
		}
	}
	if _, err := New(Config{Cluster: "local", Dir: t.TempDir(), Ports: []model.PortRange{{From: 5, To: 4}}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with reversed range: %v", err)
	}
}
