package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

func CopyJob(j *model.Job) *model.Job {
	cp := *j
	cp.Status.TaskStates = make(map[model.TaskState]uint32, len(j.Status.TaskStates))
	for k, v := range j.Status.TaskStates {
		cp.Status.TaskStates[k] = v
	}
	if p := j.Status.Periodic; p != nil {
		pc := *p
		cp.Status.Periodic = &pc
	}
	return &cp
}

func (e *State) SnapshotJob(je *Job) *model.Job {
	cp := CopyJob(je.Job)
	cp.Status.TaskStates = countsMap(&je.Counts)
	return cp
}

// StopInstances stops instances of a job (a gang whole), under the job's
// SLA unless forced, and returns copies of their tasks as they are now,
// with the instances of those that left memory, in order (the caller
// reads them back: warmUp).
func (e *State) StopInstances(je *Job, instances []uint32, force bool) (out []*model.TaskRuntime, cold []int, err error) {
	for _, i := range instances {
		if int(i) >= len(je.Tasks) {
			return nil, nil, fmt.Errorf("instance %d of job %s: %w", i, je.Job.ID, ErrNotFound)
		}
	}
	instances = wholeGangs(je, instances)
	if !force && je.Job.Spec.LongRunning() {
		if err := (disruptions{e}).admitStops(je, instances); err != nil {
			return nil, nil, err
		}
	}
	for _, i := range instances {
		t := je.Tasks[i]
		if !t.State.IsTerminal() {
			t.Goal = model.TaskKilled
			e.markDirty(je, t)
			runs{e}.killTask(je, t, je.killGrace(t), e.Now)
		}
		if IsCold(t) {
			cold = append(cold, int(i))
		}
		cp := *t
		out = append(out, &cp)
	}
	return out, cold, nil
}

// wholeGangs returns the instances of every gang that one of instances
// is in: a gang is stopped whole.
func wholeGangs(je *Job, instances []uint32) []uint32 {
	if GangSize(&je.Job.Spec) <= 1 {
		return instances
	}
	var seen []resmgr.GangID
	var all []uint32
	for _, i := range instances {
		if g := GangOf(je, i); !slices.Contains(seen, g) {
			seen = append(seen, g)
			all = append(all, gangIDs(je, g)...) // a job's last gang may be short
		}
	}
	return all
}

// Stop marks a job to be stopped, and says whether it was not already:
// the next pass kills its tasks.
func (e *State) Stop(je *Job) bool {
	if je.Job.Status.Killed || je.Job.Status.State.IsTerminal() {
		return false
	}
	je.Job.Status.Killed = true
	je.Record = true
	e.Visit(je)
	e.Log.Info("job stop requested", "job", je.Job.ID)
	return true
}

// ErrSLA: the operation would take more of a job's instances down than
// its SLA allows.
var ErrSLA = errors.New("would break the job's SLA")
