package mesos

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

const (
	// tickInterval is how often held offers, waiting launches, heartbeats
	// and suppression are looked at.
	tickInterval = 100 * time.Millisecond
	// eventBatch is the most events handled between two flushes to the
	// sink.
	eventBatch = 512
	// reconcileBatch is the most tasks in one RECONCILE call.
	reconcileBatch = 1000
	// endedRetention is how long ended runs are remembered, so that one
	// Mesos reports running again is recognised and killed.
	endedRetention = 10 * time.Minute
)

// Plugin is a Mesos framework scheduler implementing hostmgr.Plugin.
type Plugin struct {
	cfg     Config
	log     *slog.Logger
	clock   clock.Clock
	running atomic.Bool
	notify  chan struct{}
	workers chan struct{} // one token per call in flight

	mu          sync.Mutex
	conn        *conn // set once SUBSCRIBED arrived
	frameworkID string
	heartbeat   time.Duration
	lastEvent   time.Time
	suppressed  bool
	lastDemand  time.Time
	lastRevive  time.Time
	lastRecon   time.Time
	lastSweep   time.Time // of ended runs
	agents      map[string]*agentState
	byHost      map[model.HostID]*agentState
	offers      map[string]*heldOffer
	runs        map[model.RunID]*runState
	// waiting are the launches not sent yet, by run: each is in the
	// waiting list of the agent given here.
	waiting map[model.RunID]*agentState
	// ready are the agents with waiting launches and held offers, in the
	// order they became so; acks are the acknowledgements to send, oldest
	// first; ackTurn says which of the two the dispatcher served last.
	ready   []*agentState
	acks    []pendingAck
	ackTurn bool
	// work wakes call workers (on mu); workGen is the generation of
	// workers that may run (one per Run).
	work    *sync.Cond
	workGen int
	kills   []killRequest
	queued  []hostmgr.TaskStatus
	changed map[*agentState]bool
	removed []model.HostID

	// partitioned: an agent failed or a run was unreachable since the
	// last scan found neither; lastUnreachableRecon: when unreachable
	// runs were last reconciled.
	partitioned          bool
	lastUnreachableRecon time.Time
	// inFlight are launches sent that Mesos has not reported on yet.
	inFlight map[model.RunID]*inFlight
}

// runState is a run this plugin launched or was asked to reconcile.
type runState struct {
	agentID string
	host    model.HostID
	res     model.Resources
	ended   bool
	endedAt time.Time
	// created are the persistent volumes its ACCEPT creates.
	created []string
	// hasHealth and hasReady: the run has a health check, a readiness
	// probe; health and ready are their latest verdicts.
	hasHealth, hasReady bool
	health, ready       model.HealthState
	killRequested       bool
	// revocable: the run is revocable work, on revocable resources.
	revocable bool
	// unreachableSince is when the run's agent was last heard to be
	// unreachable; zero while it is reachable. An unreachable run that
	// ended is one reported LOST after UnreachableWait.
	unreachableSince time.Time
}

type parkedLaunch struct {
	launch   hostmgr.Launch
	deadline time.Time
	miss     string // why it did not fit the last offers
}

type killRequest struct {
	run     model.RunID
	agentID string
	grace   time.Duration
}

// acceptCall is one ACCEPT to send: volumes to remove, volumes to
// create and tasks, carved from an agent's offers.
type acceptCall struct {
	agent              *agentState
	offerIDs           []mesoslib.OfferID
	destroy, unreserve []mesoslib.Resource
	reserve, create    []mesoslib.Resource
	tasks              []mesoslib.TaskInfo
	runs               []hostmgr.Launch
}

var (
	_ hostmgr.Plugin        = (*Plugin)(nil)
	_ hostmgr.VolumeRemover = (*Plugin)(nil)
)

// New checks cfg and returns a plugin; Run connects it.
func New(cfg Config) (*Plugin, error) {
	cfg.Masters = append([]string(nil), cfg.Masters...)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Plugin{
		cfg:     cfg,
		log:     cfg.Logger.With("cluster", cfg.Cluster),
		clock:   cfg.Clock,
		notify:  make(chan struct{}, 1),
		workers: make(chan struct{}, cfg.CallWorkers),
		waiting: map[model.RunID]*agentState{},
		agents:  map[string]*agentState{},
		byHost:  map[model.HostID]*agentState{},
		offers:  map[string]*heldOffer{},
		runs:    map[model.RunID]*runState{},
		changed: map[*agentState]bool{},
	}
	p.work = sync.NewCond(&p.mu)
	return p, nil
}

