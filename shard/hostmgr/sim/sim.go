package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Batching bounds: statuses per sink call, and runs ended per pass of the
// timer loop (so Launch and Kill never wait long for the lock).
const (
	maxStatusBatch = 8192
	maxEndsPerPass = 1 << 16
)

// Plugin simulates a cluster of hosts whose runs last a declared time on an
// injected clock. It implements hostmgr.Plugin. One goroutine (Run) ends
// runs from a min-heap of deadlines, so it scales to millions of runs.
type Plugin struct {
	cluster         string
	clock           clock.Clock
	defaultDuration time.Duration
	retainFinished  int
	running         atomic.Bool
	notify          chan struct{}

	mu    sync.Mutex
	hosts map[model.HostID]*simHost
	runs  map[model.RunID]*simRun
	due   deadlines
	// probing are running runs whose probes have no verdict yet.
	probing  []*simRun
	finished []model.RunID // ended runs, oldest first, from finishedHead on
	finHead  int
	events   []event // what Run has yet to hand to the sink, in order

	lastDurationText string // parse cache: tasks of a job share their env
	lastDuration     time.Duration

	// volumes maps each persistent volume to the host it lives on.
	volumes map[string]model.HostID
}

type simHost struct {
	host  model.Host
	usage model.Resources
	// measured is set once usage was reported.
	measured bool
	runs     []*simRun // runs not yet ended; each knows its index
	// ports are the host ports held, by the run holding each.
	ports map[uint32]model.RunID
}

type simRun struct {
	id        model.RunID
	host      *simHost
	state     model.TaskState
	reason    string
	exitCode  int32
	due       int64 // when a RUNNING run ends, Unix nanoseconds
	at        int64 // when it entered its state, Unix nanoseconds
	heapIndex int
	hostIndex int
	// ports it holds on its host; health and ready what its probes say.
	ports  []uint32
	health model.HealthState
	ready  model.HealthState
	// verdict is what its probes will say once their initial delay
	// passed (at verdictDue, Unix nanoseconds); until then they say
	// UNKNOWN.
	verdict    model.HealthState
	verdictDue int64
}

// event is one sink call Run has yet to make.
type event struct {
	updated  []model.Host
	removed  []model.HostID
	statuses []hostmgr.TaskStatus
}

var _ hostmgr.Plugin = (*Plugin)(nil)

