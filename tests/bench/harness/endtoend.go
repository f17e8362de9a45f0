package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
)

// ceilingBatch is how many task records one store-ceiling transaction
// writes.
const ceilingBatch = 10000

// EndToEndFigures are the figures of one run through the shard.
type EndToEndFigures struct {
	Jobs          int  `json:"jobs"`
	JobsSubmitted int  `json:"jobsSubmitted"`
	Tasks         int  `json:"tasks"`
	Placed        int  `json:"placed"`
	TimedOut      bool `json:"timedOut"`
	// Seconds runs from the first submission to the last placement
	// persisted.
	Seconds          float64 `json:"seconds"`
	PlacementsPerSec float64 `json:"placementsPerSec"`
	P50Ms            float64 `json:"p50Ms"`
	P99Ms            float64 `json:"p99Ms"`
	// TaskStates sums the engine's task counts by state when the run ended
	// (it shows where a timed-out run was stuck).
	TaskStates map[string]int `json:"taskStates,omitempty"`
	// Overcommitted counts hosts whose allocation exceeds their capacity in
	// the engine's host cache at the end. It must be 0.
	Overcommitted int `json:"overcommittedHosts"`
	// Passes counts the loop's passes in the run; StepMs is their mean
	// time with the engine's lock held (deciding, then applying the
	// write's outcome), WriteMs their mean write with no lock held: what
	// bounds the loop.
	Passes  uint64  `json:"passes"`
	StepMs  float64 `json:"stepMsPerPass"`
	WriteMs float64 `json:"writeMsPerPass"`
	// StopSeconds is how long the engine took to stop once cancelled (it
	// finishes the pass it is in).
	StopSeconds float64 `json:"stopSeconds"`
	// The baseline: raw boltstore.WriteTasks of the same kind of records
	// (one new record per task, as the engine writes a placement), in
	// batches of ceilingBatch, in the same run.
	CeilingTasks  int     `json:"storeCeilingTasks"`
	CeilingPerSec float64 `json:"storeCeilingPerSec"`
	// Ratio is PlacementsPerSec / CeilingPerSec.
	Ratio float64 `json:"ratio"`
	Err   string  `json:"error,omitempty"`
}

// Note says what a reader must know about the figures: a timeout or a
// broken rule.
func (f *EndToEndFigures) Note() string {
	switch {
	case f.Err != "":
		return "e2e error: " + f.Err
	case f.TimedOut && f.JobsSubmitted < f.Jobs:
		return fmt.Sprintf("e2e timed out at %d/%d placed (%d/%d jobs submitted)", f.Placed, f.Tasks, f.JobsSubmitted, f.Jobs)
	case f.TimedOut:
		return fmt.Sprintf("e2e timed out at %d/%d placed (tasks %s)", f.Placed, f.Tasks, statesText(f.TaskStates))
	case f.Overcommitted > 0:
		return fmt.Sprintf("e2e OVERCOMMITTED %d hosts", f.Overcommitted)
	}
	return ""
}

// engineRun is a jobmgr.Engine running in-process on boltstore in dir.
type engineRun struct {
	engine *jobmgr.Engine
	log    *placementLog
	store  *boltstore.Store
	cancel context.CancelFunc
	done   chan struct{}
}

func startEngine(ctx context.Context, w *Workload, dir string, untilPending bool, plugins []hostmgr.Plugin) (*engineRun, error) {
	st, err := boltstore.Open(filepath.Join(dir, "shard.db"))
	if err != nil {
		return nil, err
	}
	log := newPlacementLog(st, w, untilPending)
	eng := jobmgr.New(jobmgr.Config{Region: "bench", Store: log, Plugins: plugins})
	runCtx, cancel := context.WithCancel(ctx)
	r := &engineRun{engine: eng, log: log, store: st, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = eng.Run(runCtx)
	}()
	select {
	case <-eng.Ready():
		return r, nil
	case <-r.done:
		_ = st.Close()
		return nil, errors.New("engine stopped before it was ready")
	}
}

// stop cancels the engine, waits for it and closes the store; it returns
// how long the engine took to stop.
func (r *engineRun) stop() time.Duration {
	start := time.Now()
	r.cancel()
	<-r.done
	d := time.Since(start)
	_ = r.store.Close()
	return d
}

