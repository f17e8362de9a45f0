package mesostest

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/peloton-federated/peloton/shard/clock"
)

// Errors returned by the emulator's control methods.
var (
	ErrUnknownAgent   = errors.New("mesos emulator: unknown agent")
	ErrDuplicateAgent = errors.New("mesos emulator: duplicate agent")
	ErrInvalidAgent   = errors.New("mesos emulator: invalid agent")
)

// Task environment variables the emulated command executor obeys.
const (
	EnvDuration = "PELOTON_SIM_DURATION"
	EnvExitCode = "PELOTON_SIM_EXIT_CODE"
)

// Defaults of Config.
const (
	DefaultHeartbeatInterval  = 15 * time.Second
	DefaultAllocationInterval = 100 * time.Millisecond
	DefaultOfferBatch         = 1000
	DefaultTaskDuration       = time.Second
	DefaultUpdateRetry        = 10 * time.Second
	// defaultRefuse is Filters.refuse_seconds when a call sets none.
	defaultRefuse = 5 * time.Second
)

// Config configures a Master. Zero values take the defaults.
type Config struct {
	Clock              clock.Clock
	HeartbeatInterval  time.Duration
	AllocationInterval time.Duration
	// OfferBatch is the most offers in one OFFERS event.
	OfferBatch int
	// TaskDuration is how long a task runs without PELOTON_SIM_DURATION.
	TaskDuration time.Duration
	// UpdateRetry is how long an agent waits for an acknowledgement before
	// it resends a status update.
	UpdateRetry time.Duration
	// MasterID names the master in SUBSCRIBED's master_info.
	MasterID string
	// OfferTimeout is the master's --offer_timeout: offers outstanding
	// for longer are rescinded and their resources offered again. Zero,
	// as Mesos's default, never rescinds for time.
	OfferTimeout time.Duration
	// KeepTaskInfos keeps every TaskInfo the master accepted, for
	// TaskInfo, also after its task is gone.
	KeepTaskInfos bool
}

// AgentSpec describes a simulated agent.
type AgentSpec struct {
	// ID is the agent id; empty gets "<master>-S<n>".
	ID       string
	Hostname string
	CPU      float64
	MemMB    float64
	DiskMB   float64
	GPU      float64
	// RevocableCPU and RevocableMemMB are oversubscribed slack, offered to
	// frameworks with the REVOCABLE_RESOURCES capability.
	RevocableCPU   float64
	RevocableMemMB float64
	// Ports are the agent's port ranges; nil gives DefaultPorts, an empty
	// slice none.
	Ports      []mesos.Value_Range
	Attributes map[string]string
}

// Master is an emulated Mesos master.
type Master struct {
	cfg   Config
	clock clock.Clock

	mu            sync.Mutex
	redirect      string // host:port of the leader when this one is not
	silent        bool   // no events are written (a partition)
	agents        map[string]*agent
	agentOrder    []*agent
	removed       map[string]mesos.TaskState // removed agents: what their tasks became for partition-aware frameworks
	cursor        int                        // allocation round-robin start
	frameworks    map[string]*framework
	removedFw     map[string]bool
	offers        map[string]*offer
	tasks         taskHeap
	nextID        uint64
	lastHeartbts  time.Time
	lastRetryScan time.Time
	stats         Stats
	taskHealthy   map[string]bool // SetTaskHealthy
	taskReady     map[string]bool // SetTaskReady
	launched      map[string]mesos.TaskInfo
	dropped       []string // operations dropped, with why
}

// Stats counts what the master saw.
type Stats struct {
	Calls         map[string]int
	BadRequests   int
	TasksLaunched int
	TasksRunning  int
	TasksFinished int
	TasksFailed   int
	TasksKilled   int
	TasksLost     int
	OffersSent    int
	OffersDecline int
	OffersRescind int
	// Redirects and Unavailable count calls a master that does not lead
	// answered 307 and 503.
	Redirects   int
	Unavailable int
	Acks        int
	Subscribes  int
	// OperationsApplied and OperationsDropped count RESERVE, UNRESERVE,
	// CREATE and DESTROY operations.
	OperationsApplied int
	OperationsDropped int
	OperationAcks     int
	// HealthKills counts tasks killed for failing their health check.
	HealthKills int
}

