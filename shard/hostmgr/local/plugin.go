package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Errors returned by the local plugin.
var (
	ErrInvalidConfig  = errors.New("local host manager: invalid config")
	ErrAlreadyRunning = errors.New("local host manager: already running")
	ErrUnknownRun     = fmt.Errorf("local host manager: %w", hostmgr.ErrUnknownRun)
	ErrUnknownHost    = errors.New("local host manager: unknown host")
	ErrUnknownStream  = errors.New("local host manager: unknown log stream")
	errNoMemTotal     = errors.New("no MemTotal line")
)

// DefaultPollInterval is how often runs adopted after a restart are checked.
const DefaultPollInterval = time.Second

// Config configures a local plugin.
type Config struct {
	// Cluster names the plugin's cluster; the host is "<Cluster>/<hostname>".
	Cluster string
	// Dir is the plugin's work directory (under the shard's data dir); runs
	// live in Dir/runs/<run id>/.
	Dir string
	// Clock times kill grace periods and the polling of adopted runs.
	Clock clock.Clock
	// Logger receives state transitions; nil discards them.
	Logger *slog.Logger
	// Executable is the peloton binary, started as
	// `<Executable> executor --dir <rundir> -- <command> <args...>`;
	// empty means os.Executable().
	Executable string
	// Hostname overrides os.Hostname().
	Hostname string
	// PollInterval is how often adopted runs are checked and how often the
	// health verdicts of running ones are read; 0 means DefaultPollInterval.
	PollInterval time.Duration
	// Ports are the host ports the shard may give tasks; nil means
	// model.DefaultPorts.
	Ports []model.PortRange
	// Path is the PATH tasks get unless their spec sets one; empty means
	// the server's own PATH, or DefaultPath without one.
	Path string
	// User is who tasks run as when this process can switch users (root,
	// or CAP_SETUID and the other capabilities of switchCaps): empty gives
	// every run its own uid from UIDs; a user name or number runs every
	// task as that user, so tasks can reach each other's files. Without
	// the capabilities tasks run as this process's user.
	User string
	// UIDs is the range runs get their uid from; zero means DefaultUIDs.
	UIDs UIDRange
	// TraverseFrom is a directory holding Dir (the server's data
	// directory): from it down to each run's directory every directory is
	// made traverse-only (0711), so that tasks can reach their sandboxes
	// and nothing more. Empty means Dir.
	TraverseFrom string
}

// Plugin runs tasks as processes on this machine, one executor process per
// run, and implements hostmgr.Plugin and hostmgr.LogReader.
type Plugin struct {
	cfg     Config
	host    model.Host
	runsDir string
	log     *slog.Logger
	clock   clock.Clock
	running atomic.Bool
	notify  chan struct{}
	cgroups *cgroups // nil: task resources are not enforced

	mu     sync.Mutex
	users  *users                      // guarded by mu
	runs   map[model.RunID]*trackedRun // runs not yet ended that this instance watches
	queued []hostmgr.TaskStatus        // statuses not yet handed to the sink
}

// trackedRun is a run this plugin instance watches until it ends: either
// one it started (and waits on) or one adopted from an earlier instance
// (and polls).
type trackedRun struct {
	id       model.RunID
	dir      string
	executor processRecord
	user     *runUser // who its command runs as; nil: the server's user
	started  bool
	adopted  bool
	probed   bool // the executor probes it: read its health file
	// health and ready are the verdicts last reported.
	health, ready model.HealthState
	done          chan struct{} // closed once the run ended
}

var (
	_ hostmgr.Plugin        = (*Plugin)(nil)
	_ hostmgr.LogReader     = (*Plugin)(nil)
	_ hostmgr.VolumeRemover = (*Plugin)(nil)
)

// New checks cfg, creates the work directory and measures this machine.
func New(cfg Config) (*Plugin, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	dir := cfg.Dir
	users, workDir, runsDir, err := newIsolation(cfg)
	if err != nil {
		return nil, err
	}
	if workDir != dir {
		cfg.Logger.Warn("runs and volumes live in a stand-in directory: task users cannot reach the data directory (make every directory above it searchable, chmod o+x, to keep them there)",
			"dir", dir, "runs", workDir)
		cfg.Dir = workDir
	}
	host, err := describeHost(cfg.Cluster, cfg.Hostname, cfg.Dir)
	if err != nil {
		return nil, err
	}
	host.Ports = cfg.Ports
	p := &Plugin{
		cfg:     cfg,
		host:    host,
		runsDir: runsDir,
		log:     cfg.Logger.With("cluster", cfg.Cluster, "host", host.ID),
		clock:   cfg.Clock,
		notify:  make(chan struct{}, 1),
		users:   users,
		runs:    make(map[model.RunID]*trackedRun),
	}
	p.setUpIsolation()
	return p, nil
}

