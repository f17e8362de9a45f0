package core

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/goalstate"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
)

// runs is how a task's runs start and end: the state a run moves through,
// its launch, its kill, and what its end does to the task (a retry, the
// gang's failure, a report), with the record of each run kept on the task.
type runs struct{ e *State }

// sendKill asks the plugin to kill a launched run, once.
func (rs runs) sendKill(je *Job, t *model.TaskRuntime, grace time.Duration) {
	if je.KillSent[t.RunID()] {
		return
	}
	je.KillSent[t.RunID()] = true
	rs.e.Effects = append(rs.e.Effects, Effect{Kill: &hostmgr.RunRef{Run: t.RunID(), Host: t.Host}, Grace: grace})
}

// endRun records the end of a task's current run and carries out what
// goalstate decides follows: a retry after backoff, a relaunch, a gang
// restart, or the end of the task.
func (rs runs) endRun(je *Job, t *model.TaskRuntime, s model.TaskState, reason, msg string, code int32, now time.Time) {
	rs.release(je, t)
	delete(je.KillSent, t.RunID())
	spec := &je.Job.Spec
	g := GangOf(je, t.ID.Instance)
	in := goalstate.RunEnd{
		Instance:   t.ID.Instance,
		Run:        t.Run,
		Reason:     t.Reason,
		Failures:   t.Failures,
		RetryAfter: t.RetryAfter,
		Stopping:   t.Goal == model.TaskKilled,
		Ended:      s,
		EndReason:  reason,
		Message:    msg,
		Type:       spec.Type,
		Policy:     rs.retryPolicy(spec),
		Gang:       GangSize(spec) > 1,
		Now:        now,
	}
	r := rs.e.Queue.Restarting[g]
	if r != nil {
		in.Restart = &goalstate.GangRestart{Reason: r.reason, Message: r.message}
	}
	d := goalstate.DecideRunEnd(in)
	t.Reason, t.Message, t.ExitCode = d.Reason, d.Message, code
	t.Failures, t.RetryAfter = d.Failures, d.RetryAfter
	t.CompletionTime = now
	switch d.Action {
	case goalstate.RunEndGangMember:
		rs.setState(je, t, d.State, now)
		r.remaining--
		rs.e.Queue.finishRestart(rs.e, je, g, now)
	case goalstate.RunEndFinish, goalstate.RunEndGiveUp:
		rs.setState(je, t, d.State, now)
		rs.e.Queue.Sched.Finished(g, t.ID)
		if d.StopGang {
			rs.failGang(je, g, t, now)
		}
	case goalstate.RunEndRelaunch:
		rs.e.Queue.Sched.Finished(g, t.ID)
		rs.recordRunEnd(t, s, now)
		rs.newRun(je, t, now)
	case goalstate.RunEndRestartGang:
		rs.setState(je, t, d.State, now)
		rs.e.Queue.restartGang(rs.e, je, g, d.GangReason, d.GangMessage, now)
	}
}

// recordRunEnd keeps the end of t's current run, in state, as an event of
// its own: a new run of t follows in the same pass, and the pass's one
// event for t will show only that.
func (rs runs) recordRunEnd(t *model.TaskRuntime, state model.TaskState, now time.Time) {
	if !state.IsTerminal() {
		return
	}
	cp := *t
	cp.State, cp.UpdateTime = state, now
	rs.e.runEnds = append(rs.e.runEnds, Event{Time: now, Job: t.ID.Job, Task: &cp})
}

