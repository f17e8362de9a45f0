package jobmgr

import (
	"context"
	"fmt"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/rollout"
)

// recoveryShell rebuilds a leader's state from the store when its engine
// starts: the pools, the jobs with their tasks, configs and running
// updates (read with no lock held, then installed in the core), and the
// runs the store says were launched, which each plugin is asked about.
type recoveryShell struct{ e *Engine }

// run loads jobs and tasks from the store and rebuilds the in-memory
// state: queues, counts and host allocations. The store is read first,
// with no lock held; the state is then built under the lock.
func (s *recoveryShell) run(ctx context.Context) error {
	pools, err := s.e.pools.read(ctx)
	if err != nil {
		return err
	}
	jobs, err := s.e.cfg.Store.ListJobs(ctx)
	if err != nil {
		return err
	}
	loaded := make([]loadedJob, 0, len(jobs))
	for _, j := range jobs {
		l, err := s.loadJob(ctx, j)
		if err != nil {
			return err
		}
		loaded = append(loaded, l)
	}

	s.e.hold()
	defer s.e.mu.Unlock()
	if err := s.e.pools.install(pools); err != nil {
		return err
	}
	ntasks := 0
	for _, l := range loaded {
		ntasks += s.installJob(l)
	}
	snaps := make([]*model.Job, 0, len(s.e.c.Jobs))
	for _, je := range s.e.c.Jobs {
		snaps = append(snaps, s.e.c.SnapshotJob(je))
	}
	s.e.view.add(snaps...)
	s.e.view.merge()
	s.e.c.Log.Info("recovered state", "jobs", len(jobs), "tasks", ntasks)
	return nil
}

// loadedJob is a job as recover read it: its entry with its tasks, and its
// running update.
type loadedJob struct {
	je     *core.Job
	update *model.Update
}

// loadJob reads what a recovered job needs from the store: for a job that
// has not finished, its tasks, the configs its runs use and its running
// update. No lock is held.
func (s *recoveryShell) loadJob(ctx context.Context, j *model.Job) (loadedJob, error) {
	je := &core.Job{Job: j, KillSent: map[model.RunID]bool{}}
	if j.Status.State.IsTerminal() {
		return loadedJob{je: je}, nil
	}
	tasks, err := s.e.cfg.Store.ListTasks(ctx, j.ID)
	if err != nil {
		return loadedJob{}, err
	}
	j.ConfigVersion = max(j.ConfigVersion, 1)
	je.Tasks = make([]*model.TaskRuntime, j.Status.TasksCreated)
	for _, t := range tasks {
		if int(t.ID.Instance) < len(je.Tasks) {
			je.Tasks[t.ID.Instance] = t
		} else {
			je.RememberRemoved(t) // an update removed it
		}
	}
	// Runs hold what their own config asked for.
	if err := s.e.updates.loadRunConfigs(ctx, je); err != nil {
		return loadedJob{}, err
	}
	u, err := s.e.updates.read(ctx, j)
	if err != nil {
		return loadedJob{}, err
	}
	// A rollback needs the config it goes back to: read now, so that no
	// pass reads the store under the lock for it.
	if u != nil && u.FromVersion != j.ConfigVersion && je.Configs[u.FromVersion] == nil {
		spec, err := s.e.cfg.Store.GetJobConfig(ctx, j.ID, u.FromVersion)
		if err != nil {
			return loadedJob{}, fmt.Errorf("config %d of job %s: %w", u.FromVersion, j.ID, err)
		}
		if je.Configs == nil {
			je.Configs = map[uint64]*core.ConfigView{}
		}
		je.Configs[u.FromVersion] = core.NewConfigView(spec)
	}
	return loadedJob{je: je, update: u}, nil
}

// installJob puts a recovered job in the engine's state and returns how
// many of its tasks it took in; callers hold the engine's lock. A finished job keeps
// only its counts: the store has its tasks.
func (s *recoveryShell) installJob(l loadedJob) int {
	je, j := l.je, l.je.Job
	if j.Status.State.IsTerminal() {
		je.Evicted = true
		for st, n := range j.Status.TaskStates {
			if int(st) < len(je.Counts) {
				je.Counts[st] = n
			}
		}
		s.e.c.AddJob(je)
		return 0
	}
	if j.Spec.Type == model.JobDaemon {
		j.Spec.Instances = j.Status.TasksCreated // made per host
		s.e.c.Daemons.HostsChanged = true
	}
	for i := range je.Tasks {
		s.e.c.InstallTask(je, i)
	}
	if l.update != nil {
		je.Current() // the target's own count, before extra canaries raise the job's
		s.e.c.Rollouts[j.ID] = rollout.Recover(l.update, je.Tasks, core.GangSize(&j.Spec))
		s.e.c.Rollouts.SyncExtraCanaries(je, s.e.c.Rollouts[j.ID])
		s.e.view.setUpdate(l.update)
	}
	s.e.c.AddJob(je)
	s.e.c.Visit(je)
	if j.Spec.Revocable {
		s.e.c.Revocable.Jobs[j.ID] = true
	}
	s.e.c.Queue.Sched.SetJobLimit(j.ID, j.Spec.MaxRunning)
	s.e.c.Queue.RecoverGangs(&s.e.c, je)
	return len(je.Tasks)
}

// reconcile asks each plugin for the state of the runs the store says are
// launched, so nothing running is forgotten after a restart.
func (s *recoveryShell) reconcile(ctx context.Context) {
	s.e.hold()
	byCluster := map[string][]hostmgr.RunRef{}
	for _, je := range s.e.c.Jobs {
		for _, t := range je.Tasks {
			if t.State == model.TaskLaunching || t.State == model.TaskRunning {
				byCluster[t.Cluster] = append(byCluster[t.Cluster], hostmgr.RunRef{Run: t.RunID(), Host: t.Host})
			}
		}
	}
	s.e.mu.Unlock()
	for cluster, refs := range byCluster {
		p, ok := s.e.c.Plugins[cluster]
		if !ok {
			// The cluster is gone from the configuration: its runs are lost.
			var sts []hostmgr.TaskStatus
			for _, r := range refs {
				sts = append(sts, hostmgr.TaskStatus{Run: r.Run, Host: r.Host, State: model.TaskLost,
					Reason: model.ReasonHostLost, Message: "cluster " + cluster + " is not configured", Time: s.e.cfg.Clock.Now()})
			}
			s.e.pushStatuses(sts)
			continue
		}
		if err := p.Reconcile(ctx, refs); err != nil {
			s.e.c.Log.Error("reconcile failed", "cluster", cluster, "err", err)
		}
	}
}
