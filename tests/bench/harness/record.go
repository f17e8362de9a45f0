package harness

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// placementLog is the store the engine writes through in a benchmark run.
// It passes every call to the real store and, once a WriteTasks batch has
// committed, notes for each task the first stored record that carries a
// host (the placement is then durable: a restarted shard would keep it) and
// the first stored record in PENDING. Times are offsets from start on the
// monotonic clock.
type placementLog struct {
	store.Store
	start time.Time

	mu     sync.Mutex
	byName map[string]*jobLog
	byID   map[model.JobID]*jobLog
	// placed and pending count tasks seen placed / pending at least once.
	placed, pending int
	firstSubmit     time.Duration
	lastPlaced      time.Duration
	submittedJobs   int
	// done is closed when placed (or, with untilPending, pending) reaches
	// want.
	want         int
	untilPending bool
	done         chan struct{}
	closed       bool
}

type jobLog struct {
	submitted time.Duration
	placedAt  []time.Duration // zero: not placed yet
	pending   []bool
}

// newPlacementLog wraps st for the workload's jobs; every per-task slot is
// allocated here, before the run, so memory measured later excludes it.
func newPlacementLog(st store.Store, w *Workload, untilPending bool) *placementLog {
	l := &placementLog{
		Store:        st,
		byName:       make(map[string]*jobLog, len(w.Jobs)),
		byID:         make(map[model.JobID]*jobLog, len(w.Jobs)),
		want:         w.Tasks,
		untilPending: untilPending,
		done:         make(chan struct{}),
		firstSubmit:  -1,
	}
	for i := range w.Jobs {
		j := &jobLog{}
		if untilPending {
			j.pending = make([]bool, w.Jobs[i].Instances)
		} else {
			j.placedAt = make([]time.Duration, w.Jobs[i].Instances)
		}
		l.byName[w.Jobs[i].Name] = j
	}
	if w.Tasks == 0 {
		l.closeDone()
	}
	return l
}

// begin sets the origin of the run's clock.
func (l *placementLog) begin() { l.start = time.Now() }

// submitting records that the job called name is about to be submitted.
func (l *placementLog) submitting(name string) {
	now := time.Since(l.start)
	l.mu.Lock()
	defer l.mu.Unlock()
	if j := l.byName[name]; j != nil {
		j.submitted = now
	}
	if l.firstSubmit < 0 {
		l.firstSubmit = now
	}
	l.submittedJobs++
}

func (l *placementLog) closeDone() {
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// CreateJob maps the stored job's id to its log by the job's name.
func (l *placementLog) CreateJob(ctx context.Context, job *model.Job) error {
	return l.CreateJobs(ctx, []*model.Job{job})[0]
}

// CreateJobs maps each stored job's id to its log by the job's name.
func (l *placementLog) CreateJobs(ctx context.Context, jobs []*model.Job) []error {
	errs := l.Store.CreateJobs(ctx, jobs)
	l.created(jobs, errs)
	return errs
}

// created maps the ids of the jobs stored (errs[i] nil) to their logs.
func (l *placementLog) created(jobs []*model.Job, errs []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, job := range jobs {
		if errs[i] != nil {
			continue
		}
		if j := l.byName[job.Spec.Name]; j != nil {
			l.byID[job.ID] = j
		}
	}
}

// WriteTasks writes through, then notes first placements and pendings.
func (l *placementLog) WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error {
	if err := l.Store.WriteTasks(ctx, tasks); err != nil {
		return err
	}
	l.note(tasks)
	return nil
}

// WritePass writes through (in one write when the store can), then notes
// the pass's first placements and pendings.
func (l *placementLog) WritePass(ctx context.Context, p store.Pass) error {
	err := store.WritePass(ctx, l.Store, p)
	l.created(p.NewJobs, p.NewJobErrs)
	if err != nil {
		return err
	}
	l.note(p.Tasks)
	return nil
}

// note records the first placements and pendings among tasks just stored.
func (l *placementLog) note(tasks []*model.TaskRuntime) {
	now := time.Since(l.start)
	l.mu.Lock()
	defer l.mu.Unlock()
	var (
		last model.JobID
		j    *jobLog
	)
	for _, t := range tasks {
		if t.ID.Job != last || j == nil {
			last, j = t.ID.Job, l.byID[t.ID.Job]
		}
		if j == nil {
			continue
		}
		i := int(t.ID.Instance)
		switch {
		case l.untilPending:
			if t.State == model.TaskPending && i < len(j.pending) && !j.pending[i] {
				j.pending[i] = true
				l.pending++
			}
		case t.Host != "" && i < len(j.placedAt) && j.placedAt[i] == 0:
			j.placedAt[i] = max(now, 1)
			l.placed++
			l.lastPlaced = now
		}
	}
	if (l.untilPending && l.pending >= l.want) || (!l.untilPending && l.placed >= l.want) {
		l.closeDone()
	}
}

// progress is what the log saw so far.
type progress struct {
	placed, pending, submittedJobs int
	// span is from the first submission to the last placement.
	span time.Duration
	// latencies are submit-to-placed times of the placed tasks, sorted.
	latencies []time.Duration
}

func (l *placementLog) progress() progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := progress{placed: l.placed, pending: l.pending, submittedJobs: l.submittedJobs}
	if l.placed > 0 && l.firstSubmit >= 0 {
		p.span = l.lastPlaced - l.firstSubmit
	}
	p.latencies = make([]time.Duration, 0, l.placed)
	for _, j := range l.byName {
		for _, at := range j.placedAt {
			if at > 0 {
				p.latencies = append(p.latencies, at-j.submitted)
			}
		}
	}
	slices.Sort(p.latencies)
	return p
}

// quantile of sorted values, nearest rank; zero for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