// Cluster implements hostmgr.Plugin.
func (p *Plugin) Cluster() string { return p.cfg.Cluster }

// FrameworkID returns the framework id of the current or last
// subscription, "" before the first.
func (p *Plugin) FrameworkID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frameworkID
}

// Connected reports whether the plugin holds a subscription.
func (p *Plugin) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}

// Run subscribes and re-subscribes until ctx ends, reporting hosts and
// statuses to sink. Cancelling ctx leaves the framework's tasks running:
// the master keeps them for FailoverTimeout.
func (p *Plugin) Run(ctx context.Context, sink hostmgr.Sink) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer p.running.Store(false)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go p.dispatch(ctx)
	id, err := p.loadFrameworkID(ctx, sink)
	if err != nil {
		return nil // cancelled while loading
	}
	p.mu.Lock()
	p.frameworkID = id
	p.mu.Unlock()
	delay := time.Duration(0)
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return nil
		}
		endpoint := p.cfg.Masters[attempt%len(p.cfg.Masters)]
		err := p.session(ctx, endpoint, sink)
		if ctx.Err() != nil {
			return nil
		}
		delay = backoff(delay, p.cfg.MinBackoff, p.cfg.MaxBackoff)
		if err == errSessionServed {
			delay = p.cfg.MinBackoff
		}
		p.log.Warn("mesos subscription lost; reconnecting", "master", endpoint, "err", err, "backoff", delay)
		if !p.idle(ctx, sink, delay) {
			return nil
		}
	}
}

// errSessionServed marks a session that was subscribed before it ended:
// the next attempt starts from the smallest backoff.
var errSessionServed = fmt.Errorf("mesos host manager: subscription ended")

func (p *Plugin) loadFrameworkID(ctx context.Context, sink hostmgr.Sink) (string, error) {
	delay := time.Duration(0)
	for {
		id, err := p.cfg.FrameworkIDs.LoadFrameworkID(ctx)
		if err == nil {
			return id, nil
		}
		delay = backoff(delay, p.cfg.MinBackoff, p.cfg.MaxBackoff)
		p.log.Warn("loading the framework id", "err", err)
		if !p.idle(ctx, sink, delay) {
			return "", ctx.Err()
		}
	}
}

// idle waits d while still serving launches that time out and statuses;
// false when ctx ended.
func (p *Plugin) idle(ctx context.Context, sink hostmgr.Sink, d time.Duration) bool {
	done := p.clock.After(d)
	for {
		p.flush(sink)
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return true
		case <-p.notify:
		case <-p.clock.After(tickInterval):
			p.tick(ctx)
		}
	}
}

// session subscribes through endpoint and serves the stream until it
// breaks.
func (p *Plugin) session(ctx context.Context, endpoint string, sink hostmgr.Sink) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	call := p.subscribeCall()
	p.mu.Unlock()
	c, err := p.subscribe(sctx, endpoint, call)
	if err != nil {
		return err
	}
	defer c.events.Close()
	events := make(chan *scheduler.Event, 1024)
	errc := make(chan error, 1)
	go func() {
		for {
			ev := &scheduler.Event{}
			if err := c.events.Decode(ev); err != nil {
				errc <- err
				return
			}
			select {
			case events <- ev:
			case <-sctx.Done():
				return
			}
		}
	}()
	p.mu.Lock()
	p.lastEvent = p.clock.Now()
	p.heartbeat = 0
	p.mu.Unlock()
	defer p.dropConnection()
	served := false
	for {
		p.flush(sink)
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if served {
				p.log.Info("event stream ended", "err", err)
				return errSessionServed
			}
			return err
		case ev := <-events:
			// Events already read are handled before the next flush, so
			// that statuses reach the sink in batches.
			for n := 0; ev != nil; n++ {
				if ev.GetType() == scheduler.Event_SUBSCRIBED {
					served = true
				}
				if err := p.handle(ctx, c, ev); err != nil {
					return err
				}
				ev = nil
				if n < eventBatch {
					select {
					case ev = <-events:
					default:
					}
				}
			}
		case <-p.notify:
		case <-p.clock.After(tickInterval):
			if p.heartbeatLost() {
				return ErrHeartbeatLost
			}
			p.tick(ctx)
		}
	}
}

