package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/model"
)

// ExecutorCommand is the first argument of the peloton binary that runs
// ExecutorMain:
//
//	peloton executor --dir <rundir> [--notify-fd N] [--probes FILE]
//	    [--user UID:GID [--own-uid]] [--cgroup DIR] -- <command> <args...>
const ExecutorCommand = "executor"

// ExecutorMain runs one task's command and records its life in a run
// directory; args are the arguments after ExecutorCommand. It is the body of
// the hidden `peloton executor` role, which the local plugin starts in its own
// session for every run so the run outlives a restart of the shard.
//
// It writes executor.pid first, starts the command in its own process group
// (working directory <rundir>/sandbox, stdout and stderr to <rundir>/stdout and
// <rundir>/stderr, the environment it was given), writes started, forwards
// SIGTERM and SIGINT to the command's process group, waits for it, kills what
// is left of that group, and atomically writes the exit record. With
// --probes it runs the health check and readiness probe that file holds
// beside the command while it runs (command probes in the sandbox with the
// executor's environment, which is the task's) and records their verdicts
// in <rundir>/health, UNKNOWN from before the command starts. With --user
// the command and its command probes run as that uid and gid, with no
// supplementary groups and no_new_privs, found on PATH as that user would;
// with --own-uid every process of that uid is killed once the command
// ended; with --cgroup they run in that cgroup, killed and removed at the
// end. The sandbox then goes back to the executor's user. A command
// that cannot start gets an exit record holding the start error. The return
// value is the executor's own exit code: 0 once an exit record is written,
// 2 for bad arguments, 1 when the run directory is unusable.
func ExecutorMain(args []string) int {
	opts, err := parseExecutorArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peloton executor: %v\n", err)
		return 2
	}
	if err := runExecutor(opts); err != nil {
		fmt.Fprintf(os.Stderr, "peloton executor: %v\n", err)
		return 1
	}
	return 0
}

type executorOptions struct {
	dir      string
	notifyFD int    // -1: none
	probes   string // probes file; "": none
	user     *runUser
	ownUID   bool
	cgroup   string // the run's cgroup; "": none
	command  string
	args     []string
}

func parseExecutorArgs(args []string) (executorOptions, error) {
	opts := executorOptions{notifyFD: -1}
	values := map[string]func(string) error{
		"--dir":    func(v string) error { opts.dir = v; return nil },
		"--probes": func(v string) error { opts.probes = v; return nil },
		"--cgroup": func(v string) error { opts.cgroup = v; return nil },
		"--notify-fd": func(v string) error {
			fd, err := strconv.Atoi(v)
			if err != nil || fd < 3 {
				return fmt.Errorf("%q is not a file descriptor above 2", v)
			}
			opts.notifyFD = fd
			return nil
		},
		"--user": func(v string) error {
			u, err := parseRunUser(v)
			opts.user = &u
			return err
		},
	}
	for len(args) > 0 {
		arg := args[0]
		args = args[1:]
		switch set, takesValue := values[arg]; {
		case arg == "--":
			if len(args) == 0 {
				return opts, errors.New("no command after --")
			}
			opts.command, opts.args = args[0], args[1:]
			args = nil
		case arg == "--own-uid":
			opts.ownUID = true
		case !takesValue:
			return opts, fmt.Errorf("unknown argument %q", arg)
		case len(args) == 0:
			return opts, fmt.Errorf("%s needs a value", arg)
		default:
			if err := set(args[0]); err != nil {
				return opts, fmt.Errorf("%s: %w", arg, err)
			}
			args = args[1:]
		}
	}
	switch {
	case opts.dir == "":
		return opts, errors.New("--dir is required")
	case opts.command == "":
		return opts, errors.New("a command is required after --")
	case opts.ownUID && opts.user == nil:
		return opts, errors.New("--own-uid needs --user")
	}
	return opts, nil
}

