package harness

import (
	"runtime"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/placement/placebench"
)

// CoreFigures are the placement core's figures for one workload.
type CoreFigures struct {
	// Decisions counts tasks handed to Place (a retried task counts again);
	// Placed counts tasks Place assigned a host (each once).
	Decisions       int     `json:"decisions"`
	Placed          int     `json:"placed"`
	Unplaced        int     `json:"unplaced"`
	PlaceSeconds    float64 `json:"placeSeconds"`
	DecisionsPerSec float64 `json:"decisionsPerSec"`
	// PlacedPerSec is Placed over the same time: below DecisionsPerSec
	// when tasks that do not fit yet are tried again (churn).
	PlacedPerSec float64 `json:"placedPerSec"`
	Rounds       int     `json:"rounds"`
	// The baselines run on a prefix of BaselineTasks tasks (naiveTasks in
	// the scenario) and the same host snapshot, in the same run: the
	// exhaustive best-fit scan (placement.NaivePlace) and the sampled scan
	// production schedulers use (placement.SampledPlace, SampledHosts
	// feasible hosts scored per task).
	BaselineTasks           int     `json:"baselineTasks"`
	FullScanDecisionsPerSec float64 `json:"fullScanDecisionsPerSec"`
	FullScanPlaced          int     `json:"fullScanPlaced"`
	// FullScanRatio is DecisionsPerSec / FullScanDecisionsPerSec.
	FullScanRatio          float64 `json:"fullScanRatio"`
	SampledHosts           int     `json:"sampledHosts"`
	SampledDecisionsPerSec float64 `json:"sampledDecisionsPerSec"`
	SampledPlaced          int     `json:"sampledPlaced"`
	// SampledRatio is DecisionsPerSec / SampledDecisionsPerSec.
	SampledRatio float64 `json:"sampledRatio"`
	// SampledQuality is the sampled placement's mean fit over the full
	// scan's on the same prefix (placement.SampleQuality); SampledFit and
	// FullScanFit are the two means.
	SampledQuality float64 `json:"sampledQuality"`
	SampledFit     float64 `json:"sampledFit"`
	FullScanFit    float64 `json:"fullScanFit"`
	// The host index: time to build it from the snapshot, and its live
	// heap bytes once built and after the pass (or, for churn, after the
	// last round), with the feasibility groups built on first use.
	IndexBuildSeconds float64 `json:"indexBuildSeconds"`
	IndexBuiltBytes   int64   `json:"indexBuiltBytes"`
	IndexBytes        int64   `json:"indexBytes"`
	IndexBytesPerHost float64 `json:"indexBytesPerHost"`
	// Check of one placement pass: hosts given more than they had free,
	// and tasks placed past a per-host, spread or gang rule. Both must be 0.
	Overcommitted  int    `json:"overcommittedHosts"`
	RuleViolations int    `json:"ruleViolations"`
	Err            string `json:"error,omitempty"`
}

// RunCore measures the placement core on the workload: one pass over every
// task for a burst, rounds with releases for a steady arrival.
func RunCore(w *Workload) CoreFigures {
	if w.Steady {
		return runCoreChurn(w)
	}
	hosts := w.PlacementHosts()
	tasks := w.PlacementTasks()
	opts := placement.Options{Seed: w.Seed, Strategy: placement.StrategyPack}
	f := placebench.RunScenario(placebench.Scenario{
		Name: w.Scenario, Hosts: hosts, Tasks: tasks, Options: opts, NaiveTasks: w.NaiveTasks,
	})
	out := CoreFigures{
		Decisions: f.Tasks, Placed: f.Placed, Unplaced: f.Unplaced, PlaceSeconds: f.PlaceSeconds,
		DecisionsPerSec: f.DecisionsPerSec, PlacedPerSec: float64(f.Placed) / max(f.PlaceSeconds, 1e-9), Rounds: 1,
		BaselineTasks: f.NaiveTasks, FullScanDecisionsPerSec: f.NaiveDecisionsPerSec, FullScanPlaced: f.NaivePlaced,
		FullScanRatio: f.Ratio,
		SampledHosts:  f.SampledHosts, SampledDecisionsPerSec: f.SampledDecisionsPerSec, SampledPlaced: f.SampledPlaced,
		SampledRatio: f.SampledRatio, SampledQuality: f.SampledQuality.Fraction,
		SampledFit: f.SampledQuality.SampledFit, FullScanFit: f.SampledQuality.FullScanFit,
		IndexBuildSeconds: f.BuildSeconds, IndexBuiltBytes: f.IndexBytes.Built, IndexBytes: f.IndexBytes.Used,
		Err: f.Err,
	}
	if len(hosts) > 0 {
		out.IndexBytesPerHost = float64(out.IndexBytes) / float64(len(hosts))
	}
	if f.Err != "" {
		return out
	}
	// The timed pass keeps its assignments to itself: check a pass with
	// the same inputs (the core is deterministic for a seed).
	x, err := placement.NewHostIndex(hosts)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	res := placement.Place(x, tasks, opts)
	c := newPlacementCheck(hosts)
	c.apply(tasks, res.Assignments)
	out.Overcommitted, out.RuleViolations = c.overcommitted(), c.violations
	return out
}

