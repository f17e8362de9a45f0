package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RepoPath is a path in the repository, given from its root.
func RepoPath(parts ...string) string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(self), "..", ".."}, parts...)...)
}

// OpenToTasks lets the users that local tasks run as (root's dev server
// runs each as a uid of its own) search the directories above dir, which
// t.TempDir makes 0700: a server opens the path from its data directory
// down to each sandbox, but not above it.
func OpenToTasks(t testing.TB, dir string) {
	t.Helper()
	root := filepath.Clean(os.TempDir())
	for d := filepath.Dir(filepath.Clean(dir)); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			continue
		}
		if err := os.Chmod(d, info.Mode().Perm()|0o011); err != nil {
			t.Fatal(err)
		}
	}
}

// KillUnder kills every process working in dir or below it, or naming it
// on its command line (the local host manager's executors and the tasks
// they run, which outlive the server by design), and waits up to 10 s
// for them to be gone, so that removing dir does not race with their
// last writes.
func KillUnder(t testing.TB, dir string) {
	t.Helper()
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) || dir == "/" {
		return // only a directory of the test's own, named whole
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesUnder(dir)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes under %s still running after 10 s: %v", dir, pids)
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesUnder(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		if stat, err := os.ReadFile(filepath.Join(proc, "stat")); err == nil && zombie(stat) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
		if cwd == dir || strings.HasPrefix(cwd, dir+"/") || bytes.Contains(cmdline, []byte(dir+"/")) {
			out = append(out, pid)
		}
	}
	return out
}

// zombie tells a process that ended but was not waited for: it holds no
// files, and killing it does nothing.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
