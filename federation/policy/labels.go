package policy

import (
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// CouldSatisfy reports whether some host of a region whose up hosts carry
// the label values in hostLabels (key → distinct values) might satisfy
// every constraint. The answer errs towards yes: false means no host can
// match, true means one might. A region's label summary cannot say which
// values sit on the same host, nor whether every host has a key, so:
//
//   - key==v and key in [...] hold if some host has the key with one of the
//     values; exists holds if some host has the key;
//   - !=, not-in and not-exists always might hold (a host without the key
//     satisfies them, and the summary cannot rule one out);
//   - AllOf holds if each part might hold (possibly on different hosts);
//     AnyOf if one part might.
//
// A leaf with no values for ==, in, or an unknown operator, never matches,
// as in model.Constraint.Matches.
func CouldSatisfy(constraints []model.Constraint, hostLabels map[string][]string) bool {
	for i := range constraints {
		if !couldMatch(&constraints[i], hostLabels) {
			return false
		}
	}
	return true
}

func couldMatch(c *model.Constraint, hostLabels map[string][]string) bool {
	switch {
	case len(c.AllOf) > 0:
		return CouldSatisfy(c.AllOf, hostLabels)
	case len(c.AnyOf) > 0:
		for i := range c.AnyOf {
			if couldMatch(&c.AnyOf[i], hostLabels) {
				return true
			}
		}
		return false
	}
	present, ok := hostLabels[c.Key]
	switch c.Op {
	case model.OpEquals:
		return ok && len(c.Values) > 0 && slices.Contains(present, c.Values[0])
	case model.OpIn:
		return ok && slices.ContainsFunc(present, func(v string) bool { return slices.Contains(c.Values, v) })
	case model.OpExists:
		return ok && len(present) > 0
	case model.OpNotEquals, model.OpNotIn, model.OpNotExists:
		return true
	}
	return false
}

// firstUnsatisfiable returns the first constraint no host can satisfy, for
// reasons; ok is false when every constraint might be satisfied.
func firstUnsatisfiable(constraints []model.Constraint, hostLabels map[string][]string) (model.Constraint, bool) {
	for i := range constraints {
		if !couldMatch(&constraints[i], hostLabels) {
			return constraints[i], true
		}
	}
	return model.Constraint{}, false
}
