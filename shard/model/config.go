package model

import (
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InstanceRange is the instances From..To, both included.
type InstanceRange struct{ From, To uint32 }

// InstanceOverride gives some instances of a job a task that differs from
// the job's: every field set in Task replaces the job's (a zero field keeps
// it; a zero resource amount keeps the job's amount of that resource), and
// Env is merged over the job's.
type InstanceOverride struct {
	Instances []InstanceRange
	Task      TaskSpec
}

// Merge returns base with the override's fields applied.
func (o *InstanceOverride) Merge(base TaskSpec) TaskSpec {
	t := base
	ov := &o.Task
	if ov.Command != "" {
		t.Command = ov.Command
	}
	if ov.Args != nil {
		t.Args = ov.Args
	}
	if len(ov.Env) > 0 {
		env := make(map[string]string, len(base.Env)+len(ov.Env))
		maps.Copy(env, base.Env)
		maps.Copy(env, ov.Env)
		t.Env = env
	}
	t.Resources = o.MergeResources(base.Resources)
	if ov.Constraints != nil {
		t.Constraints = ov.Constraints
	}
	if ov.KillGrace != 0 {
		t.KillGrace = ov.KillGrace
	}
	if ov.Container != nil {
		t.Container = ov.Container
	}
	if ov.Ports != nil {
		t.Ports = ov.Ports
	}
	if ov.HealthCheck != nil {
		t.HealthCheck = ov.HealthCheck
	}
	if ov.Readiness != nil {
		t.Readiness = ov.Readiness
	}
	if ov.Volumes != nil {
		t.Volumes = ov.Volumes
	}
	return t
}

// MergeResources returns base with the override's non-zero amounts
// applied: the resources part of Merge, without copying the rest.
func (o *InstanceOverride) MergeResources(base Resources) Resources {
	r, ov := base, o.Task.Resources
	if ov.MilliCPU != 0 {
		r.MilliCPU = ov.MilliCPU
	}
	if ov.MemMB != 0 {
		r.MemMB = ov.MemMB
	}
	if ov.DiskMB != 0 {
		r.DiskMB = ov.DiskMB
	}
	if ov.GPU != 0 {
		r.GPU = ov.GPU
	}
	return r
}

// OverrideIndex finds the override of an instance in O(log n); build it
// once per config (a job may carry one override per instance).
type OverrideIndex struct {
	spans []overrideSpan // sorted by from, not overlapping
	ovs   []InstanceOverride
}

type overrideSpan struct {
	from, to uint32
	ov       int
}

// NewOverrideIndex indexes the overrides of a spec. Where ranges overlap
// (a validated spec has none) the later override wins for the instances
// both name.
func NewOverrideIndex(s *JobSpec) *OverrideIndex {
	x := &OverrideIndex{ovs: s.Overrides}
	if len(s.Overrides) == 0 {
		return x
	}
	n := 0
	for i := range s.Overrides {
		n += len(s.Overrides[i].Instances)
	}
	spans := make([]overrideSpan, 0, n)
	for i := range s.Overrides {
		for _, r := range s.Overrides[i].Instances {
			if r.To < r.From {
				continue
			}
			spans = append(spans, overrideSpan{r.From, r.To, i})
		}
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].from < spans[b].from })
	// Overlaps are rare (a validated spec has none); resolve them by
	// brute force on the few instances concerned.
	for i := 1; i < len(spans); i++ {
		if spans[i].from <= spans[i-1].to {
			return x.resolveOverlaps(spans)
		}
	}
	x.spans = spans
	return x
}

func (x *OverrideIndex) resolveOverlaps(spans []overrideSpan) *OverrideIndex {
	owner := map[uint32]int{}
	for _, s := range spans {
		for i := uint64(s.from); i <= uint64(s.to); i++ {
			if cur, ok := owner[uint32(i)]; !ok || s.ov > cur {
				owner[uint32(i)] = s.ov
			}
		}
	}
	insts := make([]uint32, 0, len(owner))
	for i := range owner {
		insts = append(insts, i)
	}
	sort.Slice(insts, func(a, b int) bool { return insts[a] < insts[b] })
	for _, i := range insts {
		ov := owner[i]
		if n := len(x.spans); n > 0 && x.spans[n-1].ov == ov && x.spans[n-1].to+1 == i {
			x.spans[n-1].to = i
			continue
		}
		x.spans = append(x.spans, overrideSpan{i, i, ov})
	}
	return x
}

// Lookup returns the override of an instance, nil if it has none.
func (x *OverrideIndex) Lookup(instance uint32) *InstanceOverride {
	i := sort.Search(len(x.spans), func(i int) bool { return x.spans[i].to >= instance })
	if i < len(x.spans) && x.spans[i].from <= instance {
		return &x.ovs[x.spans[i].ov]
	}
	return nil
}

// TaskFor returns the task an instance runs under spec s, indexed by x.
func (x *OverrideIndex) TaskFor(s *JobSpec, instance uint32) TaskSpec {
	if ov := x.Lookup(instance); ov != nil {
		return ov.Merge(s.Task)
	}
	return s.Task
}

// UpdateID identifies a job update.
type UpdateID string

// UpdateState is where a job update stands.
type UpdateState uint8