// launchPlaced sends a job's placed tasks to their plugins. A task whose
// host is not known after LaunchGrace goes back to the queue.
func (rs runs) launchPlaced(je *Job, now time.Time) {
	if je.Counts[model.TaskPlaced] == 0 || rs.e.LaunchFenced {
		return
	}
	for _, t := range je.Tasks {
		if t.State != model.TaskPlaced {
			continue
		}
		if _, ok := rs.e.Plugins[t.Cluster]; !ok || !rs.e.Settings.Hosts.Has(t.Host) {
			if now.Sub(rs.e.placedAt[t.ID]) > rs.e.Settings.LaunchGrace {
				rs.e.Queue.restartGang(rs.e, je, GangOf(je, t.ID.Instance), model.ReasonHostLost, "host "+string(t.Host)+" was not reported in time", now)
			}
			continue
		}
		delete(rs.e.placedAt, t.ID)
		rs.setState(je, t, model.TaskLaunching, now)
		cfg := je.config(t.ConfigVersion)
		task := &cfg.Spec.Task
		if len(cfg.Spec.Overrides) > 0 {
			ts := cfg.Task(t.ID.Instance)
			task = &ts
		}
		env := launchEnv(t, rs.hostname(t.Host), rs.e.Settings.APIAddr)
		rs.e.Effects = append(rs.e.Effects, Effect{Launch: &hostmgr.Launch{
			Run:  t.RunID(),
			Host: t.Host,
			Task: task,
			Labels: map[string]string{
				"peloton.job":      string(t.ID.Job),
				"peloton.instance": fmt.Sprint(t.ID.Instance),
				"peloton.run":      fmt.Sprint(t.Run),
			},
			Env:       env,
			Ports:     t.Ports(),
			Volumes:   volumeMounts(t.ID, task),
			Gang:      rs.gangMembers(je, t, env),
			Revocable: je.Job.Spec.Revocable,
		}})
	}
}

// killJob drives every task of a stopped job to KILLED. A pass stops at
// most its change budget of tasks (the others follow in the next passes),
// so that stopping a huge job does not write, copy and keep in flight all
// of its tasks at once.
func (rs runs) killJob(je *Job, now time.Time) {
	// Tasks never created are simply not created.
	if je.Job.Status.TasksCreated < je.Job.Spec.Instances {
		je.Job.Spec.Instances = je.Job.Status.TasksCreated
		je.Dirty, je.Record = true, true
	}
	for _, t := range je.Tasks {
		if t.State.IsTerminal() {
			continue
		}
		if t.Goal != model.TaskKilled {
			if rs.e.ChangeBudget <= 0 {
				return
			}
			rs.e.ChangeBudget--
			t.Goal = model.TaskKilled
			rs.e.markDirty(je, t)
		}
		rs.killTask(je, t, je.killGrace(t), now)
	}
}

// newRun starts a fresh run of a task from INITIALIZED.
func (rs runs) newRun(je *Job, t *model.TaskRuntime, now time.Time) {
	if u := rs.e.Rollouts.runningUpdate(je); u != nil && u.InPlace && t.Host != "" {
		// During an in-place update every new run of an instance (a
		// restart after a failed probe too) tries its host first.
		if _, ok := je.prefer[t.ID.Instance]; !ok {
			if je.prefer == nil {
				je.prefer = map[uint32]placementPref{}
			}
			je.prefer[t.ID.Instance] = placementPref{Host: t.Host}
		}
	}
	if t.Run > 0 && t.State.IsTerminal() && !t.UpdateTime.Before(now) {
		// The run ended in this pass: the pass's event for the task will
		// show the new run, so the end gets an event of its own.
		rs.recordRunEnd(t, t.State, now)
	}
	t.Run++
	t.ConfigVersion = max(je.Job.ConfigVersion, 1)
	t.Host, t.Cluster = "", ""
	t.Health, t.Ready = model.HealthNone, model.HealthNone
	t.SetPorts(nil)
	t.StartTime, t.CompletionTime = time.Time{}, time.Time{}
	rs.setState(je, t, model.TaskInitialized, now)
	je.waiting = append(je.waiting, t.ID.Instance)
}

// killTask ends a task that has not launched at once, and asks the plugin
// to kill one that has.
func (rs runs) killTask(je *Job, t *model.TaskRuntime, grace time.Duration, now time.Time) {
	switch t.State {
	case model.TaskLaunching, model.TaskRunning:
		rs.sendKill(je, t, grace)
	default:
		g := GangOf(je, t.ID.Instance)
		if t.State == model.TaskPending {
			// A queued gang leaves the queue whole; its other members are
			// being killed by the same stop.
			rs.e.Queue.Sched.Remove(g)
		} else {
			rs.e.Queue.Sched.Finished(g, t.ID)
		}
		rs.release(je, t)
		t.Reason, t.Message = model.ReasonKilled, "stopped before it was launched"
		t.CompletionTime = now
		rs.setState(je, t, model.TaskKilled, now)
	}
}

