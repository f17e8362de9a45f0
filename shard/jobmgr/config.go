package jobmgr

import (
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// configView is one config version of a job with its override index.
type configView struct {
	spec *model.JobSpec
	ovx  *model.OverrideIndex
}

func newConfigView(spec *model.JobSpec) *configView {
	return &configView{spec: spec, ovx: model.NewOverrideIndex(spec)}
}

// task returns what an instance runs under this config.
func (c *configView) task(instance uint32) model.TaskSpec {
	if len(c.spec.Overrides) == 0 {
		return c.spec.Task
	}
	return c.ovx.TaskFor(c.spec, instance)
}

// override is an instance's override under this config, nil if none.
func (c *configView) override(instance uint32) *model.InstanceOverride {
	if len(c.spec.Overrides) == 0 {
		return nil
	}
	return c.ovx.Lookup(instance)
}

// The loop asks for single fields of a task on every pass (placement, kills);
// they are read without merging the whole task (and copying its env).

// resources is what an instance asks for under this config.
func (c *configView) resources(instance uint32) model.Resources {
	if ov := c.override(instance); ov != nil {
		return ov.MergeResources(c.spec.Task.Resources)
	}
	return c.spec.Task.Resources
}

// constraints are where an instance may run under this config.
func (c *configView) constraints(instance uint32) []model.Constraint {
	if ov := c.override(instance); ov != nil && ov.Task.Constraints != nil {
		return ov.Task.Constraints
	}
	return c.spec.Task.Constraints
}

// current is the job's current config. A config view holds a copy of its
// spec: launches carry pointers into it to the host managers, which read
// them outside the engine's lock, so the job's own Spec (replaced by an
// update or a rollback) is never what they point at.
func (je *jobEntry) current() *configView {
	v := je.job.ConfigVersion
	if c := je.configs[v]; c != nil {
		return c
	}
	if je.configs == nil {
		je.configs = map[uint64]*configView{}
	}
	c := newConfigView(je.specCopy())
	je.configs[v] = c
	return c
}

// specCopy is a copy of the job's current spec for a config view.
func (je *jobEntry) specCopy() *model.JobSpec {
	spec := je.job.Spec
	return &spec
}

// config returns a config version the job's runs use; a version no longer
// held (or never loaded) falls back to the current one.
func (je *jobEntry) config(v uint64) *configView {
	if v == 0 {
		v = 1
	}
	if v != je.job.ConfigVersion {
		if c := je.configs[v]; c != nil {
			return c
		}
	}
	return je.current()
}

// taskResources is what a task's current run holds (or will hold): its
// instance's resources under the config the run started on.
func (je *jobEntry) taskResources(t *model.TaskRuntime) model.Resources {
	return je.config(t.ConfigVersion).resources(t.ID.Instance)
}

// killGrace is how long a task's run is given to stop.
func (je *jobEntry) killGrace(t *model.TaskRuntime) time.Duration {
	c := je.config(t.ConfigVersion)
	if ov := c.override(t.ID.Instance); ov != nil && ov.Task.KillGrace != 0 {
		return ov.Task.KillGrace
	}
	return c.spec.Task.KillGrace
}

// dropOldConfigs forgets config versions no run uses any more.
func (je *jobEntry) dropOldConfigs() {
	used := map[uint64]bool{je.job.ConfigVersion: true}
	for _, t := range je.tasks {
		if t != nil && !t.State.IsTerminal() {
			used[max(t.ConfigVersion, 1)] = true
		}
	}
	for v := range je.configs {
		if !used[v] {
			delete(je.configs, v)
		}
	}
}

// Tasks of a job that reached their end for good are not kept in memory
// while the job runs on: their slot holds a shared marker of their state
// and the store has the rest. Only tasks nothing will touch again go cold:
// ended tasks of jobs without gangs (a gang may run an ended member
// again). Readers that need a cold task read it from the store.
var coldMarks = func() (m [model.NumTaskStates]*model.TaskRuntime) {
	for s := range m {
		if st := model.TaskState(s); st.IsTerminal() {
			m[s] = &model.TaskRuntime{State: st, Goal: st}
		}
	}
	return m
}()

// isCold reports whether t is a cold task's marker.
func isCold(t *model.TaskRuntime) bool {
	return t != nil && int(t.State) < len(coldMarks) && coldMarks[t.State] == t
}

// coolDown drops stored tasks that have ended for good from memory.
func (e *Engine) coolDown(written []*model.TaskRuntime) {
	if e.cfg.KeepEndedTasks {
		return
	}
	for _, t := range written {
		if !t.State.IsTerminal() || isCold(t) {
			continue
		}
		je := e.jobs[t.ID.Job]
		// Instances beyond the job's count (being removed, or a
		// migration's surge instances) stay: they are run again or
		// forgotten soon.
		if je == nil || je.evicted || gangSize(&je.job.Spec) > 1 || int(t.ID.Instance) >= len(je.tasks) || je.tasks[t.ID.Instance] != t ||
			t.ID.Instance >= je.job.Spec.Instances {
			continue
		}
		je.tasks[t.ID.Instance] = coldMarks[t.State]
		je.cold++
		e.dropped.Add(1)
	}
}
