package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// hostFilter is one step of the feasibility chain: the reason it rejects
// slot for class c, or "" when the host passes.
type hostFilter func(x *HostIndex, c *class, slot int32) string

// feasibilityChain is every filter a host must pass, in the order the
// explanation charges rejections to them. The first two are static: they
// decide group membership once per (host pools, constraint set). The rest depend on what
// is free and on the instances already placed, and are checked on the
// candidate hosts the fit trees return.
var feasibilityChain = [...]hostFilter{
	// The host takes new work at all.
	func(x *HostIndex, c *class, slot int32) string {
		if !x.schedulable[slot] {
			return ReasonUnschedulable
		}
		return ""
	},
	// The host's cluster is one the task may go to.
	func(x *HostIndex, c *class, slot int32) string {
		return c.clusterProblem(x.clusters[slot])
	},
	// The host is in one of the task's host pools.
	func(x *HostIndex, c *class, slot int32) string {
		if !inHostPools(c.hostPools, x.hostPools[slot]) {
			return c.hostPoolReason
		}
		return ""
	},
	// Every label constraint of the task holds.
	func(x *HostIndex, c *class, slot int32) string {
		for i := range c.cons {
			if !c.cons[i].Matches(x.labels[slot]) {
				return c.failedConstraint(&c.cons[i], x.labels[slot])
			}
		}
		return ""
	},
	// Fewer than MaxPerHost instances of the spread group are on the host.
	func(x *HostIndex, c *class, slot int32) string {
		if c.maxPerHost > 0 && c.counts.perHost[slot] >= c.maxPerHost {
			return "max " + strconv.Itoa(c.maxPerHost) + " per host"
		}
		return ""
	},
	// Each spread limit leaves room on the host's label value.
	func(x *HostIndex, c *class, slot int32) string {
		for i, l := range c.spread {
			if c.spreadCounts[i][x.labels[slot][l.Key]] >= l.Max {
				return "max " + strconv.Itoa(l.Max) + " per " + l.Key
			}
		}
		return ""
	},
	// Enough of each resource is free.
	func(x *HostIndex, c *class, slot int32) string {
		f := &x.free[slot]
		switch {
		case c.need.MilliCPU > f.MilliCPU:
			return ReasonInsufficientCPU
		case c.need.MemMB > f.MemMB:
			return ReasonInsufficientMem
		case c.need.DiskMB > f.DiskMB:
			return ReasonInsufficientDisk
		case c.need.GPU > f.GPU:
			return ReasonInsufficientGPU
		}
		return ""
	},
	// Enough host ports are free.
	func(x *HostIndex, c *class, slot int32) string {
		if c.ports > x.ports[slot] {
			return ReasonInsufficientPort
		}
		return ""
	},
}

// clusterProblem says why a host of cluster cl is not for class c, or "".
func (c *class) clusterProblem(cl string) string {
	if slices.Contains(c.avoid, cl) {
		return c.avoidText
	}
	if len(c.only) > 0 && !slices.Contains(c.only, cl) {
		return c.onlyText
	}
	return ""
}

// inHostPools reports whether a host of host pool hp may take a task that
// names pools (none: any).
func inHostPools(pools []string, hp string) bool {
	return len(pools) == 0 || slices.Contains(pools, hp)
}

// hostPoolReason is the rejection of hosts outside pools.
func hostPoolReason(pools []string) string {
	return ReasonNotInHostPools + " [" + strings.Join(pools, " ") + "]"
}

// failedConstraint names the most specific part of a failing constraint:
// inside an AND, the first failing member; otherwise the constraint itself.
func (c *class) failedConstraint(con *model.Constraint, labels map[string]string) string {
	for len(con.AllOf) > 0 {
		next := con
		for i := range con.AllOf {
			if !con.AllOf[i].Matches(labels) {
				next = &con.AllOf[i]
				break
			}
		}
		if next == con {
			break
		}
		con = next
	}
	if s, ok := c.constraintText[con]; ok {
		return s
	}
	if c.constraintText == nil {
		c.constraintText = map[*model.Constraint]string{}
	}
	s := con.String()
	c.constraintText[con] = s
	return s
}

