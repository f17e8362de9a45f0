package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// LockCheckEnv turns on the job manager's lock check (jobmgr.LockCheckEnv).
const LockCheckEnv = "PELOTON_LOCK_CHECK"

// Process is a server the test started: its output so far, and whether
// it has exited.
type Process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

// Start starts bin with args, stopped when t ends (SIGINT, then SIGKILL
// after 20 s); when t failed, the last lines of its output are logged.
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	return StartCmd(t, exec.Command(bin, args...))
}

// StartCmd is Start of a command the caller prepared (its user, its
// environment); its output goes to the Process.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	bin := cmd.Path
	// Every server a test starts runs the job manager's lock check: a
	// store call made while an engine lock is held stops the process.
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, LockCheckEnv+"=1")
	p := &Process{cmd: cmd, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", bin, LastLines(p.Output(), 40))
		}
	})
	return p
}

func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Kill kills the process with SIGKILL and waits until it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err // for the test's cleanup, which waits too
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// Output is what the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
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
