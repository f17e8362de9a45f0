package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// Histogram counts observations in fixed buckets (upper bounds, seconds),
// as a Prometheus histogram does; the metrics shell exports it as one.
type Histogram struct {
	Bounds []float64
	// Counts[i] is how many observations were <= Bounds[i] and > Bounds[i-1];
	// Counts[len(Bounds)] holds the rest.
	Counts []uint64
	Count  uint64
	Sum    float64
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
}

// Observe adds one observation.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.Bounds, v)
	h.Counts[i]++
	h.Count++
	h.Sum += v
}

func (h *Histogram) clone() Histogram {
	c := *h
	c.Counts = append([]uint64(nil), h.Counts...)
	return c
}

// Buckets of the engine's histograms, in seconds.
var (
	latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
	waitBuckets    = []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600}
)

// PoolState keys tasks by leaf pool and state.
type PoolState struct {
	Pool  string
	State model.TaskState
}

// Stats is a snapshot of the engine's figures for metrics: gauges taken
// when asked, counters and histograms since the engine started.
type Stats struct {
	// Tasks counts the tasks of unfinished jobs.
	Tasks map[PoolState]int
	// Pools holds every pool's figures as of the last resource manager
	// pass (demand, entitlement, allocation, queued gangs...).
	Pools []resmgr.PoolFigures
	// QueueWait is how long admitted tasks waited in their pool's queue.
	QueueWait map[string]Histogram
	// Preemptions counts preempted gangs by reason.
	Preemptions map[string]uint64
	// PlacementPasses, PlacementLatency: passes of the loop that placed
	// tasks (or found no room for some) and how long each took to decide;
	// Placed and Unplaced (by code) count tasks.
	PlacementPasses  uint64
	PlacementLatency Histogram
	Placed           uint64
	Unplaced         map[string]uint64
	// Launches and LaunchFailures count runs handed to each cluster's
	// host manager and those it refused.
	Launches       map[string]uint64
	LaunchFailures map[string]uint64
	// StoreLatency and StoreErrors cover the loop's writes of each pass,
	// by operation (write_pass); a conflict counts as an error.
	StoreLatency map[string]Histogram
	// PassLatency times the parts of the loop's passes: "step" and
	// "apply" hold the engine's lock, "write" does not.
	PassLatency map[string]Histogram
	StoreErrors map[string]uint64
	// UpdatesRolling counts jobs with an update in progress.
	UpdatesRolling int
	// Hosts counts hosts by cluster and state.
	Hosts map[[2]string]int
	// Fenced: launches are stopped.
	Fenced bool
}

// statBook holds the engine's counters; its own mutex, since launches are
// counted outside the engine's lock.
type statBook struct {
	mu               mutex
	queueWait        map[string]*Histogram
	preemptions      map[string]uint64
	placementPasses  uint64
	placementLatency *Histogram
	placed           uint64
	unplaced         map[string]uint64
	launches         map[string]uint64
	launchFailures   map[string]uint64
	storeLatency     map[string]*Histogram
	storeErrors      map[string]uint64
	passLatency      map[string]*Histogram
}

func (b *statBook) init() {
	b.queueWait = map[string]*Histogram{}
	b.preemptions = map[string]uint64{}
	b.placementLatency = newHistogram(latencyBuckets)
	b.unplaced = map[string]uint64{}
	b.launches = map[string]uint64{}
	b.launchFailures = map[string]uint64{}
	b.storeLatency = map[string]*Histogram{}
	b.storeErrors = map[string]uint64{}
	b.passLatency = map[string]*Histogram{}
}

// passed records how long a part of a pass took: "step" (the engine's
// lock held while the pass decides), "write" (no lock held) or "apply"
// (the lock held again to take the write's outcome).
func (b *statBook) passed(part string, took time.Duration) {
	b.mu.Lock()
	h := b.passLatency[part]
	if h == nil {
		h = newHistogram(latencyBuckets)
		b.passLatency[part] = h
	}
	h.Observe(took.Seconds())
	b.mu.Unlock()
}

// record takes in a pass's figures; placing is how long the pass took to
// decide when it placed tasks, zero when it tried to place none.
func (b *statBook) record(f core.Figures, placing time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range f.QueueWaits {
		h := b.queueWait[w.Pool]
		if h == nil {
			h = newHistogram(waitBuckets)
			b.queueWait[w.Pool] = h
		}
		h.Observe(max(w.Wait.Seconds(), 0))
	}
	for _, r := range f.Preempted {
		b.preemptions[r]++
	}
	if placing > 0 {
		b.placementPasses++
		b.placementLatency.Observe(placing.Seconds())
	}
	b.placed += uint64(f.Placed)
	for k, n := range f.Unplaced {
		b.unplaced[k] += n
	}
}

func (b *statBook) launched(cluster string, n int, failed bool) {
	b.mu.Lock()
	b.launches[cluster] += uint64(n)
	if failed {
		b.launchFailures[cluster] += uint64(n)
	}
	b.mu.Unlock()
}

func (b *statBook) stored(op string, took time.Duration, err error) {
	b.mu.Lock()
	h := b.storeLatency[op]
	if h == nil {
		h = newHistogram(latencyBuckets)
		b.storeLatency[op] = h
	}
	h.Observe(took.Seconds())
	if err != nil {
		b.storeErrors[op]++
	}
	b.mu.Unlock()
}

// Stats returns a snapshot of the engine's figures.
func (e *Engine) Stats() Stats {
	s := Stats{Tasks: map[PoolState]int{}, Hosts: map[[2]string]int{}, Fenced: e.fenced.Load()}
	e.lock()
	for _, je := range e.c.Jobs {
		if je.Job.Status.State.IsTerminal() {
			continue
		}
		if e.c.Rollouts[je.Job.ID] != nil {
			s.UpdatesRolling++
		}
		for st, n := range je.Counts {
			if n > 0 {
				s.Tasks[PoolState{Pool: je.Job.Spec.Pool, State: model.TaskState(st)}] += int(n)
			}
		}
	}
	s.Pools = e.c.Queue.Sched.Figures()
	e.mu.Unlock()
	for _, v := range e.cfg.Hosts.Snapshot() {
		s.Hosts[[2]string{core.ClusterOf(v.ID), v.State.String()}]++
	}

	b := &e.stats
	b.mu.Lock()
	defer b.mu.Unlock()
	s.QueueWait = make(map[string]Histogram, len(b.queueWait))
	for p, h := range b.queueWait {
		s.QueueWait[p] = h.clone()
	}
	s.Preemptions = cloneCounts(b.preemptions)
	s.PlacementPasses, s.PlacementLatency, s.Placed = b.placementPasses, b.placementLatency.clone(), b.placed
	s.Unplaced = cloneCounts(b.unplaced)
	s.Launches, s.LaunchFailures = cloneCounts(b.launches), cloneCounts(b.launchFailures)
	s.StoreLatency = make(map[string]Histogram, len(b.storeLatency))
	for op, h := range b.storeLatency {
		s.StoreLatency[op] = h.clone()
	}
	s.StoreErrors = cloneCounts(b.storeErrors)
	s.PassLatency = make(map[string]Histogram, len(b.passLatency))
	for part, h := range b.passLatency {
		s.PassLatency[part] = h.clone()
	}
	return s
}

func cloneCounts(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