// waitCapacity polls the host cache until the plugin reported every host.
func waitCapacity(ctx context.Context, eng *jobmgr.Engine, want model.Resources, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if got, _ := eng.Hosts().Capacity(); want.Fits(got) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hosts not reported after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// submitters is how many clients submit a burst at once, as many users
// and pipelines would, unless the workload says otherwise.
const submitters = 32

// submit creates the workload's jobs on the engine at their arrival times
// (all at once, by several clients, for a burst) until every job is in or
// ctx ends.
func submit(ctx context.Context, w *Workload, r *engineRun, steady bool) error {
	one := func(j int) error {
		if ctx.Err() != nil {
			return nil
		}
		r.log.submitting(w.Jobs[j].Name)
		if _, err := jobmgr.Do(ctx, r.engine, jobmgr.CreateJob{Spec: w.JobSpec(j)}); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("create job %s: %w", w.Jobs[j].Name, err)
		}
		return nil
	}
	if !steady {
		clients := submitters
		if w.Submitters > 0 {
			clients = w.Submitters
		}
		next := make(chan int)
		errs := make(chan error, clients)
		var wg sync.WaitGroup
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					if err := one(j); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	feed:
		for j := range w.Jobs {
			select {
			case next <- j:
			case err := <-errs:
				close(next)
				wg.Wait()
				return err
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
			return nil
		}
	}
	for j := range w.Jobs {
		if wait := w.Jobs[j].Arrival - time.Since(r.log.start); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		if err := one(j); err != nil {
			return err
		}
	}
	return nil
}

// RunEndToEnd drives a real engine (boltstore in dir, the sim host manager
// with the workload's hosts) through the workload, within the workload's
// end-to-end budget, then measures the store ceiling.
func RunEndToEnd(ctx context.Context, w *Workload, dir string) EndToEndFigures {
	f := EndToEndFigures{Jobs: len(w.Jobs), Tasks: w.Tasks}
	fail := func(err error) EndToEndFigures { f.Err = err.Error(); return f }
	plugin, err := sim.New(sim.Config{Cluster: Cluster, Hosts: w.Hosts, DefaultDuration: 24 * time.Hour})
	if err != nil {
		return fail(err)
	}
	var capacity model.Resources
	for _, h := range w.Hosts {
		capacity = capacity.Add(h.Capacity)
	}
	r, err := startEngine(ctx, w, dir, false, []hostmgr.Plugin{plugin})
	if err != nil {
		return fail(err)
	}
	if err := waitCapacity(ctx, r.engine, capacity, 30*time.Second); err != nil {
		r.stop()
		return fail(err)
	}

	r.log.begin()
	subCtx, stopSubmitting := context.WithCancel(ctx)
	var (
		wg        sync.WaitGroup
		submitErr error
	)
	failed := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		if submitErr = submit(subCtx, w, r, w.Steady); submitErr != nil {
			close(failed)
		}
	}()
	budget := time.NewTimer(w.EndToEndBudget)
	select {
	case <-r.log.done:
	case <-budget.C:
		f.TimedOut = true
	case <-failed:
	case <-ctx.Done():
		f.TimedOut = true
	}
	budget.Stop()
	p := r.log.progress()
	stopSubmitting()
	wg.Wait()
	if submitErr != nil {
		f.Err = submitErr.Error()
	}
	f.TaskStates = taskStates(r.engine)
	for _, v := range r.engine.Hosts().Snapshot() {
		if !v.Allocated.Fits(v.Capacity) {
			f.Overcommitted++
		}
	}
	st := r.engine.Stats()
	if w := st.PassLatency["write"]; w.Count > 0 {
		f.Passes = w.Count
		f.WriteMs = 1000 * w.Sum / float64(w.Count)
		f.StepMs = 1000 * (st.PassLatency["step"].Sum + st.PassLatency["apply"].Sum) / float64(w.Count)
	}
	f.StopSeconds = r.stop().Seconds()

	f.JobsSubmitted, f.Placed = p.submittedJobs, p.placed
	f.Seconds = p.span.Seconds()
	if f.Placed > 0 {
		f.PlacementsPerSec = float64(f.Placed) / max(f.Seconds, 1e-9)
	}
	f.P50Ms = float64(quantile(p.latencies, 0.50)) / 1e6
	f.P99Ms = float64(quantile(p.latencies, 0.99)) / 1e6

	f.CeilingTasks, f.CeilingPerSec, err = storeCeiling(ctx, w, dir)
	if err != nil && f.Err == "" {
		f.Err = "store ceiling: " + err.Error()
	}
	if f.CeilingPerSec > 0 {
		f.Ratio = f.PlacementsPerSec / f.CeilingPerSec
	}
	return f
}

// taskStates sums the task counts of every job by state name.
func taskStates(eng *jobmgr.Engine) map[string]int {
	out := map[string]int{}
	for _, j := range eng.Reads().ListJobs(jobmgr.JobFilter{}) {
		for s, n := range j.Status.TaskStates {
			out[s.String()] += int(n)
		}
	}
	return out
}

func statesText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// storeCeiling times the raw store on the records a placement writes: one
// new task record per task (host set, LAUNCHING), in batches, on a fresh
// store with the jobs already created. It returns the task count and rate.
func storeCeiling(ctx context.Context, w *Workload, dir string) (int, float64, error) {
	st, err := boltstore.Open(filepath.Join(dir, "ceiling.db"))
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	limit := w.Tasks
	if w.StoreCeilingTasks > 0 {
		limit = min(limit, w.StoreCeilingTasks)
	}
	now := time.Now()
	var tasks []*model.TaskRuntime
	for j := 0; j < len(w.Jobs) && len(tasks) < limit; j++ {
		spec := w.JobSpec(j)
		job := &model.Job{ID: model.JobID(spec.Name), Spec: spec,
			Status: model.JobStatus{State: model.JobPending, CreateTime: now, Region: "bench"}}
		if err := st.CreateJob(ctx, job); err != nil {
			return 0, 0, err
		}
		for i := 0; i < w.Jobs[j].Instances && len(tasks) < limit; i++ {
			host := w.Hosts[len(tasks)%len(w.Hosts)].Name
			tasks = append(tasks, &model.TaskRuntime{
				ID: model.TaskID{Job: job.ID, Instance: uint32(i)}, Run: 1,
				State: model.TaskLaunching, Goal: model.TaskSucceeded,
				Host: model.HostID(Cluster + "/" + host), Cluster: Cluster, UpdateTime: now,
			})
		}
	}
	start := time.Now()
	for i := 0; i < len(tasks); i += ceilingBatch {
		if err := st.WriteTasks(ctx, tasks[i:min(i+ceilingBatch, len(tasks))]); err != nil {
			return 0, 0, err
		}
	}
	return len(tasks), float64(len(tasks)) / max(time.Since(start).Seconds(), 1e-9), nil
}