// check checks the config and fills in the defaults of what it leaves
// out; Dir becomes absolute.
func (cfg *Config) check() error {
	if cfg.Cluster == "" || strings.Contains(cfg.Cluster, "/") {
		return fmt.Errorf("%w: Cluster %q must be non-empty and hold no '/'", ErrInvalidConfig, cfg.Cluster)
	}
	if cfg.Dir == "" {
		return fmt.Errorf("%w: Dir is required", ErrInvalidConfig)
	}
	if cfg.PollInterval < 0 {
		return fmt.Errorf("%w: PollInterval %v is negative", ErrInvalidConfig, cfg.PollInterval)
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.checkMachine(); err != nil {
		return err
	}
	if cfg.Ports == nil {
		cfg.Ports = model.DefaultPorts
	}
	if err := checkPortRanges(cfg.Ports); err != nil {
		return fmt.Errorf("%w: Ports: %v", ErrInvalidConfig, err)
	}
	cfg.Ports = slices.Clone(cfg.Ports)
	cfg.Path = cmp.Or(cfg.Path, os.Getenv("PATH"), DefaultPath)
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return fmt.Errorf("%w: Dir: %v", ErrInvalidConfig, err)
	}
	cfg.Dir = dir
	return nil
}

// checkMachine defaults the executable to this process's own and the
// hostname to this machine's, and checks that the executable is a file
// and that the hostname can be part of a host id.
func (cfg *Config) checkMachine() error {
	if err := defaultFrom(&cfg.Executable, "Executable", os.Executable); err != nil {
		return err
	}
	if info, err := os.Stat(cfg.Executable); err != nil || info.IsDir() {
		return fmt.Errorf("%w: Executable %q is not a file", ErrInvalidConfig, cfg.Executable)
	}
	if err := defaultFrom(&cfg.Hostname, "Hostname", os.Hostname); err != nil {
		return err
	}
	if strings.Contains(cfg.Hostname, "/") {
		return fmt.Errorf("%w: Hostname %q holds a '/'", ErrInvalidConfig, cfg.Hostname)
	}
	return nil
}

// defaultFrom sets an empty field, named name, to what get says.
func defaultFrom(field *string, name string, get func() (string, error)) error {
	if *field != "" {
		return nil
	}
	v, err := get()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidConfig, name, err)
	}
	*field = v
	return nil
}

// Cluster implements hostmgr.Plugin.
func (p *Plugin) Cluster() string { return p.cfg.Cluster }

// Host returns the one host this plugin offers.
func (p *Plugin) Host() model.Host {
	h := p.host
	h.Labels = maps.Clone(p.host.Labels)
	h.Ports = slices.Clone(p.host.Ports)
	return h
}

// Run reports the host, then statuses until ctx ends. Cancelling ctx leaves
// running tasks alone: a later instance adopts them through Reconcile.
func (p *Plugin) Run(ctx context.Context, sink hostmgr.Sink) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer p.running.Store(false)
	sink.HostsUpdated([]model.Host{p.Host()})
	poll := p.clock.After(p.cfg.PollInterval)
	for {
		p.flush(sink)
		select {
		case <-ctx.Done():
			return nil
		case <-p.notify:
		case <-poll:
			p.pollAdopted()
			p.pollHealth()
			poll = p.clock.After(p.cfg.PollInterval)
		}
	}
}

// Launch starts an executor for each run. Runs that cannot start are
// reported FAILED (or LOST when addressed to another host); a run whose
// directory already exists is not started again but reconciled.
func (p *Plugin) Launch(ctx context.Context, runs []hostmgr.Launch) error {
	for _, l := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.launchOne(l)
	}
	return nil
}

func (p *Plugin) launchOne(l hostmgr.Launch) {
	now := p.clock.Now()
	if l.Host != p.host.ID {
		p.report(p.status(l.Run, model.TaskLost, model.ReasonHostLost,
			fmt.Sprintf("host %q is not this machine (%s)", l.Host, p.host.ID), 0, now))
		return
	}
	probes, msg := p.checkLaunch(l)
	if msg != "" {
		p.report(p.status(l.Run, model.TaskFailed, model.ReasonLaunchError, msg, 0, now))
		return
	}
	p.mu.Lock()
	_, tracked := p.runs[l.Run]
	p.mu.Unlock()
	if tracked {
		return
	}
	dir := filepath.Join(p.runsDir, pathElement(l.Run))
	if err := makeRunDir(dir); err != nil {
		if errors.Is(err, fs.ErrExist) {
			p.inspect(l.Run)
			return
		}
		p.report(p.status(l.Run, model.TaskFailed, model.ReasonLaunchError, "creating run directory: "+err.Error(), 0, now))
		return
	}
	p.mu.Lock()
	user, err := p.users.acquire(l.Run)
	p.mu.Unlock()
	if err != nil {
		p.failLaunch(l.Run, dir, nil, err.Error())
		return
	}
	rec := launchRecord{Run: l.Run, Host: l.Host, Command: l.Task.Command, Args: l.Task.Args, Labels: l.Labels, StartTime: now, User: user}
	if err := writeJSONAtomic(filepath.Join(dir, launchFile), rec); err != nil {
		p.failLaunch(l.Run, dir, user, "recording launch: "+err.Error())
		return
	}
	env, err := p.prepareSandbox(l, dir, probes, user)
	if err != nil {
		p.failLaunch(l.Run, dir, user, err.Error())
		return
	}
	if err := p.startExecutor(l, dir, env, probes != nil, user); err != nil {
		p.failLaunch(l.Run, dir, user, "starting executor: "+err.Error())
	}
}