// explain runs the whole chain over every host for class c.
func (p *pass) explain(c *class) Explanation {
	if c.invalid != "" {
		return Explanation{Code: InvalidTask, Detail: c.invalid}
	}
	x := p.x
	byReason := map[string]int{}
	feasible := 0
	for s := range x.ids {
		reason := ""
		for _, f := range feasibilityChain {
			if reason = f(x, c, int32(s)); reason != "" {
				break
			}
		}
		if reason == "" {
			feasible++
		} else {
			byReason[reason]++
		}
	}
	e := Explanation{Code: Unschedulable, Hosts: len(x.ids), Feasible: feasible}
	for r, n := range byReason {
		e.Filtered = append(e.Filtered, FilterCount{Reason: r, Hosts: n})
	}
	slices.SortFunc(e.Filtered, func(a, b FilterCount) int {
		if c := cmp.Compare(b.Hosts, a.Hosts); c != 0 {
			return c
		}
		return cmp.Compare(a.Reason, b.Reason)
	})
	return e
}

// validateTask returns what makes t impossible to place, naming the field,
// or "".
func validateTask(t *Task) string {
	if i := t.Resources.Invalid(); i >= 0 {
		return fmt.Sprintf("resources.%s is %s", model.ResourceKinds[i], model.FormatAmount(i, t.Resources.Get(i)))
	}
	switch {
	case t.Ports < 0:
		return "ports is negative"
	case t.MaxPerHost < 0:
		return "maxPerHost is negative"
	}
	for i, l := range t.Spread {
		if l.Key == "" {
			return fmt.Sprintf("spread[%d].key is empty", i)
		}
		if l.Max <= 0 {
			return fmt.Sprintf("spread[%d].max must be positive", i)
		}
	}
	for i, cl := range t.Clusters {
		if cl == "" {
			return fmt.Sprintf("clusters[%d] is empty", i)
		}
	}
	for i, cl := range t.AvoidClusters {
		if cl == "" {
			return fmt.Sprintf("avoidClusters[%d] is empty", i)
		}
	}
	for i := range t.Constraints {
		if msg := validateConstraint(&t.Constraints[i], 0); msg != "" {
			return fmt.Sprintf("constraints[%d]%s", i, msg)
		}
	}
	return ""
}

// maxConstraintDepth bounds AND/OR nesting.
const maxConstraintDepth = 16

func validateConstraint(c *model.Constraint, depth int) string {
	if depth > maxConstraintDepth {
		return " nests deeper than " + strconv.Itoa(maxConstraintDepth)
	}
	if len(c.AllOf) > 0 && len(c.AnyOf) > 0 {
		return " has both allOf and anyOf"
	}
	for i := range c.AllOf {
		if msg := validateConstraint(&c.AllOf[i], depth+1); msg != "" {
			return fmt.Sprintf(".allOf[%d]%s", i, msg)
		}
	}
	for i := range c.AnyOf {
		if msg := validateConstraint(&c.AnyOf[i], depth+1); msg != "" {
			return fmt.Sprintf(".anyOf[%d]%s", i, msg)
		}
	}
	if len(c.AllOf) > 0 || len(c.AnyOf) > 0 {
		return ""
	}
	return validateLeaf(c)
}

// validateLeaf checks a constraint on one label: its key, and as many
// values as its operator takes.
func validateLeaf(c *model.Constraint) string {
	if c.Key == "" {
		return ".key is empty"
	}
	switch c.Op {
	case model.OpEquals, model.OpNotEquals:
		if len(c.Values) != 1 {
			return ".values must hold exactly one value"
		}
	case model.OpIn, model.OpNotIn:
		if len(c.Values) == 0 {
			return ".values is empty"
		}
	case model.OpExists, model.OpNotExists:
	default:
		return ".op is unknown"
	}
	return ""
}

// Admits reports whether h may take t at all, room aside: it is in one of
// t's clusters and host pools and every constraint of t holds on its
// labels. Whether h takes new work, its free room and the spread limits
// are not looked at (a host reservation asks which hosts t could fill
// once their work ends).
func Admits(h *Host, t *Task) bool {
	if slices.Contains(t.AvoidClusters, h.Cluster) || (len(t.Clusters) > 0 && !slices.Contains(t.Clusters, h.Cluster)) {
		return false
	}
	if !inHostPools(t.HostPools, h.HostPool) {
		return false
	}
	for i := range t.Constraints {
		if !t.Constraints[i].Matches(h.Labels) {
			return false
		}
	}
	return true
}
