package core

import (
	"fmt"
	"strconv"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

// ports are the named ports an instance asks for under this config.
func (c *ConfigView) ports(instance uint32) []model.PortSpec {
	if ov := c.override(instance); ov != nil && ov.Task.Ports != nil {
		return ov.Task.Ports
	}
	return c.Spec.Task.Ports
}

// runsImage reports whether an instance runs in a container image.
func (c *ConfigView) runsImage(instance uint32) bool {
	if ov := c.override(instance); ov != nil && ov.Task.Container != nil {
		return true
	}
	return c.Spec.Task.Container != nil
}

var needsImages = model.Constraint{Key: model.LabelRunsImages, Op: model.OpEquals, Values: []string{"true"}}

// placementTask describes a task to placement: its resources, its label
// constraints, and the constraints the shard adds: hosts that run images
// for a task with one, its own host for a pinned task (a stateful
// instance's volumes, a daemon's host).
func (je *Job) placementTask(t *model.TaskRuntime, ref, gang int) placement.Task {
	spec := &je.Job.Spec
	cfg := je.config(t.ConfigVersion)
	cons := cfg.constraints(t.ID.Instance)
	image := cfg.runsImage(t.ID.Instance)
	pin := t.PinnedHost()
	if pin == "" {
		pin = je.prefer[t.ID.Instance].Host // tried once; any host after
	}
	if image || pin != "" {
		extra := make([]model.Constraint, len(cons), len(cons)+2)
		copy(extra, cons)
		if image {
			extra = append(extra, needsImages)
		}
		if pin != "" {
			extra = append(extra, model.Constraint{Key: model.LabelHost, Op: model.OpEquals, Values: []string{string(pin)}})
		}
		cons = extra
	}
	ports := cfg.ports(t.ID.Instance)
	maxPerHost := int(spec.MaxPerHost)
	for _, p := range ports {
		if p.Port != 0 {
			maxPerHost = 1 // two instances cannot hold the same fixed port
			break
		}
	}
	var spread []placement.SpreadLimit
	for _, s := range spec.Spread {
		spread = append(spread, placement.SpreadLimit{Key: s.Label, Max: int(s.Max)})
	}
	return placement.Task{
		Ref:         ref,
		Gang:        gang,
		Job:         t.ID.Job,
		Resources:   je.TaskResources(t),
		Constraints: cons,
		Ports:       len(ports),
		MaxPerHost:  maxPerHost,
		Spread:      spread,
		Strategy:    placement.StrategyFor(spec.Type),
	}
}

// launchEnv is what the shard adds to a run's environment: who it is and
// where its ports are.
func launchEnv(t *model.TaskRuntime, hostname, apiAddr string) map[string]string {
	env := map[string]string{
		"PELOTON_JOB_ID":      string(t.ID.Job),
		"PELOTON_INSTANCE_ID": strconv.FormatUint(uint64(t.ID.Instance), 10),
		"PELOTON_RUN_ID":      string(t.RunID()),
		"PELOTON_HOST":        hostname,
	}
	if apiAddr != "" {
		// A task that drives other jobs (a driver launching its executors)
		// calls the API here.
		env["PELOTON_API_ADDR"] = apiAddr
	}
	for _, p := range t.Ports() {
		env[model.PortEnv(p.Name)] = strconv.FormatUint(uint64(p.Port), 10)
	}
	return env
}

// volumeMounts are the persistent volumes of a stateful instance.
func volumeMounts(id model.TaskID, task *model.TaskSpec) []hostmgr.VolumeMount {
	if len(task.Volumes) == 0 {
		return nil
	}
	out := make([]hostmgr.VolumeMount, len(task.Volumes))
	for i, v := range task.Volumes {
		out[i] = hostmgr.VolumeMount{ID: model.VolumeID(id, v.Name), Volume: v}
	}
	return out
}

// applyHealth records what a run's probes say. A long-running instance
// whose health check says UNHEALTHY is restarted, after a backoff that
// grows with its failures, as a crashed one would be.
func (e *State) applyHealth(je *Job, t *model.TaskRuntime, st hostmgr.TaskStatus, now time.Time) {
	changed := false
	if st.Health != model.HealthNone && st.Health != t.Health {
		t.Health, changed = st.Health, true
	}
	if st.Ready != model.HealthNone && st.Ready != t.Ready {
		t.Ready, changed = st.Ready, true
	}
	if !changed {
		return
	}
	t.UpdateTime = now
	e.markDirty(je, t)
	if st.Health != model.HealthUnhealthy || !je.Job.Spec.LongRunning() || t.Goal == model.TaskKilled || t.State != model.TaskRunning {
		return
	}
	g := GangOf(je, t.ID.Instance)
	if e.Queue.Restarting[g] != nil {
		return
	}
	t.Failures++
	backoff := runs{e}.Backoff().Delay(t.Failures)
	t.RetryAfter = now.Add(backoff)
	msg := fmt.Sprintf("run %d failed its health check; restarting after %s", t.Run, backoff)
	if st.Message != "" {
		msg = fmt.Sprintf("run %d failed its health check (%s); restarting after %s", t.Run, st.Message, backoff)
	}
	e.Log.Info("restarting unhealthy instance", "task", t.ID, "run", t.Run)
	e.Queue.restartGang(e, je, g, model.ReasonUnhealthy, msg, now)
}

// initHealth marks the probes of a run that just started as UNKNOWN: no
// verdict yet.
func (c *ConfigView) initHealth(t *model.TaskRuntime) {
	health, ready := c.Spec.Task.HealthCheck, c.Spec.Task.Readiness
	if ov := c.override(t.ID.Instance); ov != nil {
		if ov.Task.HealthCheck != nil {
			health = ov.Task.HealthCheck
		}
		if ov.Task.Readiness != nil {
			ready = ov.Task.Readiness
		}
	}
	if health != nil && t.Health == model.HealthNone {
		t.Health = model.HealthUnknown
	}
	if ready != nil && t.Ready == model.HealthNone {
		t.Ready = model.HealthUnknown
	}
}