// checkLaunch returns the probes of a launch, or why it cannot be launched.
func (p *Plugin) checkLaunch(l hostmgr.Launch) (*probesRecord, string) {
	t := l.Task
	switch {
	case t == nil:
		return nil, "no task spec"
	case t.Container != nil:
		return nil, fmt.Sprintf("task runs in image %q, but host %s runs no images: the local host manager runs commands on the host", t.Container.Image, p.host.ID)
	case t.Command == "":
		return nil, "task has no command"
	}
	if msg := checkEnvNames("task env", t.Env); msg != "" {
		return nil, msg
	}
	if msg := checkEnvNames("launch env", l.Env); msg != "" {
		return nil, msg
	}
	health, err := newProbeRecord("health check", t.HealthCheck, l.Ports)
	if err != nil {
		return nil, err.Error()
	}
	ready, err := newProbeRecord("readiness probe", t.Readiness, l.Ports)
	if err != nil {
		return nil, err.Error()
	}
	if health == nil && ready == nil {
		return nil, ""
	}
	return &probesRecord{Health: health, Ready: ready}, ""
}

// prepareSandbox creates the run's sandbox (0700, the run's user's),
// volumes, gang file and probes file and returns the run's environment.
func (p *Plugin) prepareSandbox(l hostmgr.Launch, dir string, probes *probesRecord, user *runUser) ([]string, error) {
	sandbox := filepath.Join(dir, sandboxDir)
	if err := os.Mkdir(sandbox, 0o700); err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	if err := chownTo(sandbox, user); err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	own := map[string]string{EnvRunID: string(l.Run), EnvHostID: string(l.Host), EnvSandbox: sandbox}
	if err := p.prepareVolumes(l.Volumes, own, user); err != nil {
		return nil, err
	}
	if l.Gang != nil {
		path, err := writeGangFile(sandbox, l.Gang, user)
		if err != nil {
			return nil, err
		}
		own[hostmgr.EnvGangFile] = path
	}
	if probes != nil {
		if err := writeJSONAtomic(filepath.Join(dir, probesFile), probes); err != nil {
			return nil, fmt.Errorf("recording probes: %w", err)
		}
	}
	return runEnv(p.cfg.Path, l, own), nil
}

// failLaunch records and reports a run that never started.
func (p *Plugin) failLaunch(run model.RunID, dir string, user *runUser, msg string) {
	p.mu.Lock()
	p.users.release(run, user)
	p.mu.Unlock()
	if err := p.cgroups.remove(run); err != nil {
		p.log.Warn("run's cgroup", "run", run, "err", err)
	}
	rec := exitRecord{ExitCode: 127, StartError: msg, Time: p.clock.Now()}
	if err := writeJSONAtomic(filepath.Join(dir, exitFile), rec); err != nil {
		p.log.Warn("recording failed launch", "run", run, "err", err)
	}
	p.report(p.status(run, model.TaskFailed, model.ReasonLaunchError, msg, int32(rec.ExitCode), rec.Time))
}

