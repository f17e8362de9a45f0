package model

import "slices"

// ConstraintOp is the comparison a host label constraint makes.
type ConstraintOp uint8

const (
	OpEquals ConstraintOp = iota + 1
	OpNotEquals
	OpIn
	OpNotIn
	OpExists
	OpNotExists
)

var constraintOpNames = [...]string{"", "==", "!=", "in", "not-in", "exists", "not-exists"}

func (o ConstraintOp) String() string {
	if int(o) < len(constraintOpNames) {
		return constraintOpNames[o]
	}
	return "?"
}

// Constraint restricts the hosts a task may run on. A leaf compares the host
// label Key with Values using Op; a composite holds AllOf (AND) or AnyOf (OR).
type Constraint struct {
	Key    string
	Op     ConstraintOp
	Values []string
	AllOf  []Constraint
	AnyOf  []Constraint
}

// Matches reports whether a host with these labels satisfies c.
func (c *Constraint) Matches(labels map[string]string) bool {
	if len(c.AllOf) > 0 {
		for i := range c.AllOf {
			if !c.AllOf[i].Matches(labels) {
				return false
			}
		}
		return true
	}
	if len(c.AnyOf) > 0 {
		for i := range c.AnyOf {
			if c.AnyOf[i].Matches(labels) {
				return true
			}
		}
		return false
	}
	v, ok := labels[c.Key]
	switch c.Op {
	case OpEquals:
		return ok && len(c.Values) > 0 && v == c.Values[0]
	case OpNotEquals:
		return !ok || len(c.Values) == 0 || v != c.Values[0]
	case OpIn:
		return ok && slices.Contains(c.Values, v)
	case OpNotIn:
		return !ok || !slices.Contains(c.Values, v)
	case OpExists:
		return ok
	case OpNotExists:
		return !ok
	}
	return false
}

// String renders c compactly, as used in placement reasons: "zone==a",
// "zone in [a b]", "(a==1 || b==2)".
func (c *Constraint) String() string {
	join := func(cs []Constraint, sep string) string {
		s := "("
		for i := range cs {
			if i > 0 {
				s += sep
			}
			s += cs[i].String()
		}
		return s + ")"
	}
	switch {
	case len(c.AllOf) > 0:
		return join(c.AllOf, " && ")
	case len(c.AnyOf) > 0:
		return join(c.AnyOf, " || ")
	}
	switch c.Op {
	case OpEquals, OpNotEquals:
		v := ""
		if len(c.Values) > 0 {
			v = c.Values[0]
		}
		// The shard's own labels read as what they mean.
		switch {
		case c.Op == OpEquals && c.Key == LabelRunsImages:
			return "cannot run container images"
		case c.Op == OpEquals && c.Key == LabelHost:
			return "not host " + v + " (the task is pinned there)"
		}
		return c.Key + c.Op.String() + v
	case OpIn, OpNotIn:
		s := c.Key + " " + c.Op.String() + " ["
		for i, v := range c.Values {
			if i > 0 {
				s += " "
			}
			s += v
		}
		return s + "]"
	}
	return c.Key + " " + c.Op.String()
}
