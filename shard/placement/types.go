package placement

import (
	"errors"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// Sentinel errors of the package.
var (
	// ErrInvalidHost reports a host the index cannot hold (empty or
	// duplicate ID, negative or NaN free resources).
	ErrInvalidHost = errors.New("placement: invalid host")
	// ErrUnknownHost reports a host ID the index does not hold.
	ErrUnknownHost = errors.New("placement: unknown host")
)

// Host is one host as placement sees it: what is free on it now, its labels
// and whether it takes new work.
type Host struct {
	ID      model.HostID
	Cluster string
	Free    model.Resources
	Labels  map[string]string
	// Ports is how many host ports are free. Placement counts ports; the
	// host manager picks the port numbers when it launches.
	Ports int
	// Schedulable is false for hosts that are draining, down or otherwise
	// closed to new work.
	Schedulable bool
	// HostPool is the host pool the host is in; tasks that name host pools
	// go only to hosts of those.
	HostPool string
	// GPUHost marks a host whose GPUs are kept for GPU tasks. A host with
	// free GPUs is a GPU host even when this is false.
	GPUHost bool
	// Instances counts tasks already on the host per spread group (a job ID,
	// or Task.SpreadGroup), for the task-to-task limits. Only groups whose
	// tasks carry a limit need to appear.
	Instances map[string]int
}

// Strategy is how a task's host is chosen among the feasible ones.
type Strategy uint8

const (
	// StrategyDefault uses Options.Strategy.
	StrategyDefault Strategy = iota
	// StrategyPack fills hosts before touching fresh ones: the first fitting
	// host in the index order, which puts the tightest hosts first.
	StrategyPack
	// StrategySpread puts consecutive instances on different hosts, rotating
	// from a seeded start.
	StrategySpread
)

var strategyNames = [...]string{"default", "pack", "spread"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return "unknown"
}

// ParseStrategy is the inverse of String.
func ParseStrategy(s string) (Strategy, bool) {
	for i, n := range strategyNames {
		if n == s {
			return Strategy(i), true
		}
	}
	return 0, false
}

// StrategyFor is the strategy a job type places with unless the job says
// otherwise: batch packs, long-running work spreads.
func StrategyFor(t model.JobType) Strategy {
	if t == model.JobBatch {
		return StrategyPack
	}
	return StrategySpread
}

// SpreadLimit allows at most Max instances of a spread group per value of
// the host label Key (for example at most 2 per "zone"). Hosts without the
// label count together under the empty value.
type SpreadLimit struct {
	Key string
	Max int
}

// Task is one admitted task waiting for a host.
type Task struct {
	// Ref is the caller's opaque handle, echoed in the result.
	Ref       int
	Job       model.JobID
	Resources model.Resources
	// Constraints must all match the host's labels (AND).
	Constraints []model.Constraint
	// HostPools are the host pools the task may be placed in (those its
	// resource pool names); empty means any.
	HostPools []string
	// Ports is how many host ports the task needs.
	Ports int
	// Gang is zero for a task on its own; tasks sharing a nonzero Gang are
	// placed all-or-nothing.
	Gang int
	// SpreadGroup names the set of tasks the limits count; empty means Job.
	SpreadGroup string
	// MaxPerHost allows at most this many instances of the spread group per
	// host; zero means no limit.
	MaxPerHost int
	// Spread limits instances of the spread group per host label value.
	Spread   []SpreadLimit
	Strategy Strategy
	// Clusters, when set, are the only clusters the task may go to;
	// AvoidClusters are clusters it must not go to.
	Clusters      []string
	AvoidClusters []string
}

// countGroup is the name the task's limits count instances under.
func (t *Task) countGroup() string {
	if t.SpreadGroup != "" {
		return t.SpreadGroup
	}
	return string(t.Job)
}

// hasLimits reports whether instances of the task must be counted.
func (t *Task) hasLimits() bool { return t.MaxPerHost > 0 || len(t.Spread) > 0 }

// Options tune one placement pass.
type Options struct {
	// Seed makes the pass reproducible: the same index, tasks and seed give
	// the same assignments.
	Seed uint64
	// Strategy applies to tasks whose Strategy is StrategyDefault; zero
	// means StrategyPack.
	Strategy Strategy
}

// Assignment puts the task with Ref on Host.
type Assignment struct {
	Ref  int
	Host model.HostID
}

// Unplaced is a task no host was found for, and why.
type Unplaced struct {
	Ref    int
	Reason Explanation
}

// Result is the outcome of a placement pass.
type Result struct {
	Assignments []Assignment
	Unplaced    []Unplaced
}

// Code classifies an explanation, after the typed status of the Kubernetes
// scheduler framework: a task that does not fit is told apart from a task
// that is broken.
type Code uint8

const (
	// Unschedulable: no host fits the task now.
	Unschedulable Code = iota + 1
	// GangIncomplete: the task could fit, but other members of its gang
	// could not, so none of them holds anything.
	GangIncomplete
	// Conflict: a commit found the chosen host changed since the pass read
	// it; the task should be placed again.
	Conflict
	// InvalidTask: the task cannot be placed as given (Detail names the field).
	InvalidTask
)

var codeNames = [...]string{"", "unschedulable", "gang incomplete", "conflict", "invalid task"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "unknown"
}

// Reasons a host is filtered out, one per filter of the chain. Constraint
// filters use the failing constraint's own text ("zone==a"); the limits say
// which limit was reached ("max 1 per host", "max 2 per zone").
const (
	ReasonUnschedulable = "host unschedulable"
	// ReasonNotInHostPools is followed by the task's host pools:
	// "not in host pools [batch shared]".
	ReasonNotInHostPools   = "not in host pools"
	ReasonInsufficientCPU  = "insufficient cpu"
	ReasonInsufficientMem  = "insufficient mem"
	ReasonInsufficientDisk = "insufficient disk"
	ReasonInsufficientGPU  = "insufficient gpu"
	ReasonInsufficientPort = "insufficient ports"
	// ReasonAvoidedCluster and ReasonOtherCluster are followed by the
	// clusters in brackets: "in avoided clusters [dc1]", "not in
	// clusters [k8s-east]".
	ReasonAvoidedCluster = "in avoided clusters"
	ReasonOtherCluster   = "not in clusters"
)

// FilterCount is how many hosts one filter rejected.
type FilterCount struct {
	Reason string
	Hosts  int
}

// Explanation says why a task was not placed, Nomad style: how many hosts
// were looked at, how many would take the task, and how many each filter
// rejected (each host counted once, by the first filter that rejected it).
type Explanation struct {
	Code     Code
	Hosts    int
	Feasible int
	Filtered []FilterCount
	// Detail adds what the counts cannot say: the gang that failed, the
	// invalid field, the conflicting host.
	Detail string
}

// String renders the explanation for `peloton task get`:
// "0/50000 hosts: 31200 insufficient cpu, 18800 zone==a".
func (e Explanation) String() string {
	var b strings.Builder
	if e.Code == InvalidTask || e.Code == Conflict {
		b.WriteString(e.Code.String())
		b.WriteString(": ")
		b.WriteString(e.Detail)
		return b.String()
	}
	if e.Detail != "" {
		b.WriteString(e.Detail)
		b.WriteString("; ")
	}
	b.WriteString(strconv.Itoa(e.Feasible))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(e.Hosts))
	b.WriteString(" hosts")
	for i, f := range e.Filtered {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(f.Hosts))
		b.WriteByte(' ')
		b.WriteString(f.Reason)
	}
	return b.String()
}