type agent struct {
	spec        AgentSpec
	used        resSum // unreserved scalars held by tasks
	offered     resSum // unreserved scalars held by outstanding offers
	reserved    resSum // scalars moved into reservations
	extra       mesos.Resources
	unhealthy   bool // SetAgentHealthy(false)
	tasks       map[string]*task
	maintenance *mesos.Unavailability
	inverse     map[string]string // framework id -> inverse offer id
	// answers are the frameworks' answers to its inverse offers: framework
	// id -> ACCEPTED or DECLINED.
	answers map[string]string
	// unreachable: partitioned from the master; its tasks run on, their
	// updates wait for it to reregister.
	unreachable bool
}

type framework struct {
	id        string
	info      mesos.FrameworkInfo
	role      string
	multiRole bool
	partition bool
	revocable bool
	gpu       bool
	// killingState: the framework takes TASK_KILLING.
	killingState bool
	sub          *subscription // nil while disconnected
	failAt       time.Time     // failover deadline while disconnected
	suppress     bool
	filters      map[string]time.Time // agent id -> refused until
	// inverseFilters: agent id -> no inverse offer until (the filters of
	// ACCEPT_ and DECLINE_INVERSE_OFFERS).
	inverseFilters map[string]time.Time
	tasks          map[string]*task
	offers         map[string]*offer
}

type offer struct {
	id        string
	fw        *framework
	agent     *agent
	sum       resSum
	extra     mesos.Resources // unallocated
	resources []mesos.Resource
	sentAt    time.Time
}

// New returns a master with no agents; call Run to let time pass.
func New(cfg Config) *Master {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.AllocationInterval <= 0 {
		cfg.AllocationInterval = DefaultAllocationInterval
	}
	if cfg.OfferBatch <= 0 {
		cfg.OfferBatch = DefaultOfferBatch
	}
	if cfg.TaskDuration <= 0 {
		cfg.TaskDuration = DefaultTaskDuration
	}
	if cfg.UpdateRetry <= 0 {
		cfg.UpdateRetry = DefaultUpdateRetry
	}
	if cfg.MasterID == "" {
		cfg.MasterID = "emulated-master"
	}
	return &Master{
		cfg:         cfg,
		clock:       cfg.Clock,
		agents:      map[string]*agent{},
		removed:     map[string]mesos.TaskState{},
		frameworks:  map[string]*framework{},
		removedFw:   map[string]bool{},
		offers:      map[string]*offer{},
		stats:       Stats{Calls: map[string]int{}},
		taskHealthy: map[string]bool{},
		taskReady:   map[string]bool{},
		launched:    map[string]mesos.TaskInfo{},
	}
}

func (m *Master) newID(kind string) string {
	m.nextID++
	return m.cfg.MasterID + "-" + kind + strconv.FormatUint(m.nextID, 10)
}

// AddAgents registers agents; they are offered from the next allocation.
func (m *Master) AddAgents(specs ...AgentSpec) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range specs {
		if s.ID == "" {
			s.ID = m.newID("S")
		}
		if s.Hostname == "" {
			s.Hostname = s.ID
		}
		if s.CPU < 0 || s.MemMB < 0 || s.DiskMB < 0 || s.GPU < 0 || s.RevocableCPU < 0 || s.RevocableMemMB < 0 {
			return fmt.Errorf("%w: %s has a negative resource", ErrInvalidAgent, s.ID)
		}
		if _, gone := m.removed[s.ID]; m.agents[s.ID] != nil || gone {
			return fmt.Errorf("%w: %s", ErrDuplicateAgent, s.ID)
		}
		if s.Ports == nil {
			s.Ports = DefaultPorts
		}
		if !validRanges(s.Ports) {
			return fmt.Errorf("%w: %s has inverted or overlapping port ranges %v", ErrInvalidAgent, s.ID, s.Ports)
		}
		a := &agent{spec: s, tasks: map[string]*task{}, inverse: map[string]string{}}
		if len(s.Ports) > 0 {
			a.extra = mesos.Resources{portsResource(s.Ports)}
		}
		m.agents[s.ID] = a
		m.agentOrder = append(m.agentOrder, a)
	}
	return nil
}

