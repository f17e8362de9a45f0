package testkit

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// LockCheckEnv turns on the job manager's lock check (jobmgr.LockCheckEnv).
const LockCheckEnv = "PELOTON_LOCK_CHECK"

// Stopping is how a process is stopped: Signal, then SIGKILL when it has
// not exited Within.
type Stopping struct {
	// Signal is SIGINT (Ctrl-C, the default) or SIGTERM (a service
	// manager).
	Signal syscall.Signal
	// Within defaults to 20 s.
	Within time.Duration
	// Cleanly fails the test unless the process exits with status 0
	// Within: a stop is part of what the test checks.
	Cleanly bool
}

// ServerStop is how a `peloton server` is stopped: SIGTERM, as a service
// manager does, and SIGKILL after 15 s.
var ServerStop = Stopping{Signal: syscall.SIGTERM, Within: 15 * time.Second}

// Options are a started process's name in the test's messages (default
// the command's base name), how it is stopped, and how many of its last
// lines are logged when the test failed (default 40).
type Options struct {
	Name     string
	Stop     Stopping
	LogLines int
}

// Process is a program the test started: its output so far, and whether
// it has exited. It is stopped when the test ends, and when the test
// failed the last lines of its output are logged.
type Process struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  LogBuffer
	done chan error // the exit status, put back by every reader
	stop Stopping
}

// Start starts bin with args, stopped when t ends (SIGINT, then SIGKILL
// after 20 s).
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	return StartWith(t, exec.Command(bin, args...), Options{})
}

// StartCmd is Start of a command the caller prepared (its user, its
// environment); its output goes to the Process.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	return StartWith(t, cmd, Options{})
}

// StartWith starts cmd with the options.
func StartWith(t testing.TB, cmd *exec.Cmd, o Options) *Process {
	t.Helper()
	if o.Name == "" {
		o.Name = filepath.Base(cmd.Path)
	}
	if o.Stop.Signal == 0 {
		o.Stop.Signal = syscall.SIGINT
	}
	if o.Stop.Within == 0 {
		o.Stop.Within = 20 * time.Second
	}
	if o.LogLines == 0 {
		o.LogLines = 40
	}
	// Every server a test starts runs the job manager's lock check: a
	// store call made while an engine lock is held stops the process.
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, LockCheckEnv+"=1")
	p := &Process{t: t, name: o.Name, cmd: cmd, done: make(chan error, 1), stop: o.Stop}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", o.Name, err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		p.Stop()
		// PELOTON_TEST_LOG_DIR keeps every server's whole log, failed or
		// not, for a run looked at afterwards.
		if d := os.Getenv("PELOTON_TEST_LOG_DIR"); d != "" {
			err := os.MkdirAll(d, 0o755)
			if err == nil {
				err = os.WriteFile(filepath.Join(d, fmt.Sprintf("%s-%d.log", o.Name, cmd.Process.Pid)), []byte(p.Output()), 0o644)
			}
			if err != nil {
				t.Logf("keeping %s's log: %v", o.Name, err)
			}
		}
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", o.Name, LastLines(p.Output(), o.LogLines))
		}
	})
	return p
}

// Stop stops the process as the test's end would, unless it has exited.
func (p *Process) Stop() {
	p.t.Helper()
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(p.stop.Signal)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil && p.stop.Cleanly {
			p.t.Errorf("%s did not stop cleanly on %s: %v", p.name, p.stop.Signal, err)
		}
	case <-time.After(p.stop.Within):
		p.Kill()
		if p.stop.Cleanly {
			p.t.Errorf("%s did not stop within %s of %s", p.name, p.stop.Within, p.stop.Signal)
		}
	}
}

// Kill kills the process with SIGKILL, as a crash would, and waits until
// it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

// Signal sends sig to the process (SIGSTOP and SIGCONT pause and resume
// it).
func (p *Process) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	exited, _ := p.Exit()
	return exited
}

// Exit reports whether the process has exited, and how.
func (p *Process) Exit() (exited bool, err error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Output is what the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// WaitUntil polls cond every 50 ms until it holds; the test fails when the
// process exits first or cond does not hold within d.
func (p *Process) WaitUntil(d time.Duration, what string, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if exited, err := p.Exit(); exited {
			p.t.Fatalf("%s exited before %s: %v", p.name, what, err)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s not %s after %s", p.name, what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitHealthy waits until the process answers GET url+"/healthz" with 200
// through client (nil: a client with no credentials).
func (p *Process) WaitHealthy(client *http.Client, url string, d time.Duration) {
	p.t.Helper()
	if client == nil {
		client = BareClient()
	}
	p.WaitUntil(d, "healthy", func() bool { return Healthy(client, url) })
}

// Healthy reports whether GET url+"/healthz" through client answers 200.
func Healthy(client *http.Client, url string) bool {
	resp, err := client.Get(url + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
