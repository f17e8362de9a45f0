package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Reconcile reports the state of each run: its exit when it ended, RUNNING
// (and adopted, to be polled) when its executor still runs, LOST otherwise.
// Run directories the shard does not ask about are left alone.
func (p *Plugin) Reconcile(ctx context.Context, runs []hostmgr.RunRef) error {
	for _, ref := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ref.Host != p.host.ID {
			p.report(p.status(ref.Run, model.TaskLost, model.ReasonUnknownTask,
				fmt.Sprintf("host %q is not this machine (%s)", ref.Host, p.host.ID), 0, p.clock.Now()))
			continue
		}
		p.inspect(ref.Run)
	}
	return nil
}

// inspect reports what the run directory says about a run, adopting it when
// its executor still runs and no watcher follows it yet.
func (p *Plugin) inspect(run model.RunID) {
	p.mu.Lock()
	t, tracked := p.runs[run]
	started := tracked && t.started
	p.mu.Unlock()
	if tracked {
		// A watcher reports its end; RUNNING may be repeated, it is harmless.
		if started {
			p.reportRunning(t, p.clock.Now(), false)
		}
		return
	}
	dir := filepath.Join(p.runsDir, pathElement(run))
	if _, err := os.Stat(dir); err != nil {
		p.report(p.status(run, model.TaskLost, model.ReasonUnknownTask, "no such run on this host", 0, p.clock.Now()))
		return
	}
	if st, ok := p.exitStatus(run, dir); ok {
		p.report(st)
		return
	}
	executor, startedRec, hasStarted := readExecutor(dir)
	if !isRunning(executor) {
		p.report(p.endStatus(run, dir))
		return
	}
	// The run keeps its user: no other run gets its uid while it runs.
	var launch launchRecord
	if _, err := readJSON(filepath.Join(dir, launchFile), &launch); err != nil {
		p.log.Warn("reading launch record", "run", run, "err", err)
	}
	t = &trackedRun{id: run, dir: dir, executor: executor, user: launch.User, started: hasStarted, adopted: true,
		probed: fileExists(filepath.Join(dir, probesFile)), done: make(chan struct{})}
	p.mu.Lock()
	if _, raced := p.runs[run]; raced {
		p.mu.Unlock()
		return
	}
	p.runs[run] = t
	p.users.hold(run, launch.User)
	p.mu.Unlock()
	p.log.Info("run adopted", "run", run, "executor", executor.Pid)
	if hasStarted {
		p.reportRunning(t, startedRec.Time, false)
	}
}

// readExecutor finds the executor of a run from its started record, else
// from the pid file it writes first.
func readExecutor(dir string) (processRecord, startedRecord, bool) {
	var started startedRecord
	if ok, _ := readJSON(filepath.Join(dir, startedFile), &started); ok {
		return started.Executor, started, true
	}
	var rec processRecord
	readJSON(filepath.Join(dir, executorFile), &rec)
	return rec, started, false
}

// pollAdopted checks runs adopted from an earlier instance: RUNNING once
// their command started, their exit once they ended.
func (p *Plugin) pollAdopted() {
	p.mu.Lock()
	var adopted []*trackedRun
	for _, t := range p.runs {
		if t.adopted {
			adopted = append(adopted, t)
		}
	}
	p.mu.Unlock()
	for _, t := range adopted {
		p.mu.Lock()
		started, executor := t.started, t.executor
		p.mu.Unlock()
		if !started && fileExists(filepath.Join(t.dir, startedFile)) {
			p.markStarted(t)
		}
		if fileExists(filepath.Join(t.dir, exitFile)) || !isRunning(executor) {
			p.finish(t)
		}
	}
}

// Kill asks a run's command to stop with SIGTERM (through its executor) and
// kills its process group after grace. Unknown runs are reported LOST and
// ended runs their exit again; neither is an error.
func (p *Plugin) Kill(ctx context.Context, run model.RunID, host model.HostID, grace time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if host != p.host.ID {
		p.report(p.status(run, model.TaskLost, model.ReasonUnknownTask,
			fmt.Sprintf("host %q is not this machine (%s)", host, p.host.ID), 0, p.clock.Now()))
		return nil
	}
	dir := filepath.Join(p.runsDir, pathElement(run))
	if _, err := os.Stat(dir); err != nil {
		p.report(p.status(run, model.TaskLost, model.ReasonUnknownTask, "no such run on this host", 0, p.clock.Now()))
		return nil
	}
	if st, ok := p.exitStatus(run, dir); ok {
		p.report(st)
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, killFile), nil, privateFileMode); err != nil {
		return fmt.Errorf("recording kill of %s: %w", run, err)
	}
	p.mu.Lock()
	t, tracked := p.runs[run]
	p.mu.Unlock()
	if !tracked {
		// Adopt it so its end is reported.
		p.inspect(run)
		p.mu.Lock()
		t, tracked = p.runs[run]
		p.mu.Unlock()
		if !tracked {
			return nil
		}
	}
	p.mu.Lock()
	executor := t.executor
	p.mu.Unlock()
	p.log.Info("killing run", "run", run, "grace", grace)
	if err := signalGroup(executor, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling %s: %w", run, err)
	}
	go p.escalate(t, grace)
	return nil
}

// escalate kills a run's command with SIGKILL if it did not end within
// grace: its process group once started, else the executor itself.
func (p *Plugin) escalate(t *trackedRun, grace time.Duration) {
	select {
	case <-t.done:
		return
	case <-p.clock.After(grace):
	}
	if fileExists(filepath.Join(t.dir, exitFile)) {
		return
	}
	var started startedRecord
	if ok, _ := readJSON(filepath.Join(t.dir, startedFile), &started); ok {
		signalGroup(started.Child, syscall.SIGKILL)
		return
	}
	p.mu.Lock()
	executor := t.executor
	p.mu.Unlock()
	signalGroup(executor, syscall.SIGKILL)
}