// Agents returns the ids of the agents in the cluster, sorted.
func (m *Master) Agents() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.agents))
	for id := range m.agents {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// RescindOffers rescinds every outstanding offer on an agent, as Mesos
// does when an operator reserves its resources.
func (m *Master) RescindOffers(agentID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[agentID]
	if a == nil {
		return 0
	}
	return m.rescindOffersOf(a)
}

func (m *Master) rescind(o *offer) {
	m.recover(o)
	m.stats.OffersRescind++
	m.send(o.fw, &scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: o.id}}})
}

// recover returns an offer's resources to its agent.
func (m *Master) recover(o *offer) {
	delete(m.offers, o.id)
	delete(o.fw.offers, o.id)
	o.agent.offered = o.agent.offered.sub(o.sum)
	o.agent.extra.Add(o.extra...)
}

// SetRedirect makes the master a standby that answers every call with 307
// to leader (host:port); empty makes it the leader again. Subscriptions
// are closed when it steps down.
func (m *Master) SetRedirect(leader string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.redirect = leader
	if leader != "" {
		for _, fw := range m.frameworks {
			m.disconnect(fw)
		}
	}
}

// noLeader is the redirect of a master that knows no leader.
const noLeader = "-"

// SetNoLeader makes the master a standby that knows no leader, as during
// an election: every call is answered 503 Service Unavailable, and
// subscriptions are closed. SetRedirect ends it.
func (m *Master) SetNoLeader() {
	m.SetRedirect(noLeader)
}

// SetSilent stops (true) or resumes writing events, heartbeats included,
// on every subscription without closing it: a network partition as the
// scheduler sees it.
func (m *Master) SetSilent(silent bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.silent = silent
	for _, fw := range m.frameworks {
		if fw.sub != nil {
			fw.sub.wake()
		}
	}
}

// Stats returns a copy of the counters.
func (m *Master) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Calls = map[string]int{}
	for k, v := range m.stats.Calls {
		s.Calls[k] = v
	}
	return s
}

// TaskView is a task as the master knows it.
type TaskView struct {
	ID, Framework, Agent string
	State                mesos.TaskState
}

// Tasks returns the tasks the master knows (active, or terminal and not
// yet acknowledged), sorted by id.
func (m *Master) Tasks() []TaskView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TaskView
	for _, fw := range m.frameworks {
		for _, t := range fw.tasks {
			out = append(out, TaskView{ID: t.id, Framework: fw.id, Agent: t.agent.spec.ID, State: t.state})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Subscribed reports whether a framework has an open subscription.
func (m *Master) Subscribed(frameworkID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[frameworkID]
	return fw != nil && fw.sub != nil
}

// FrameworkIDs returns the ids of frameworks the master knows, sorted.
func (m *Master) FrameworkIDs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id := range m.frameworks {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// OutstandingOffers is the number of offers not yet answered.
func (m *Master) OutstandingOffers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.offers)
}

// TaskInfo returns the TaskInfo a task was launched with; only a master
// with Config.KeepTaskInfos keeps them.
func (m *Master) TaskInfo(taskID string) (mesos.TaskInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ti, ok := m.launched[taskID]
	return ti, ok
}

// TaskEnv is the environment of a task's command, by name.
func TaskEnv(ti mesos.TaskInfo) map[string]string {
	out := map[string]string{}
	for _, v := range ti.GetCommand().GetEnvironment().GetVariables() {
		out[v.Name] = v.GetValue()
	}
	return out
}

// FrameworkInfo returns the FrameworkInfo a framework last subscribed
// with.
func (m *Master) FrameworkInfo(frameworkID string) (mesos.FrameworkInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[frameworkID]
	if fw == nil {
		return mesos.FrameworkInfo{}, false
	}
	return fw.info, true
}

// DroppedOperations lists the offer operations the master dropped as
// invalid, with why, oldest first.
func (m *Master) DroppedOperations() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.dropped...)
}