func (p *Plugin) startExecutor(l hostmgr.Launch, dir string, env []string, probed bool, user *runUser) error {
	args, err := p.executorArgs(l, dir, probed, user)
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(dir, executorLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	notifyR, notifyW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(p.cfg.Executable, args...)
	// The executor gets the task's environment and no more; the command
	// and its command probes inherit it.
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.ExtraFiles = []*os.File{notifyW}
	// Its own session: the executor outlives this process and no terminal
	// signal reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	notifyW.Close()
	if err != nil {
		notifyR.Close()
		return err
	}
	t := &trackedRun{id: l.Run, dir: dir, executor: processRecord{Pid: cmd.Process.Pid}, user: user, probed: probed, done: make(chan struct{})}
	p.mu.Lock()
	p.runs[l.Run] = t
	p.mu.Unlock()
	p.log.Info("run launched", "run", l.Run, "executor", cmd.Process.Pid)
	go p.watch(t, cmd, notifyR)
	return nil
}

// watch follows a run this instance started: the notification pipe says
// when the command runs, the executor's exit when it ended.
func (p *Plugin) watch(t *trackedRun, cmd *exec.Cmd, notify *os.File) {
	msg, _ := io.ReadAll(notify)
	notify.Close()
	if strings.HasPrefix(string(msg), "started") {
		p.markStarted(t)
	}
	cmd.Wait()
	p.finish(t)
}

// markStarted reports RUNNING once per run.
func (p *Plugin) markStarted(t *trackedRun) {
	var rec startedRecord
	ok, err := readJSON(filepath.Join(t.dir, startedFile), &rec)
	if err != nil || !ok {
		rec.Time = p.clock.Now()
	}
	p.mu.Lock()
	first := !t.started
	t.started = true
	if ok && rec.Executor.Pid == t.executor.Pid {
		t.executor = rec.Executor
	}
	p.mu.Unlock()
	if first {
		p.reportRunning(t, rec.Time, false)
	}
}

// finish reports how a run ended once its executor is gone and stops
// tracking it.
func (p *Plugin) finish(t *trackedRun) {
	p.mu.Lock()
	if p.runs[t.id] != t {
		p.mu.Unlock()
		return
	}
	delete(p.runs, t.id)
	p.users.release(t.id, t.user)
	p.mu.Unlock()
	if err := p.cgroups.remove(t.id); err != nil {
		p.log.Warn("run's cgroup", "run", t.id, "err", err)
	}
	st := p.endStatus(t.id, t.dir)
	close(t.done)
	p.log.Info("run ended", "run", t.id, "state", st.State, "message", st.Message)
	p.report(st)
}

// endStatus is the terminal status of a run whose executor is gone.
func (p *Plugin) endStatus(run model.RunID, dir string) hostmgr.TaskStatus {
	if st, ok := p.exitStatus(run, dir); ok {
		return st
	}
	if fileExists(filepath.Join(dir, killFile)) {
		return p.status(run, model.TaskKilled, model.ReasonKilled, "killed before the command started", 0, p.clock.Now())
	}
	// The executor died without its command's end: make sure the command
	// does not run on unwatched while the shard starts another run.
	var started startedRecord
	if ok, _ := readJSON(filepath.Join(dir, startedFile), &started); ok {
		signalGroup(started.Child, syscall.SIGKILL)
	}
	msg := "executor ended without recording an exit status"
	if tail := fileTail(filepath.Join(dir, executorLog), 512); tail != "" {
		msg += ": " + tail
	}
	return p.status(run, model.TaskLost, model.ReasonUnknownTask, msg, 0, p.clock.Now())
}

// exitStatus reads the exit record of a run; ok is false without one.
func (p *Plugin) exitStatus(run model.RunID, dir string) (hostmgr.TaskStatus, bool) {
	var rec exitRecord
	ok, err := readJSON(filepath.Join(dir, exitFile), &rec)
	if err != nil {
		p.log.Warn("reading exit record", "run", run, "err", err)
	}
	if !ok {
		return hostmgr.TaskStatus{}, false
	}
	code := int32(rec.ExitCode)
	switch {
	case rec.StartError != "":
		return p.status(run, model.TaskFailed, model.ReasonLaunchError, rec.message(), code, rec.Time), true
	case fileExists(filepath.Join(dir, killFile)):
		return p.status(run, model.TaskKilled, model.ReasonKilled, rec.message(), code, rec.Time), true
	case rec.ExitCode == 0 && rec.Signal == 0:
		return p.status(run, model.TaskSucceeded, model.ReasonExitZero, rec.message(), 0, rec.Time), true
	default:
		return p.status(run, model.TaskFailed, model.ReasonExitNonZero, rec.message(), code, rec.Time), true
	}
}

func (p *Plugin) status(run model.RunID, state model.TaskState, reason, msg string, code int32, at time.Time) hostmgr.TaskStatus {
	return hostmgr.TaskStatus{Run: run, Host: p.host.ID, State: state, Reason: reason, Message: msg, ExitCode: code, Time: at}
}

// report queues statuses for the sink and wakes Run.
func (p *Plugin) report(statuses ...hostmgr.TaskStatus) {
	p.mu.Lock()
	p.queued = append(p.queued, statuses...)
	p.mu.Unlock()
	p.wake()
}

// wake tells Run that statuses are queued.
func (p *Plugin) wake() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// flush hands the queued statuses to the sink in one batch.
func (p *Plugin) flush(sink hostmgr.Sink) {
	p.mu.Lock()
	batch := p.queued
	p.queued = nil
	p.mu.Unlock()
	if len(batch) > 0 {
		sink.TaskStatuses(batch)
	}
}
