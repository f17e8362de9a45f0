package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"slices"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/periodic"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// The shell of periodic jobs (the decisions are package periodic's). A
// periodic job runs no tasks of its own (converge passes it by); once a
// second a goroutine of its own reads the periodic jobs and their runs
// from the view, asks periodic.Decide what each does now and carries it
// out through the engine's own calls, with no lock held: it stops runs,
// creates the tick's run under the id periodic.RunID derives (a second
// attempt, here or by the next leader, finds it stored and takes it for
// the tick's run), then records the tick on the job, then deletes the
// finished runs beyond the ones kept. A tick is recorded only once its
// run is stored, so a leader that dies in between leaves the tick to the
// next one, which launches it or finds its run.

// periodicPeriod is how often periodic jobs are looked at: a tick
// launches within about this long.
const periodicPeriod = time.Second

// periodicIndex keeps the periodic jobs of the view and the runs of each.
type periodicIndex struct {
	mu      sync.Mutex
	parents map[model.JobID]struct{}
	runs    map[model.JobID]map[model.JobID]struct{}
}

// note indexes a job as it is published.
func (x *periodicIndex) note(j *model.Job) {
	if !j.Spec.Periodic() && j.Status.RunOf == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if j.Spec.Periodic() {
		if x.parents == nil {
			x.parents = map[model.JobID]struct{}{}
		}
		x.parents[j.ID] = struct{}{}
	}
	if r := j.Status.RunOf; r != nil {
		if x.runs == nil {
			x.runs = map[model.JobID]map[model.JobID]struct{}{}
		}
		if x.runs[r.Parent] == nil {
			x.runs[r.Parent] = map[model.JobID]struct{}{}
		}
		x.runs[r.Parent][j.ID] = struct{}{}
	}
}

// forget takes a deleted job out of the index.
func (x *periodicIndex) forget(j *model.Job) {
	if j == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.parents, j.ID)
	if r := j.Status.RunOf; r != nil {
		delete(x.runs[r.Parent], j.ID)
		if len(x.runs[r.Parent]) == 0 {
			delete(x.runs, r.Parent)
		}
	}
}