func runExecutor(opts executorOptions) error {
	var notify *os.File
	if opts.notifyFD >= 0 {
		// The command must not inherit the notification pipe.
		syscall.CloseOnExec(opts.notifyFD)
		notify = os.NewFile(uintptr(opts.notifyFD), "notify")
		defer notify.Close()
	}
	self := describeProcess(os.Getpid())
	if err := writeJSONAtomic(filepath.Join(opts.dir, executorFile), self); err != nil {
		return err
	}

	var probes probesRecord
	if opts.probes != "" {
		if _, err := readJSON(opts.probes, &probes); err != nil {
			return writeJSONAtomic(filepath.Join(opts.dir, exitFile), exitRecord{
				ExitCode: 127, StartError: "reading probes: " + err.Error(), Time: time.Now(),
			})
		}
	}

	// Catch termination before the command starts, so that a kill that
	// arrives early is forwarded once it runs instead of killing us.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)

	// The output files stay the executor's user's: the command writes
	// them through the descriptors it inherits, and no task reads them.
	stdout, err := os.OpenFile(filepath.Join(opts.dir, stdoutFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(filepath.Join(opts.dir, stderrFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer stderr.Close()
	sandbox := filepath.Join(opts.dir, sandboxDir)
	if err := os.MkdirAll(sandbox, 0o700); err != nil {
		return err
	}
	conf, err := newConfinement(opts)
	if err != nil {
		return writeJSONAtomic(filepath.Join(opts.dir, exitFile), exitRecord{ExitCode: 127, StartError: err.Error(), Time: time.Now()})
	}
	defer conf.end(sandbox)
	health := newHealthWriter(filepath.Join(opts.dir, healthFile), probes)

	cmd := exec.Command(opts.command, opts.args...)
	cmd.Dir = sandbox
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	conf.command(cmd, opts.command)
	if err := conf.start(cmd); err != nil {
		return writeJSONAtomic(filepath.Join(opts.dir, exitFile), exitRecord{
			ExitCode:   127,
			StartError: fmt.Sprintf("cannot start %q: %v", opts.command, startErrorText(err)),
			Time:       time.Now(),
		})
	}
	child := describeProcess(cmd.Process.Pid)
	started := startedRecord{Executor: self, Child: child, Time: time.Now()}
	if err := writeJSONAtomic(filepath.Join(opts.dir, startedFile), started); err != nil {
		fmt.Fprintf(os.Stderr, "peloton executor: %v\n", err)
	}
	if notify != nil {
		// The plugin may be gone (restarted); a failed write is harmless.
		notify.WriteString("started\n")
		notify.Close()
		notify = nil
	}

	probeCtx, stopProbes := context.WithCancel(context.Background())
	probing := health.start(probeCtx, probes, sandbox, conf)

	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-signals:
				syscall.Kill(-child.Pid, sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	stopProbes()
	probing.Wait()
	// Whatever the command left behind in its group ends with it.
	syscall.Kill(-child.Pid, syscall.SIGKILL)
	conf.end(sandbox)

	rec := exitRecord{Time: time.Now()}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			rec.Signal = int(ws.Signal())
			rec.ExitCode = 128 + rec.Signal
		} else {
			rec.ExitCode = exitErr.ExitCode()
		}
	default:
		rec.ExitCode = 1
		rec.StartError = fmt.Sprintf("waiting for %q: %v", opts.command, waitErr)
	}
	return writeJSONAtomic(filepath.Join(opts.dir, exitFile), rec)
}

// startErrorText shortens the errors exec gives for a command it cannot
// find or run.
func startErrorText(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "command not found"
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// healthWriter records the verdicts of a run's probes in its health file.
type healthWriter struct {
	path string
	mu   sync.Mutex
	rec  healthRecord
}

// newHealthWriter records UNKNOWN for each probe the run has.
func newHealthWriter(path string, probes probesRecord) *healthWriter {
	w := &healthWriter{path: path}
	if probes.Health == nil && probes.Ready == nil {
		return w
	}
	if probes.Health != nil {
		w.rec.Health = model.HealthUnknown.String()
	}
	if probes.Ready != nil {
		w.rec.Ready = model.HealthUnknown.String()
	}
	w.writeLocked()
	return w
}

// start runs the probes until ctx ends; the group's Wait returns once
// they stopped.
func (w *healthWriter) start(ctx context.Context, probes probesRecord, sandbox string, conf *confinement) *sync.WaitGroup {
	var wg sync.WaitGroup
	env := os.Environ()
	for _, p := range []struct {
		rec   *probeRecord
		ready bool
	}{{probes.Health, false}, {probes.Ready, true}} {
		if p.rec == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runProbe(ctx, clock.Real{}, p.rec, probeSite{sandbox: sandbox, env: env, conf: conf}, func(r probeResult) { w.set(p.ready, r) })
		}()
	}
	return &wg
}

// set records a probe's new verdict.
func (w *healthWriter) set(ready bool, r probeResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	what := "health check"
	if ready {
		what = "readiness probe"
		w.rec.Ready = r.state.String()
	} else {
		w.rec.Health = r.state.String()
	}
	w.rec.Changes++
	w.rec.Message = ""
	if r.message != "" {
		w.rec.Message = what + ": " + r.message
	}
	w.writeLocked()
}

func (w *healthWriter) writeLocked() {
	w.rec.Time = time.Now()
	if err := writeJSONAtomic(w.path, w.rec); err != nil {
		fmt.Fprintf(os.Stderr, "peloton executor: recording health: %v\n", err)
	}
}
