package memstore

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// maxConstraintDepth bounds how deeply AllOf/AnyOf may nest. It matches the
// bound of the durable backends and stops a self-referencing constraint
// (possible through slice aliasing) from recursing forever.
const maxConstraintDepth = 32

var errConstraintDepth = fmt.Errorf("%w: constraints nested deeper than %d", store.ErrInvalid, maxConstraintDepth)

// normalTime is how every backend returns a time: UTC, no monotonic reading.
func normalTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

func cloneConstraints(cs []model.Constraint, depth int) ([]model.Constraint, error) {
	if cs == nil {
		return nil, nil
	}
	if depth > maxConstraintDepth {
		return nil, errConstraintDepth
	}
	out := make([]model.Constraint, len(cs))
	for i := range cs {
		c := &cs[i]
		allOf, err := cloneConstraints(c.AllOf, depth+1)
		if err != nil {
			return nil, err
		}
		anyOf, err := cloneConstraints(c.AnyOf, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = model.Constraint{
			Key:    c.Key,
			Op:     c.Op,
			Values: slices.Clone(c.Values),
			AllOf:  allOf,
			AnyOf:  anyOf,
		}
	}
	return out, nil
}

// cloneJob returns a deep copy of j with normalised times.
func cloneJob(j *model.Job) (*model.Job, error) {
	out := *j
	spec := &out.Spec
	spec.Labels = maps.Clone(j.Spec.Labels)
	spec.Task.Args = slices.Clone(j.Spec.Task.Args)
	spec.Task.Env = maps.Clone(j.Spec.Task.Env)
	cs, err := cloneConstraints(j.Spec.Task.Constraints, 1)
	if err != nil {
		return nil, err
	}
	spec.Task.Constraints = cs
	st := &out.Status
	st.TaskStates = maps.Clone(j.Status.TaskStates)
	st.CreateTime = normalTime(st.CreateTime)
	st.StartTime = normalTime(st.StartTime)
	st.CompletionTime = normalTime(st.CompletionTime)
	return &out, nil
}

// cloneTask returns a copy of t with normalised times; TaskRuntime holds no
// reference types, so a value copy is deep.
func cloneTask(t *model.TaskRuntime) *model.TaskRuntime {
	out := *t
	out.StartTime = normalTime(out.StartTime)
	out.CompletionTime = normalTime(out.CompletionTime)
	out.UpdateTime = normalTime(out.UpdateTime)
	out.RetryAfter = normalTime(out.RetryAfter)
	return &out
}

// clonePool returns a copy of p with a normalised time; Pool holds no
// reference types, so a value copy is deep.
func clonePool(p *model.Pool) *model.Pool {
	out := *p
	out.CreateTime = normalTime(out.CreateTime)
	return &out
}