// Backoff is the engine's one rule for the wait before a task runs again.
func (rs runs) Backoff() goalstate.Backoff {
	return goalstate.Backoff{Base: rs.e.Settings.RetryBackoff, Max: rs.e.Settings.MaxRetryBackoff}
}

// setState moves a task to a new state, keeping counts, dirty marks and
// events in step.
func (rs runs) setState(je *Job, t *model.TaskRuntime, s model.TaskState, now time.Time) {
	if t.State == s {
		return
	}
	je.Counts[t.State]--
	je.Counts[s]++
	t.State = s
	t.UpdateTime = now
	rs.e.markDirty(je, t)
}

// failGang stops the rest of a gang after a member failed for good.
func (rs runs) failGang(je *Job, g resmgr.GangID, failed *model.TaskRuntime, now time.Time) {
	for _, m := range je.members(g) {
		if m == failed || m.State.IsTerminal() {
			continue
		}
		m.Goal = model.TaskKilled
		m.Reason = reasonGangFailed
		m.Message = fmt.Sprintf("instance %d of the gang failed", failed.ID.Instance)
		rs.e.markDirty(je, m)
		rs.killTask(je, m, je.killGrace(m), now)
	}
}

// release frees what a run held on its host.
func (rs runs) release(je *Job, t *model.TaskRuntime) {
	if t.State.HoldsResources() {
		rs.e.Settings.Hosts.Release(t.Host, je.TaskResources(t), je.Job.Spec.Revocable)
		rs.e.Settings.Hosts.ReleasePorts(t.Host, t.Ports())
		rs.e.Index.released[t.Host] = true
		if je.limited(t) {
			rs.e.Index.counts.Add(t.Host, t.ID.Job, -1)
		}
	}
	delete(rs.e.placedAt, t.ID)
}

// retryPolicy is how a job's failed runs are retried.
func (rs runs) retryPolicy(spec *model.JobSpec) goalstate.RetryPolicy {
	return goalstate.RetryPolicy{
		MaxAttempts: spec.MaxAttempts,
		Backoff:     rs.Backoff(),
		GangRestart: spec.GangRestart,
	}
}

// gangMembers lists the placed members of t's gang, with their hosts and
// ports, and hands the list to the run's environment as well.
func (rs runs) gangMembers(je *Job, t *model.TaskRuntime, env map[string]string) []hostmgr.GangMember {
	if GangSize(&je.Job.Spec) <= 1 {
		return nil
	}
	members := je.members(GangOf(je, t.ID.Instance))
	out := make([]hostmgr.GangMember, 0, len(members))
	hosts := make([]string, 0, len(members))
	for _, m := range members {
		name := rs.hostname(m.Host)
		out = append(out, hostmgr.GangMember{Instance: m.ID.Instance, Host: m.Host, Hostname: name, Ports: m.Ports()})
		hosts = append(hosts, name)
	}
	first := uint32(0)
	if len(members) > 0 {
		first = members[0].ID.Instance
	}
	env["PELOTON_GANG_SIZE"] = strconv.Itoa(len(out))
	env["PELOTON_GANG_INDEX"] = strconv.FormatUint(uint64(t.ID.Instance-first), 10)
	env["PELOTON_GANG_HOSTS"] = strings.Join(hosts, ",")
	if b, err := json.Marshal(out); err == nil {
		env["PELOTON_GANG"] = string(b)
	}
	return out
}

// hostname is a host's name as its plugin reported it, or its id.
func (rs runs) hostname(id model.HostID) string {
	if v, ok := rs.e.Settings.Hosts.View(id); ok && v.Hostname != "" {
		return v.Hostname
	}
	return string(id)
}
