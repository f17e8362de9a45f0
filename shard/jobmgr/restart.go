package jobmgr

import (
	"context"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// ReasonRestarted marks runs an operator restarted.
const ReasonRestarted = "RESTARTED"

// restartTasks kills the current runs of instances of a running job and
// starts new ones, a gang whole; the runs keep their config. A long-running
// job's SLA is asked first (refused with ErrSLA unless force). An instance
// that ended for good or is being stopped is refused: there is nothing to
// restart. It returns the instances as stored by the pass that took the
// restart.
func (e *Engine) restartTasks(ctx context.Context, id model.JobID, instances []uint32, force bool) ([]*model.TaskRuntime, error) {
	if len(instances) == 0 {
		return nil, fmt.Errorf("instances: name at least one instance to restart: %w", ErrInvalid)
	}
	e.lock()
	gangs, err := e.restartableGangs(id, instances, force)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	je, now := e.jobs[id], e.cfg.Clock.Now()
	for _, g := range gangs {
		e.restartGang(je, g, ReasonRestarted, "restarted by an operator", now)
	}
	e.visit(je)
	out := make([]*model.TaskRuntime, 0, len(instances))
	for _, g := range gangs {
		for _, t := range je.members(g) {
			cp := *t
			out = append(out, &cp)
		}
	}
	wait := e.awaitWrite()
	e.mu.Unlock()
	if err := wait(ctx); err != nil {
		return nil, fmt.Errorf("store the restart of job %s: %w", id, err)
	}
	return out, nil
}

// restartableGangs are the gangs of instances, when every one may be
// restarted now; callers hold e.mu.
func (e *Engine) restartableGangs(id model.JobID, instances []uint32, force bool) ([]resmgr.GangID, error) {
	je := e.jobs[id]
	switch {
	case je == nil:
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	case je.evicted || je.job.Status.State.IsTerminal() || je.job.Status.Killed:
		return nil, fmt.Errorf("job %s is %s: only a running job's tasks can be restarted: %w", id, je.job.Status.State, ErrJobFinished)
	}
	var gangs []resmgr.GangID
	for _, i := range instances {
		if int(i) >= len(je.tasks) || i >= je.job.Spec.Instances {
			return nil, fmt.Errorf("instance %d of job %s: %w", i, id, ErrNotFound)
		}
		t := je.tasks[i]
		if isCold(t) || t.State.IsTerminal() || t.Goal == model.TaskKilled {
			return nil, fmt.Errorf("instances: instance %d of job %s is %s with goal %s: there is no run to restart: %w", i, id, t.State, t.Goal, ErrInvalid)
		}
		if g := gangOf(je, i); !slices.Contains(gangs, g) {
			gangs = append(gangs, g)
		}
	}
	if !force && je.job.Spec.LongRunning() {
		if err := e.admitTakeDown(je, instances, "restarting", "restart"); err != nil {
			return nil, err
		}
	}
	return gangs, nil
}