const (
	// UpdateRollingForward: instances are being moved to the new config,
	// a batch at a time.
	UpdateRollingForward UpdateState = iota + 1
	UpdateSucceeded
	// UpdateAborted: an operator stopped it, or a newer update or a stop
	// of the job replaced it; instances already moved keep the new config.
	UpdateAborted
	// UpdateRollingBack: instances are being moved back to the update's
	// FromVersion, with the same batch rules and SLA (an operator asked,
	// or too many instances failed on the new config).
	UpdateRollingBack
	// UpdateRolledBack: every instance is back on FromVersion.
	UpdateRolledBack
	// UpdateFailed: more instances failed on the new config than the
	// update allows, and it was not to roll back; it moves no more.
	UpdateFailed
)

var updateStateNames = [...]string{"", "ROLLING_FORWARD", "SUCCEEDED", "ABORTED", "ROLLING_BACK", "ROLLED_BACK", "FAILED"}

func (s UpdateState) String() string {
	if int(s) < len(updateStateNames) {
		return updateStateNames[s]
	}
	return "UNKNOWN"
}

// IsTerminal reports whether the update has ended.
func (s UpdateState) IsTerminal() bool {
	return s == UpdateSucceeded || s == UpdateAborted || s == UpdateRolledBack || s == UpdateFailed
}

// Update is a change of a job's config, rolled out to its instances.
type Update struct {
	ID  UpdateID
	Job JobID
	// FromVersion and ToVersion are config versions of the job.
	FromVersion uint64
	ToVersion   uint64
	// BatchSize is how many instances are restarted on the new config at
	// once.
	BatchSize uint32
	State     UpdateState
	// InstancesTotal is how many instances must move; InstancesDone how
	// many have (including those that never ran on the old config).
	InstancesTotal uint32
	InstancesDone  uint32
	// InstancesFailed counts instances that failed on the new config (a
	// run that ended failed, or a health check that failed) while the
	// update moved them; more than MaxFailures fails the update, which
	// then rolls back when RollbackOnFailure.
	InstancesFailed   uint32
	MaxFailures       uint32
	RollbackOnFailure bool
	// Paused: no new batch starts until it is resumed; batches in flight
	// finish.
	Paused bool
	// MinHealthy is how long an instance the update restarted must stay
	// available before it counts as done.
	MinHealthy time.Duration
	// InPlace restarts an instance on the host it ran on when it still
	// fits there, and on any host otherwise.
	InPlace bool
	// InstancesInFlight are restarted (or being removed) and not done yet.
	InstancesInFlight uint32
	// Canary is how many instances, the lowest first, take the new config
	// before the others: the update then waits until it is promoted (an
	// operator's PromoteUpdate, or by itself once every canary has been
	// available for AutoPromoteAfter). 0: no canary phase. A canary that
	// fails past MaxFailures reverts the update when RollbackOnFailure.
	Canary           uint32
	AutoPromoteAfter time.Duration
	// CanaryExtra: the canaries are extra instances beside the job's
	// (numbered from its instance count up), started on the new config
	// while every instance stays on its own; promoted, they are removed
	// as the rest moves. Otherwise the lowest instances move in place.
	CanaryExtra bool
	// Promoted: the canary phase is over; PromotedBy says who ended it.
	Promoted       bool
	PromotedBy     string
	CreateTime     time.Time
	CompletionTime time.Time
	Message        string
	// Revision increases on every stored change; stores compare-and-set on it.
	Revision uint64
}

// HostRecord is what a shard keeps about a host across restarts: the host
// as last reported, and the maintenance an operator asked for.
type HostRecord struct {
	Host Host
	// Draining: an operator took the host out of service; it runs what it
	// has but takes no new work.
	Draining    bool
	DrainReason string
	DrainTime   time.Time
	// DrainDeadline is when batch runs still on a draining host are
	// killed to run elsewhere; zero lets them finish.
	DrainDeadline time.Time
	// Down: an operator marked the drained host down for maintenance; it
	// stays out of service until it is marked up.
	Down bool
	// LastSeen is when a host manager last reported the host.
	LastSeen time.Time
	// HostPool is the host pool an operator (or the host pool policy) put
	// the host in; empty is DefaultHostPool.
	HostPool string
	// HostPoolTarget, when set, is the host pool the policy is moving the
	// host to: the host is drained for the move, and once nothing of the
	// shard runs there its HostPool becomes HostPoolTarget and the drain
	// ends.
	HostPoolTarget string
}

// Pool returns the host pool the host is in.
func (r *HostRecord) Pool() string { return HostPoolOf(r.HostPool) }

// Event is a change of a job or a task, numbered within the region. Seq
// grows across restarts of the region's leader (it never falls below the
// event's time in microseconds since the epoch).
type Event struct {
	Seq  uint64
	Time time.Time
	Job  JobID
	// Exactly one of JobStatus, Task and HostPoolMove is set; a
	// HostPoolMove goes with Job HostPoolEvents.
	JobStatus    *JobStatus
	Task         *TaskRuntime
	HostPoolMove *HostPoolMove
}

// MakeUpdateID names the update of a job to config version v:
// "<job>.<v>". The job can be read back from it, so an update is found
// wherever its job is.
func MakeUpdateID(job JobID, v uint64) UpdateID {
	return UpdateID(string(job) + "." + strconv.FormatUint(v, 10))
}

// Parse splits an update id into its job and config version.
func (u UpdateID) Parse() (JobID, uint64, bool) {
	s := string(u)
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil || v == 0 {
		return "", 0, false
	}
	return JobID(s[:i]), v, true
}