// runCoreChurn replays a steady arrival on a simulated clock: each round
// places the tasks that arrived (and those still waiting) on one shared
// index, and releases the runs whose time is up. Only Place is timed; the
// baselines place a prefix of each round's batch on a snapshot of the same
// index.
func runCoreChurn(w *Workload) CoreFigures {
	var f CoreFigures
	hosts := w.PlacementHosts()
	heap0 := placebench.HeapAlloc()
	start := time.Now()
	x, err := placement.NewHostIndex(hosts)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	f.IndexBuildSeconds = time.Since(start).Seconds()
	f.IndexBuiltBytes = placebench.HeapAlloc() - heap0
	opts := placement.Options{Seed: w.Seed, Strategy: placement.StrategyPack}
	round := time.Duration(w.RoundSeconds * float64(time.Second))
	check := newPlacementCheck(hosts)
	type running struct {
		end  time.Duration
		host model.HostID
		task placement.Task
	}
	var (
		waiting  []placement.Task
		live     []running
		next     int // next job to arrive
		gang     int
		place    time.Duration
		naive    time.Duration
		sampled  time.Duration
		baseN    int
		perRound int
		// Sums of fits over the tasks each baseline placed, and the
		// full scan's count in the quality runs, for the sampled quality
		// over all rounds.
		sampledFit, fullFit float64
		fullPlaced          int
	)
	if n := len(w.Jobs); n > 0 {
		perRound = max(w.NaiveTasks/(int(w.Jobs[n-1].Arrival/round)+1), 1)
	}
	for now := time.Duration(0); next < len(w.Jobs) || len(waiting) > 0; now += round {
		if f.Rounds > 100000 { // nothing can place any more
			break
		}
		f.Rounds++
		kept := live[:0]
		for _, r := range live {
			if r.end <= now {
				_ = x.Release(r.host, r.task)
				check.release(r.host, &r.task)
				continue
			}
			kept = append(kept, r)
		}
		live = kept
		from := next
		for next < len(w.Jobs) && w.Jobs[next].Arrival <= now {
			next++
		}
		batch := w.appendTasks(waiting, from, next, &gang)
		for i := range batch {
			batch[i].Ref = i
		}
		if len(batch) == 0 {
			continue
		}
		if w.NaiveTasks > 0 && baseN < w.NaiveTasks {
			prefix := batch[:min(len(batch), perRound, w.NaiveTasks-baseN)]
			snap := snapshot(x, hosts)
			start := time.Now()
			nres := placement.NaivePlace(snap, prefix)
			naive += time.Since(start)
			baseN += len(prefix)
			f.FullScanPlaced += len(nres.Assignments)
			s := placebench.Sampled(snap, prefix, w.Seed+uint64(f.Rounds))
			sampled += time.Duration(s.Seconds * float64(time.Second))
			f.SampledHosts = s.Hosts
			f.SampledPlaced += s.Placed
			sampledFit += s.Quality.SampledFit * float64(s.Quality.SampledPlaced)
			fullFit += s.Quality.FullScanFit * float64(s.Quality.FullScanPlaced)
			fullPlaced += s.Quality.FullScanPlaced
		}
		start := time.Now()
		res := placement.Place(x, batch, opts)
		place += time.Since(start)
		f.Decisions += len(batch)
		check.apply(batch, res.Assignments)
		for _, a := range res.Assignments {
			t := batch[a.Ref]
			job := w.jobOf(t.Job)
			end := now + job.Duration
			if job.Duration == 0 {
				end = 1 << 62
			}
			live = append(live, running{end: end, host: a.Host, task: t})
		}
		f.Placed += len(res.Assignments)
		waiting = waiting[:0]
		for _, u := range res.Unplaced {
			waiting = append(waiting, batch[u.Ref])
		}
	}
	f.Unplaced = len(waiting)
	f.PlaceSeconds = place.Seconds()
	f.DecisionsPerSec = float64(f.Decisions) / max(f.PlaceSeconds, 1e-9)
	f.PlacedPerSec = float64(f.Placed) / max(f.PlaceSeconds, 1e-9)
	f.BaselineTasks = baseN
	if baseN > 0 {
		f.FullScanDecisionsPerSec = float64(baseN) / max(naive.Seconds(), 1e-9)
		f.FullScanRatio = f.DecisionsPerSec / f.FullScanDecisionsPerSec
		f.SampledDecisionsPerSec = float64(baseN) / max(sampled.Seconds(), 1e-9)
		f.SampledRatio = f.DecisionsPerSec / f.SampledDecisionsPerSec
	}
	if fullPlaced > 0 && f.SampledPlaced > 0 {
		f.SampledFit = sampledFit / float64(f.SampledPlaced)
		f.FullScanFit = fullFit / float64(fullPlaced)
		f.SampledQuality = f.SampledFit / f.FullScanFit
	}
	f.Overcommitted, f.RuleViolations = check.overcommitted(), check.violations
	// What is left alive is the index after the last round.
	check, live, waiting = nil, nil, nil
	f.IndexBytes = placebench.HeapAlloc() - heap0
	runtime.KeepAlive(x)
	if len(hosts) > 0 {
		f.IndexBytesPerHost = float64(f.IndexBytes) / float64(len(hosts))
	}
	return f
}