func (p *Plugin) subscribeCall() *scheduler.Call {
	failover := p.cfg.FailoverTimeout.Seconds()
	info := &mesoslib.FrameworkInfo{
		User:            p.cfg.User,
		Name:            p.cfg.FrameworkName,
		Roles:           []string{p.cfg.Role},
		FailoverTimeout: &failover,
		Capabilities: []mesoslib.FrameworkInfo_Capability{
			{Type: mesoslib.FrameworkInfo_Capability_MULTI_ROLE},
			{Type: mesoslib.FrameworkInfo_Capability_PARTITION_AWARE},
			{Type: mesoslib.FrameworkInfo_Capability_REVOCABLE_RESOURCES},
			{Type: mesoslib.FrameworkInfo_Capability_TASK_KILLING_STATE},
		},
	}
	if !p.cfg.WithoutGPUCapability {
		info.Capabilities = append(info.Capabilities, mesoslib.FrameworkInfo_Capability{Type: mesoslib.FrameworkInfo_Capability_GPU_RESOURCES})
	}
	if p.cfg.Principal != "" {
		pr := p.cfg.Principal
		info.Principal = &pr
	}
	call := calls.Subscribe(info)
	if p.frameworkID != "" {
		id := mesoslib.FrameworkID{Value: p.frameworkID}
		info.ID = &id
		call.FrameworkID = &id
	}
	return call
}

func (p *Plugin) heartbeatLost() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.cfg.CallTimeout // until SUBSCRIBED names the interval
	if p.heartbeat > 0 {
		limit = time.Duration(p.cfg.HeartbeatMisses) * p.heartbeat
	}
	return p.clock.Now().Sub(p.lastEvent) > limit
}

// dropConnection forgets the subscription; the master rescinds the
// framework's offers when it disconnects, so held offers are dropped.
func (p *Plugin) dropConnection() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conn = nil
	for id, o := range p.offers {
		delete(o.agent.offers, id)
		delete(p.offers, id)
	}
}

// spawn runs f on a call worker, waiting for a free one.
func (p *Plugin) spawn(wg *sync.WaitGroup, f func()) {
	p.workers <- struct{}{}
	if wg != nil {
		wg.Add(1)
	}
	go func() {
		defer func() {
			<-p.workers
			if wg != nil {
				wg.Done()
			}
		}()
		f()
	}()
}

// report queues statuses for the sink and wakes Run.
func (p *Plugin) reportLocked(sts ...hostmgr.TaskStatus) {
	p.queued = append(p.queued, sts...)
	p.wake()
}

func (p *Plugin) wake() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// flush hands queued hosts and statuses to the sink.
func (p *Plugin) flush(sink hostmgr.Sink) {
	p.mu.Lock()
	var hosts []model.Host
	if len(p.changed) > 0 {
		hosts = make([]model.Host, 0, len(p.changed))
		for a := range p.changed {
			if p.agents[a.id] == a {
				a.reported = true
				hosts = append(hosts, a.hostOf(p.cfg.Cluster))
			}
		}
		p.changed = map[*agentState]bool{}
	}
	removed, sts := p.removed, p.queued
	p.removed, p.queued = nil, nil
	p.mu.Unlock()
	if len(hosts) > 0 {
		sort.Slice(hosts, func(i, j int) bool { return hosts[i].ID < hosts[j].ID })
		sink.HostsUpdated(hosts)
	}
	if len(removed) > 0 {
		sink.HostsRemoved(removed)
	}
	if len(sts) > 0 {
		sink.TaskStatuses(sts)
	}
}

func (p *Plugin) status(run model.RunID, host model.HostID, state model.TaskState, reason, msg string, at time.Time) hostmgr.TaskStatus {
	return hostmgr.TaskStatus{Run: run, Host: host, State: state, Reason: reason, Message: msg, Time: at}
}

// endRunLocked marks a run ended and frees what it held on its agent.
func (p *Plugin) endRunLocked(r *runState, now time.Time) {
	if r.ended {
		return
	}
	r.ended, r.endedAt = true, now
	if a := p.agents[r.agentID]; a != nil {
		a.hold(r, -1)
	}
}