// ids returns the periodic jobs' ids, sorted.
func (x *periodicIndex) ids() []model.JobID {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]model.JobID, 0, len(x.parents))
	for id := range x.parents {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// runIDs returns the ids of a periodic job's runs, sorted.
func (x *periodicIndex) runIDs(parent model.JobID) []model.JobID {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]model.JobID, 0, len(x.runs[parent]))
	for id := range x.runs[parent] {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// RunsOf returns the runs of a periodic job, oldest first, as the store
// has them.
func (r Reads) RunsOf(parent model.JobID) []*model.Job {
	var out []*model.Job
	for _, id := range r.e.view.periodic.runIDs(parent) {
		if j := r.e.view.get(id); j != nil {
			out = append(out, core.CopyJob(j))
		}
	}
	slices.SortFunc(out, func(a, b *model.Job) int {
		if Before(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// ActiveRuns counts a periodic job's runs that have not finished.
func (r Reads) ActiveRuns(parent model.JobID) int {
	n := 0
	for _, id := range r.e.view.periodic.runIDs(parent) {
		if j := r.e.view.get(id); j != nil && !j.Status.State.IsTerminal() {
			n++
		}
	}
	return n
}

// periodicShell is periodic jobs' shell (shard/periodic decides): a
// goroutine that looks at the periodic jobs from the published view with
// no lock held and carries each decision out with the engine's own calls,
// and the commands that suspend, resume and run a periodic job by hand.
type periodicShell struct{ e *Engine }

// run looks at the periodic jobs every periodicPeriod until ctx
// ends.
func (s *periodicShell) run(ctx context.Context) {
	var cache periodic.Schedules
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.e.cfg.Clock.After(periodicPeriod):
		}
		if s.e.Fenced() {
			continue // a fenced region launches nothing; its ticks wait
		}
		s.pass(ctx, &cache)
	}
}

// pass decides and carries out what each periodic job does now.
func (s *periodicShell) pass(ctx context.Context, cache *periodic.Schedules) {
	now := s.e.cfg.Clock.Now()
	for _, id := range s.e.view.periodic.ids() {
		j := s.e.view.get(id)
		if j == nil || !j.Spec.Periodic() {
			continue
		}
		in, err := s.input(j, now, cache)
		if err != nil {
			continue // refused at creation; a record from elsewhere waits
		}
		if j.Status.State.IsTerminal() && len(in.Runs) == 0 {
			continue
		}
		if err := s.carryOut(ctx, j, periodic.Decide(in)); err != nil && ctx.Err() == nil {
			s.e.c.Log.Warn("periodic job: the next look tries again", "job", id, "err", err)
		}
	}
}

// input describes a periodic job and its runs to the decision.
func (s *periodicShell) input(j *model.Job, now time.Time, cache *periodic.Schedules) (periodic.Input, error) {
	c, loc, err := cache.Parse(j.Spec.Schedule)
	if err != nil {
		return periodic.Input{}, err
	}
	in := periodic.Input{Now: now, Schedule: *j.Spec.Schedule, Cron: c, Location: loc,
		Created: j.Status.CreateTime, Stopped: j.Status.Killed || j.Status.State.IsTerminal()}
	if p := j.Status.Periodic; p != nil {
		in.Status = *p
	}
	for _, id := range s.e.view.periodic.runIDs(j.ID) {
		r := s.e.view.get(id)
		if r == nil {
			continue
		}
		run := periodic.Run{ID: r.ID, Active: !r.Status.State.IsTerminal(), Created: r.Status.CreateTime}
		if r.Status.RunOf != nil {
			run.Tick = r.Status.RunOf.Tick
		}
		in.Runs = append(in.Runs, run)
	}
	return in, nil
}

// carryOut stops, launches, records and deletes what d says, in
// that order, and stops at the first step that fails.
func (s *periodicShell) carryOut(ctx context.Context, j *model.Job, d periodic.Decision) error {
	for _, id := range d.Stop {
		if _, err := s.e.jobs.stop(ctx, id); err != nil && !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("stop run %s: %w", id, err)
		}
	}
	if !d.Launch.IsZero() {
		run, err := s.launchRun(ctx, j, d.Launch)
		if err != nil {
			return err
		}
		d.Status.LastRun = run
	}
	if d.Record {
		st := d.Status
		if err := s.record(ctx, j.ID, func(p *model.PeriodicStatus) {
			suspended := p.Suspended // a suspend meanwhile stays
			*p = st
			p.Suspended = suspended
		}); err != nil {
			return fmt.Errorf("record tick: %w", err)
		}
	}
	for _, id := range d.Delete {
		if err := s.e.jobs.delete(ctx, id); err != nil && !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("delete run %s: %w", id, err)
		}
	}
	return nil
}

// launchRun creates the run of a periodic job for a tick (zero: by hand)
// and returns its id. A tick's run has the id periodic.RunID gives it: one
// stored already is taken for it.
func (s *periodicShell) launchRun(ctx context.Context, j *model.Job, tick time.Time) (model.JobID, error) {
	spec, err := codec.CloneSpec(&j.Spec)
	if err != nil {
		return "", err
	}
	spec.Schedule = nil
	spec.Name = runName(j.Spec.Name, tick, s.e.cfg.Clock.Now())
	nj := NewJob{Spec: *spec, RunOf: &model.RunOf{Parent: j.ID, Tick: tick}}
	if !tick.IsZero() {
		nj.ID = periodic.RunID(j.ID, tick)
	}
	c := s.e.intake.create(ctx, []NewJob{nj})[0]
	if c.Err != nil {
		return "", fmt.Errorf("launch run: %w", c.Err)
	}
	if !c.Existing {
		s.e.c.Log.Info("periodic job launched a run", "job", j.ID, "run", c.ID, "tick", tick)
	}
	return c.ID, nil
}

// runName names a run after its job and its tick (or the time it was
// launched by hand), within the API's bound on names.
func runName(name string, tick, now time.Time) string {
	suffix := "-" + tick.UTC().Format("20060102T1504Z")
	if tick.IsZero() {
		suffix = "-manual-" + now.UTC().Format("20060102T150405Z")
	}
	const maxName = 253
	if r := []rune(name); len(r)+len(suffix) > maxName {
		name = string(r[:maxName-len(suffix)])
	}
	return name + suffix
}

// record changes a periodic job's schedule state and stores it.
func (s *periodicShell) record(ctx context.Context, id model.JobID, change func(*model.PeriodicStatus)) error {
	s.e.lock()
	je := s.e.c.Jobs[id]
	if je == nil {
		s.e.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	}
	var p model.PeriodicStatus
	if cur := je.Job.Status.Periodic; cur != nil {
		p = *cur
	}
	change(&p)
	je.Job.Status.Periodic = &p
	return s.e.storeJobLocked(ctx, je)
}

// setSuspended suspends or resumes a periodic job. Ticks passed while it
// was suspended are not launched once it is resumed.
func (s *periodicShell) setSuspended(ctx context.Context, id model.JobID, suspend bool) (*model.Job, error) {
	j, err := s.job(id)
	if err != nil {
		return nil, err
	}
	// Resumed, it goes on after the latest tick passed: the ticks of
	// its suspension are taken as handled.
	var passed time.Time
	if c, loc, err := periodic.Parse(j.Spec.Schedule); err == nil {
		passed = c.Prev(s.e.cfg.Clock.Now(), loc)
	}
	err = s.record(ctx, id, func(p *model.PeriodicStatus) {
		if !suspend && p.Suspended && passed.After(p.LastTick) {
			p.LastTick = passed
		}
		p.Suspended = suspend
	})
	if err != nil {
		return nil, err
	}
	s.e.c.Log.Info("periodic job", "job", id, "suspended", suspend)
	return Reads{s.e}.GetJob(id)
}

// runNow launches a run of a periodic job by hand.
func (s *periodicShell) runNow(ctx context.Context, id model.JobID) (*model.Job, error) {
	j, err := s.job(id)
	if err != nil {
		return nil, err
	}
	run, err := s.launchRun(ctx, j, time.Time{})
	if err != nil {
		return nil, err
	}
	if err := s.record(ctx, id, func(p *model.PeriodicStatus) { p.LastRun = run }); err != nil {
		return nil, err
	}
	return Reads{s.e}.GetJob(run)
}

// job is a periodic job that was not stopped, as the view has it.
func (s *periodicShell) job(id model.JobID) (*model.Job, error) {
	j := s.e.view.get(id)
	switch {
	case j == nil:
		return nil, fmt.Errorf("job %s: %w", id, core.ErrNotFound)
	case !j.Spec.Periodic():
		return nil, fmt.Errorf("job %s has no schedule: %w", id, core.ErrInvalid)
	case j.Status.Killed || j.Status.State.IsTerminal():
		return nil, fmt.Errorf("job %s was stopped: %w", id, core.ErrInvalid)
	}
	return j, nil
}
