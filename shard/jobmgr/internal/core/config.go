package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// The loop asks for single fields of a task on every pass (placement, kills);
// they are read without merging the whole task (and copying its env).

// ConfigView is one config version of a job with its override index.
type ConfigView struct {
	Spec *model.JobSpec
	ovx  *model.OverrideIndex
}

func NewConfigView(spec *model.JobSpec) *ConfigView {
	return &ConfigView{Spec: spec, ovx: model.NewOverrideIndex(spec)}
}

// Task returns what an instance runs under this config.
func (c *ConfigView) Task(instance uint32) model.TaskSpec {
	if len(c.Spec.Overrides) == 0 {
		return c.Spec.Task
	}
	return c.ovx.TaskFor(c.Spec, instance)
}

// override is an instance's override under this config, nil if none.
func (c *ConfigView) override(instance uint32) *model.InstanceOverride {
	if len(c.Spec.Overrides) == 0 {
		return nil
	}
	return c.ovx.Lookup(instance)
}

// resources is what an instance asks for under this config.
func (c *ConfigView) resources(instance uint32) model.Resources {
	if ov := c.override(instance); ov != nil {
		return ov.MergeResources(c.Spec.Task.Resources)
	}
	return c.Spec.Task.Resources
}

// constraints are where an instance may run under this config.
func (c *ConfigView) constraints(instance uint32) []model.Constraint {
	if ov := c.override(instance); ov != nil && ov.Task.Constraints != nil {
		return ov.Task.Constraints
	}
	return c.Spec.Task.Constraints
}

// Current is the job's Current config. A config view holds a copy of its
// spec: launches carry pointers into it to the host managers, which read
// them outside the engine's lock, so the job's own Spec (replaced by an
// update or a rollback) is never what they point at.
func (je *Job) Current() *ConfigView {
	v := je.Job.ConfigVersion
	if c := je.Configs[v]; c != nil {
		return c
	}
	if je.Configs == nil {
		je.Configs = map[uint64]*ConfigView{}
	}
	c := NewConfigView(je.SpecCopy())
	je.Configs[v] = c
	return c
}

// SpecCopy is a copy of the job's current spec for a config view.
func (je *Job) SpecCopy() *model.JobSpec {
	spec := je.Job.Spec
	return &spec
}

// config returns a config version the job's runs use; a version no longer
// held (or never loaded) falls back to the current one.
func (je *Job) config(v uint64) *ConfigView {
	if v == 0 {
		v = 1
	}
	if v != je.Job.ConfigVersion {
		if c := je.Configs[v]; c != nil {
			return c
		}
	}
	return je.Current()
}

// TaskResources is what a task's current run holds (or will hold): its
// instance's resources under the config the run started on.
func (je *Job) TaskResources(t *model.TaskRuntime) model.Resources {
	return je.config(t.ConfigVersion).resources(t.ID.Instance)
}

// killGrace is how long a task's run is given to stop.
func (je *Job) killGrace(t *model.TaskRuntime) time.Duration {
	c := je.config(t.ConfigVersion)
	if ov := c.override(t.ID.Instance); ov != nil && ov.Task.KillGrace != 0 {
		return ov.Task.KillGrace
	}
	return c.Spec.Task.KillGrace
}

// dropOldConfigs forgets config versions no run uses any more.
func (je *Job) dropOldConfigs() {
	used := map[uint64]bool{je.Job.ConfigVersion: true}
	for _, t := range je.Tasks {
		if t != nil && !t.State.IsTerminal() {
			used[max(t.ConfigVersion, 1)] = true
		}
	}
	for v := range je.Configs {
		if !used[v] {
			delete(je.Configs, v)
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

// IsCold reports whether t is a cold task's marker.
func IsCold(t *model.TaskRuntime) bool {
	return t != nil && int(t.State) < len(coldMarks) && coldMarks[t.State] == t
}