// New builds the simulated cluster cfg declares.
func New(cfg Config) (*Plugin, error) {
	if cfg.Cluster == "" {
		return nil, fmt.Errorf("%w: Cluster is required", ErrInvalidConfig)
	}
	if err := checkSpec(HostSpec{Name: cfg.Cluster}); err != nil {
		return nil, fmt.Errorf("%w: Cluster %q holds a '/'", ErrInvalidConfig, cfg.Cluster)
	}
	if cfg.DefaultDuration < 0 {
		return nil, fmt.Errorf("%w: DefaultDuration %v is negative", ErrInvalidConfig, cfg.DefaultDuration)
	}
	if cfg.RetainFinished < 0 {
		return nil, fmt.Errorf("%w: RetainFinished %d is negative", ErrInvalidConfig, cfg.RetainFinished)
	}
	if cfg.RetainFinished == 0 {
		cfg.RetainFinished = DefaultRetainFinished
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	specs, err := cfg.specs()
	if err != nil {
		return nil, err
	}
	p := &Plugin{
		cluster:         cfg.Cluster,
		clock:           cfg.Clock,
		defaultDuration: cfg.DefaultDuration,
		retainFinished:  cfg.RetainFinished,
		notify:          make(chan struct{}, 1),
		hosts:           make(map[model.HostID]*simHost, len(specs)),
		runs:            make(map[model.RunID]*simRun),
		volumes:         map[string]model.HostID{},
	}
	for _, s := range specs {
		if err := p.addHostLocked(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Cluster implements hostmgr.Plugin.
func (p *Plugin) Cluster() string { return p.cluster }

func (p *Plugin) addHostLocked(s HostSpec) error {
	if err := checkSpec(s); err != nil {
		return err
	}
	h := hostOf(p.cluster, s)
	if _, dup := p.hosts[h.ID]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicateHost, h.ID)
	}
	p.hosts[h.ID] = &simHost{host: h}
	return nil
}

// Hosts returns the cluster's hosts, ordered by id.
func (p *Plugin) Hosts() []model.Host {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hostListLocked()
}

func (p *Plugin) hostListLocked() []model.Host {
	out := make([]model.Host, 0, len(p.hosts))
	for _, h := range p.hosts {
		out = append(out, h.host)
	}
	slices.SortFunc(out, func(a, b model.Host) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// AddHost adds a host and reports it.
func (p *Plugin) AddHost(s HostSpec) error {
	p.mu.Lock()
	err := p.addHostLocked(s)
	if err == nil {
		p.events = append(p.events, event{updated: []model.Host{p.hosts[model.HostID(p.cluster+"/"+s.Name)].host}})
	}
	p.mu.Unlock()
	p.wake()
	return err
}

// RemoveHost takes a host away: it is reported removed and its runs LOST.
func (p *Plugin) RemoveHost(id model.HostID) error {
	p.mu.Lock()
	h, ok := p.hosts[id]
	if !ok {
		p.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownHost, id)
	}
	delete(p.hosts, id)
	p.events = append(p.events, event{removed: []model.HostID{id}})
	now := p.clock.Now().UnixNano()
	for _, r := range slices.Clone(h.runs) {
		p.settleLocked(r, now)
	}
	for len(h.runs) > 0 {
		p.endLocked(h.runs[len(h.runs)-1], model.TaskLost, model.ReasonHostLost, 0, now)
	}
	p.mu.Unlock()
	p.wake()
	return nil
}

// SetUsage records what a host's runs actually use (for slack and
// revocable work); Usage reads it back.
func (p *Plugin) SetUsage(id model.HostID, used model.Resources) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hosts[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownHost, id)
	}
	h.usage = used
	h.measured = true
	return nil
}

// MeasuredUsage returns a host's usage if it was ever set: the
// hostmgr.UsageReporter capability.
func (p *Plugin) MeasuredUsage(id model.HostID) (model.Resources, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hosts[id]
	if !ok || !h.measured {
		return model.Resources{}, false
	}
	return h.usage, true
}

// Usage returns the usage last set for a host.
func (p *Plugin) Usage(id model.HostID) (model.Resources, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hosts[id]
	if !ok {
		return model.Resources{}, fmt.Errorf("%w: %s", ErrUnknownHost, id)
	}
	return h.usage, nil
}

// Launch starts runs: each is RUNNING at once and ends when its duration
// passed. A run on an unknown host is LOST; one with a bad EnvDuration or
// EnvExitCode FAILED; a run launched twice is only reported again.
func (p *Plugin) Launch(ctx context.Context, runs []hostmgr.Launch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := p.clock.Now()
	p.mu.Lock()
	for _, l := range runs {
		p.launchLocked(l, now)
	}
	p.mu.Unlock()
	p.wake()
	return nil
}

func (p *Plugin) launchLocked(l hostmgr.Launch, now time.Time) {
	if r, ok := p.runs[l.Run]; ok {
		p.settleLocked(r, now.UnixNano())
		p.reportLocked(r.status())
		return
	}
	h, ok := p.hosts[l.Host]
	if !ok {
		p.reportLocked(hostmgr.TaskStatus{Run: l.Run, Host: l.Host, State: model.TaskLost, Reason: model.ReasonHostLost,
			Message: fmt.Sprintf("host %q is not in cluster %q", l.Host, p.cluster), Time: now})
		return
	}
	duration, code, err := p.behaviour(l.Task)
	if err != nil {
		p.reportLocked(hostmgr.TaskStatus{Run: l.Run, Host: l.Host, State: model.TaskFailed, Reason: model.ReasonLaunchError,
			Message: err.Error(), Time: now})
		return
	}
	r := &simRun{
		id:        l.Run,
		host:      h,
		state:     model.TaskRunning,
		exitCode:  code,
		at:        now.UnixNano(),
		due:       now.Add(duration).UnixNano(),
		hostIndex: len(h.runs),
	}
	if why := p.takeWorkloadLocked(h, r, &l); why != "" {
		p.reportLocked(hostmgr.TaskStatus{Run: l.Run, Host: l.Host, State: model.TaskFailed, Reason: model.ReasonLaunchError,
			Message: why, Time: now})
		return
	}
	h.runs = append(h.runs, r)
	p.runs[l.Run] = r
	p.due.push(r)
	p.reportLocked(r.status())
}

// behaviour reads how long a task runs and how it exits from its env.
func (p *Plugin) behaviour(task *model.TaskSpec) (time.Duration, int32, error) {
	if task == nil {
		return 0, 0, fmt.Errorf("no task spec")
	}
	duration := p.defaultDuration
	if text, ok := task.Env[EnvDuration]; ok {
		if text != p.lastDurationText || text == "" {
			d, err := time.ParseDuration(text)
			if err != nil {
				return 0, 0, fmt.Errorf("task env %s: %q is not a duration", EnvDuration, text)
			}
			if d < 0 {
				return 0, 0, fmt.Errorf("task env %s: %q is negative", EnvDuration, text)
			}
			p.lastDurationText, p.lastDuration = text, d
		}
		duration = p.lastDuration
	}
	var code int32
	if text, ok := task.Env[EnvExitCode]; ok {
		c, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("task env %s: %q is not a 32-bit integer", EnvExitCode, text)
		}
		code = int32(c)
	}
	return duration, code, nil
}

