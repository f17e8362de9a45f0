package local

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestParseExecutorArgs(t *testing.T) {
	cases := []struct {
		args    string
		want    executorOptions
		wantErr string
	}{
		{args: "--dir /r -- sh -c x", want: executorOptions{dir: "/r", notifyFD: -1, command: "sh", args: []string{"-c", "x"}}},
		{args: "--dir /r --notify-fd 3 -- true", want: executorOptions{dir: "/r", notifyFD: 3, command: "true", args: []string{}}},
		{args: "--dir /r -- prog --dir other", want: executorOptions{dir: "/r", notifyFD: -1, command: "prog", args: []string{"--dir", "other"}}},
		{args: "-- true", wantErr: "--dir is required"},
		{args: "--dir /r", wantErr: "a command is required"},
		{args: "--dir /r --", wantErr: "no command after --"},
		{args: "--dir", wantErr: "--dir needs a value"},
		{args: "--dir /r --notify-fd 1 -- true", wantErr: "not a file descriptor above 2"},
		{args: "--dir /r --notify-fd x -- true", wantErr: "not a file descriptor above 2"},
		{args: "--dir /r --verbose -- true", wantErr: `unknown argument "--verbose"`},
		{args: "--dir /r --probes /r/probes.json -- true", want: executorOptions{dir: "/r", notifyFD: -1, probes: "/r/probes.json", command: "true", args: []string{}}},
		{args: "--dir /r --probes", wantErr: "--probes needs a value"},
	}
	for _, tc := range cases {
		got, err := parseExecutorArgs(strings.Fields(tc.args))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.dir != tc.want.dir || got.notifyFD != tc.want.notifyFD || got.probes != tc.want.probes || got.command != tc.want.command || !slices.Equal(got.args, tc.want.args) {
			t.Errorf("%q: got %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	if code := ExecutorMain([]string{"--bogus"}); code != 2 {
		t.Errorf("ExecutorMain with bad args = %d, want 2", code)
	}
}

func TestParseMemTotal(t *testing.T) {
	cases := []struct {
		meminfo string
		want    int64
		wantErr bool
	}{
		{"MemTotal:       16384000 kB\nMemFree: 1 kB\n", 16000, false},
		{"MemFree: 1 kB\nMemTotal: 2048 kB\n", 2, false},
		{"MemFree: 1 kB\n", 0, true},
		{"MemTotal: lots kB\n", 0, true},
		{"MemTotal: 2048 MB\n", 0, true},
	}
	for _, tc := range cases {
		got, err := parseMemTotalMB([]byte(tc.meminfo))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.meminfo, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestPathElementIsOneSafeDistinctElement(t *testing.T) {
	runs := []model.RunID{"job-0-1", "a/b", "..", ".", ".hidden", "%2E", "a b", "job-0-2"}
	seen := map[string]model.RunID{}
	for _, run := range runs {
		name := pathElement(run)
		if name == "" || strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
			t.Errorf("%q → unsafe %q", run, name)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("%q and %q both → %q", run, other, name)
		}
		seen[name] = run
	}
}

func TestLogStart(t *testing.T) {
	for _, tc := range []struct{ offset, size, want int64 }{
		{0, 10, 0}, {4, 10, 4}, {10, 10, 10}, {11, 10, 10}, {-3, 10, 7}, {-30, 10, 0}, {0, 0, 0}, {-1, 0, 0},
	} {
		if got := logStart(tc.offset, tc.size); got != tc.want {
			t.Errorf("logStart(%d, %d) = %d, want %d", tc.offset, tc.size, got, tc.want)
		}
	}
}

func TestExecutorRefusesUnreadableProbes(t *testing.T) {
	dir := t.TempDir()
	probes := filepath.Join(dir, probesFile)
	if err := os.WriteFile(probes, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	if code := ExecutorMain([]string{"--dir", dir, "--probes", probes, "--", "touch", marker}); code != 0 {
		t.Fatalf("ExecutorMain = %d, want 0 with an exit record", code)
	}
	var rec exitRecord
	if ok, err := readJSON(filepath.Join(dir, exitFile), &rec); !ok || err != nil || rec.ExitCode != 127 || !strings.HasPrefix(rec.StartError, "reading probes: ") {
		t.Errorf("exit record %+v, %v, %v", rec, ok, err)
	}
	if fileExists(marker) {
		t.Error("the command ran without its probes")
	}
}

func TestParseExecutorConfinement(t *testing.T) {
	got, err := parseExecutorArgs(strings.Fields("--dir /r --user 200001:200001 --own-uid --cgroup /cg/r -- id -u"))
	if err != nil || got.user == nil || *got.user != (runUser{UID: 200001, GID: 200001}) || !got.ownUID || got.cgroup != "/cg/r" {
		t.Errorf("got %+v %v", got, err)
	}
	for args, want := range map[string]string{
		"--dir /r --user 5 -- true":     `--user: "5" is not UID:GID`,
		"--dir /r --user a:b -- true":   `--user: "a:b" is not UID:GID`,
		"--dir /r --own-uid -- true":    "--own-uid needs --user",
		"--dir /r --cgroup":             "--cgroup needs a value",
		"--dir /r --user 1:1 --x -- id": `unknown argument "--x"`,
	} {
		if _, err := parseExecutorArgs(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", args, err, want)
		}
	}
}
