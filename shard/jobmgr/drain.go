package jobmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Reasons of runs a host drain stopped.
const (
	ReasonHostDrained = "HOST_DRAINED"
)

// ErrHostState: the host is not in a state the operation needs.
var ErrHostState = fmt.Errorf("host state: %w", ErrInvalid)

// drainEvery bounds how often the drain step scans running tasks.
const drainEvery = 250 * time.Millisecond

// drainAction is what a drain does with one run on a draining host, a
// pure function of the run's job, the drain and the time.
type drainAction uint8

const (
	drainWait drainAction = iota // let it run on (a batch run before the deadline)
	drainMove                    // take it down under the job's SLA; it runs again elsewhere
	drainKill                    // take it down now: revocable work, a deadline passed, a forced down
)

// drainDecision decides what happens to a run of a job of spec on a
// draining host whose record is rec.
func drainDecision(spec *model.JobSpec, rec *model.HostRecord, now time.Time) drainAction {
	switch {
	case rec.Down:
		return drainKill // forced down: nothing waits
	case spec.Revocable:
		return drainKill
	case spec.Type == model.JobDaemon:
		return drainWait // the daemon's own loop stops it
	case spec.LongRunning():
		return drainMove
	case !rec.DrainDeadline.IsZero() && !now.Before(rec.DrainDeadline):
		return drainKill
	}
	return drainWait
}

// drainStep moves what runs on draining hosts: revocable runs and runs past
// the drain's deadline are killed at once; long-running instances are
// restarted elsewhere as their job's SLA allows, one gang at a time per
// job and pass.
func (e *Engine) drainStep(now time.Time) {
	if now.Sub(e.lastDrain) < drainEvery {
		return
	}
	e.lastDrain = now
	recs := e.drainingHosts()
	if len(recs) == 0 {
		return
	}
	type slaState struct {
		limit uint32
		view  []sla.Instance
	}
	views := map[model.JobID]*slaState{}
	for _, je := range e.sortedJobs() {
		if je.evicted || je.job.Status.State.IsTerminal() {
			continue
		}
		for _, t := range je.tasks {
			if t == nil || isCold(t) || !t.State.HoldsResources() {
				continue
			}
			rec := recs[t.Host]
			if rec == nil {
				continue
			}
			g := gangOf(je, t.ID.Instance)
			if e.restarting[g] != nil {
				continue
			}
			msg := "host " + string(t.Host) + " is draining"
			switch drainDecision(&je.job.Spec, rec, now) {
			case drainWait:
				continue
			case drainKill:
				e.restartGang(je, g, ReasonHostDrained, msg, now)
			case drainMove:
				st := views[je.job.ID]
				if st == nil {
					st = &slaState{limit: slaLimit(&je.job.Spec), view: e.slaView(je)}
					views[je.job.ID] = st
				}
				if ok, why := admitDisruption(je, g, st.limit, st.view); !ok {
					e.noteWaiting(je, t, msg+"; "+why, now)
					continue
				}
				e.restartGang(je, g, ReasonHostDrained, msg+"; moving elsewhere", now)
			}
			e.log.Info("drain stops a run", "task", t.ID, "host", t.Host)
		}
	}
}

// noteWaiting records on a task why a disruption of it waits.
func (e *Engine) noteWaiting(je *jobEntry, t *model.TaskRuntime, msg string, now time.Time) {
	if t.Message != msg {
		t.Message, t.UpdateTime = msg, now
		e.markDirty(je, t)
	}
}

// drainingHosts returns the records of hosts being drained (or marked
// down) that still hold runs of the shard.
func (e *Engine) drainingHosts() map[model.HostID]*model.HostRecord {
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	var out map[model.HostID]*model.HostRecord
	for id, r := range e.hosts.recs {
		if !r.Draining {
			continue
		}
		if v, ok := e.cfg.Hosts.View(id); !ok || v.Tasks == 0 {
			continue
		}
		if out == nil {
			out = map[model.HostID]*model.HostRecord{}
		}
		out[id] = r
	}
	return out
}

// MarkHostDown takes a drained host down for maintenance. A host that
// still runs something of the shard is refused, unless force, which kills
// what runs there.
func (e *Engine) MarkHostDown(ctx context.Context, id model.HostID, force bool) (*model.HostRecord, error) {
	v, known := e.cfg.Hosts.View(id)
	e.hosts.mu.Lock()
	rec := e.hosts.recs[id]
	e.hosts.mu.Unlock()
	switch {
	case rec == nil && !known:
		return nil, fmt.Errorf("host %s: %w", id, ErrNotFound)
	case rec == nil || !rec.Draining:
		if !force {
			return nil, fmt.Errorf("host %s is UP: drain it first (peloton host drain), or use force: %w", id, ErrHostState)
		}
	case known && v.Tasks > 0 && !force:
		return nil, fmt.Errorf("host %s is DRAINING and still runs %d tasks: wait for DRAINED, or use force: %w", id, v.Tasks, ErrHostState)
	}
	if rec == nil || !rec.Draining {
		if _, err := e.setDrain(ctx, id, true, "marked down", 0); err != nil {
			return nil, err
		}
	}
	e.hosts.mu.Lock()
	cp := *e.hosts.recs[id]
	cp.Down = true
	e.hosts.mu.Unlock()
	if err := e.cfg.Store.PutHosts(ctx, []*model.HostRecord{&cp}); err != nil {
		return nil, fmt.Errorf("store host %s: %w", id, err)
	}
	e.hosts.mu.Lock()
	e.hosts.recs[id] = &cp
	e.hosts.mu.Unlock()
	e.log.Info("host marked down", "host", id, "force", force)
	e.wake()
	return e.hostRecord(&cp), nil
}