// Kill ends a running run as KILLED at once (a simulated command needs no
// grace). An ended run is reported again; an unknown one LOST.
func (p *Plugin) Kill(ctx context.Context, run model.RunID, host model.HostID, grace time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := p.clock.Now()
	p.mu.Lock()
	r, ok := p.runs[run]
	if ok {
		p.settleLocked(r, now.UnixNano())
	}
	switch {
	case !ok:
		p.reportLocked(unknownRun(run, host, now))
	case r.state == model.TaskRunning:
		p.endLocked(r, model.TaskKilled, model.ReasonKilled, 0, now.UnixNano())
	default:
		p.reportLocked(r.status())
	}
	p.mu.Unlock()
	p.wake()
	return nil
}

// Reconcile reports the state of each run the simulation knows, LOST for
// the others.
func (p *Plugin) Reconcile(ctx context.Context, runs []hostmgr.RunRef) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := p.clock.Now()
	p.mu.Lock()
	for _, ref := range runs {
		if r, ok := p.runs[ref.Run]; ok {
			p.settleLocked(r, now.UnixNano())
			p.reportLocked(r.status())
		} else {
			p.reportLocked(unknownRun(ref.Run, ref.Host, now))
		}
	}
	p.mu.Unlock()
	p.wake()
	return nil
}

func unknownRun(run model.RunID, host model.HostID, now time.Time) hostmgr.TaskStatus {
	return hostmgr.TaskStatus{Run: run, Host: host, State: model.TaskLost, Reason: model.ReasonUnknownTask,
		Message: "run unknown to the simulation", Time: now}
}

// settleLocked ends a run whose time has come but which the timer loop has
// not ended yet, so every call sees the simulation as of now.
func (p *Plugin) settleLocked(r *simRun, now int64) {
	if r.state == model.TaskRunning && r.due <= now {
		p.endNaturallyLocked(r)
	}
}

// endNaturallyLocked ends a run at its deadline with its exit code.
func (p *Plugin) endNaturallyLocked(r *simRun) {
	state, reason := model.TaskSucceeded, model.ReasonExitZero
	if r.exitCode != 0 {
		state, reason = model.TaskFailed, model.ReasonExitNonZero
	}
	p.endLocked(r, state, reason, r.exitCode, r.due)
}

// endLocked moves a running run to a terminal state and reports it.
func (p *Plugin) endLocked(r *simRun, state model.TaskState, reason string, code int32, at int64) {
	if r.heapIndex >= 0 {
		p.due.remove(r)
	}
	h := r.host
	last := h.runs[len(h.runs)-1]
	h.runs[r.hostIndex] = last
	last.hostIndex = r.hostIndex
	h.runs[len(h.runs)-1] = nil
	h.runs = h.runs[:len(h.runs)-1]
	r.hostIndex = -1
	releaseWorkloadLocked(r)
	r.state, r.reason, r.exitCode, r.at = state, reason, code, at
	p.reportLocked(r.status())
	p.rememberFinishedLocked(r.id)
}

// rememberFinishedLocked keeps the most recent ended runs and forgets the
// oldest beyond retainFinished.
func (p *Plugin) rememberFinishedLocked(id model.RunID) {
	p.finished = append(p.finished, id)
	for len(p.finished)-p.finHead > p.retainFinished {
		old := p.finished[p.finHead]
		p.finished[p.finHead] = ""
		p.finHead++
		if r, ok := p.runs[old]; ok && r.state.IsTerminal() {
			delete(p.runs, old)
		}
	}
	if p.finHead > 1024 && p.finHead*2 > len(p.finished) {
		p.finished = append(p.finished[:0:0], p.finished[p.finHead:]...)
		p.finHead = 0
	}
}

// status is how a run is reported in its current state.
func (r *simRun) status() hostmgr.TaskStatus {
	st := hostmgr.TaskStatus{Run: r.id, Host: r.host.host.ID, State: r.state, Reason: r.reason, ExitCode: r.exitCode, Time: time.Unix(0, r.at)}
	switch r.state {
	case model.TaskRunning:
		st.ExitCode = 0
		st.Health, st.Ready = r.health, r.ready
	case model.TaskSucceeded, model.TaskFailed:
		st.Message = "exit code " + strconv.Itoa(int(r.exitCode))
	case model.TaskKilled:
		st.Message = "killed"
	case model.TaskLost:
		st.Message = "host removed"
	}
	return st
}

// reportLocked queues a status, joining it to the last batch when it can.
func (p *Plugin) reportLocked(st hostmgr.TaskStatus) {
	if n := len(p.events); n > 0 && p.events[n-1].statuses != nil && len(p.events[n-1].statuses) < maxStatusBatch {
		p.events[n-1].statuses = append(p.events[n-1].statuses, st)
		return
	}
	batch := make([]hostmgr.TaskStatus, 1, 64)
	batch[0] = st
	p.events = append(p.events, event{statuses: batch})
}

// wake tells Run there is something to do.
func (p *Plugin) wake() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}