// jobOf finds the template of a job by name (names are "<scenario>-<group>-<n>").
func (w *Workload) jobOf(id model.JobID) *JobTemplate {
	if w.byName == nil {
		w.byName = make(map[model.JobID]int, len(w.Jobs))
		for i := range w.Jobs {
			w.byName[model.JobID(w.Jobs[i].Name)] = i
		}
	}
	return &w.Jobs[w.byName[id]]
}

// snapshot reads the index's current free amounts back into host records.
func snapshot(x *placement.HostIndex, hosts []placement.Host) []placement.Host {
	out := make([]placement.Host, 0, len(hosts))
	for _, h := range hosts {
		if cur, ok := x.Host(h.ID); ok {
			out = append(out, cur)
		}
	}
	return out
}

// placementCheck replays assignments against the hosts' capacity and the
// tasks' rules, independently of the index.
type placementCheck struct {
	hosts      map[model.HostID]*placement.Host
	used       map[model.HostID]model.Resources
	ports      map[model.HostID]int
	perHost    map[hostGroup]int
	perValue   map[valueGroup]int
	over       map[model.HostID]bool
	violations int
}

type hostGroup struct {
	host  model.HostID
	group model.JobID
}

type valueGroup struct {
	key, value string
	group      model.JobID
}

func newPlacementCheck(hosts []placement.Host) *placementCheck {
	c := &placementCheck{
		hosts: make(map[model.HostID]*placement.Host, len(hosts)), used: map[model.HostID]model.Resources{},
		ports: map[model.HostID]int{}, perHost: map[hostGroup]int{}, perValue: map[valueGroup]int{},
		over: map[model.HostID]bool{},
	}
	for i := range hosts {
		c.hosts[hosts[i].ID] = &hosts[i]
	}
	return c
}

// apply records assignments of tasks and counts what breaks a rule.
func (c *placementCheck) apply(tasks []placement.Task, asg []placement.Assignment) {
	gangPlaced := map[int]int{}
	for _, a := range asg {
		t := &tasks[a.Ref]
		h := c.hosts[a.Host]
		if h == nil || !h.Schedulable {
			c.violations++
			continue
		}
		u := c.used[a.Host].Add(t.Resources)
		c.used[a.Host] = u
		c.ports[a.Host] += t.Ports
		if !u.Fits(h.Free) || c.ports[a.Host] > h.Ports {
			c.over[a.Host] = true
		}
		if !c.constraintsHold(t, h) {
			c.violations++
		}
		c.count(t, h, 1)
		if t.Gang != 0 {
			gangPlaced[t.Gang]++
		}
	}
	if len(gangPlaced) > 0 {
		size := map[int]int{}
		for i := range tasks {
			if tasks[i].Gang != 0 {
				size[tasks[i].Gang]++
			}
		}
		for g, n := range gangPlaced {
			if n != size[g] {
				c.violations++
			}
		}
	}
}

func (c *placementCheck) constraintsHold(t *placement.Task, h *placement.Host) bool {
	for i := range t.Constraints {
		if !t.Constraints[i].Matches(h.Labels) {
			return false
		}
	}
	return true
}

// count adds d instances of t's group on h and checks the limits.
func (c *placementCheck) count(t *placement.Task, h *placement.Host, d int) {
	group := t.Job
	if t.SpreadGroup != "" {
		group = model.JobID(t.SpreadGroup)
	}
	if t.MaxPerHost > 0 {
		k := hostGroup{h.ID, group}
		c.perHost[k] += d
		if d > 0 && c.perHost[k] > t.MaxPerHost {
			c.violations++
		}
	}
	for _, s := range t.Spread {
		k := valueGroup{s.Key, h.Labels[s.Key], group}
		c.perValue[k] += d
		if d > 0 && c.perValue[k] > s.Max {
			c.violations++
		}
	}
}

// release undoes one task's assignment.
func (c *placementCheck) release(host model.HostID, t *placement.Task) {
	h := c.hosts[host]
	if h == nil {
		return
	}
	c.used[host] = c.used[host].Sub(t.Resources)
	c.ports[host] -= t.Ports
	c.count(t, h, -1)
}

func (c *placementCheck) overcommitted() int { return len(c.over) }
