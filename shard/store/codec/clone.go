package codec

import (
	"maps"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// CloneSpec returns a deep copy of s: no slice or map of the copy is
// shared with s (strings are, being immutable). It fails with
// ErrConstraintDepth where constraints nest deeper than the codec stores
// or contain themselves.
func CloneSpec(s *model.JobSpec) (*model.JobSpec, error) {
	out := *s
	out.Labels = maps.Clone(s.Labels)
	out.Spread = slices.Clone(s.Spread)
	if s.SLA != nil {
		sla := *s.SLA
		out.SLA = &sla
	}
	out.Clusters = s.Clusters.Clone()
	if s.Schedule != nil {
		sc := *s.Schedule
		out.Schedule = &sc
	}
	if err := cloneTaskSpec(&out.Task); err != nil {
		return nil, err
	}
	if s.Overrides != nil {
		out.Overrides = make([]model.InstanceOverride, len(s.Overrides))
		for i := range s.Overrides {
			o := &out.Overrides[i]
			*o = s.Overrides[i]
			o.Instances = slices.Clone(o.Instances)
			if err := cloneTaskSpec(&o.Task); err != nil {
				return nil, err
			}
		}
	}
	return &out, nil
}

// cloneTaskSpec replaces the slices and maps of *t by copies.
func cloneTaskSpec(t *model.TaskSpec) error {
	t.Args = slices.Clone(t.Args)
	t.Env = maps.Clone(t.Env)
	cloneWorkload(t)
	cs, err := cloneConstraints(t.Constraints, 1)
	t.Constraints = cs
	return err
}

func cloneConstraints(cs []model.Constraint, depth int) ([]model.Constraint, error) {
	if cs == nil {
		return nil, nil
	}
	if depth > maxConstraintDepth {
		return nil, ErrConstraintDepth
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
		out[i] = model.Constraint{Key: c.Key, Op: c.Op, Values: slices.Clone(c.Values), AllOf: allOf, AnyOf: anyOf}
	}
	return out, nil
}
