package testkit

import (
	"bytes"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

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

// Output is what the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}
