package placement

import (
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// group is a feasible host set: the schedulable hosts of one tier and of
// the host pools of a task that satisfy one constraint set, in index order, with a fit tree over their
// free amounts. Groups are what equivalence classes search; classes with
// the same constraints share one.
type group struct {
	slots []int32
	tree  *fitTree
}

// tier splits hosts so GPU hosts are kept for GPU tasks: a task without GPU
// looks at tierPlain first and at tierGPU only when nothing there fits.
type tier uint8

const (
	tierPlain tier = iota + 1
	tierGPU
)

func (t tier) holds(gpuHost bool) bool { return (t == tierGPU) == gpuHost }

// dropGroups forgets every feasibility group (hosts or labels changed).
func (x *HostIndex) dropGroups() {
	if len(x.groupList) == 0 {
		return
	}
	clear(x.groups)
	x.groupList = x.groupList[:0]
	for i := range x.memberships {
		x.memberships[i] = nil
	}
}

// groupFor returns the group of tier t for the clusters, host pools and
// constraints of class c, building it on first use.
func (x *HostIndex) groupFor(t tier, c *class) *group {
	pools, cs := c.hostPools, c.cons
	key := string(rune('0'+t)) + c.ckey
	if i, ok := x.groups[key]; ok {
		return x.groupList[i]
	}
	id := int32(len(x.groupList))
	var slots []int32
	var leaves []amounts
	for s := range x.ids {
		slot := int32(s)
		if !x.schedulable[slot] || !t.holds(x.gpuHost[slot]) || c.clusterProblem(x.clusters[slot]) != "" ||
			!inHostPools(pools, x.hostPools[slot]) || !matchesAll(cs, x.labels[slot]) {
			continue
		}
		x.memberships[slot] = append(x.memberships[slot], membership{group: id, pos: int32(len(slots))})
		slots = append(slots, slot)
		leaves = append(leaves, x.scale.amounts(x.free[slot], x.ports[slot]))
	}
	g := &group{slots: slots, tree: newFitTree(leaves)}
	x.groups[key] = id
	x.groupList = append(x.groupList, g)
	return g
}

func matchesAll(cs []model.Constraint, labels map[string]string) bool {
	for i := range cs {
		if !cs[i].Matches(labels) {
			return false
		}
	}
	return true
}

// clusterKey encodes the cluster lists of a task canonically (length-
// prefixed, in order), "" when it has none.
func clusterKey(only, avoid []string) string {
	if len(only) == 0 && len(avoid) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range [2][]string{only, avoid} {
		b.WriteString("c" + strconv.Itoa(len(l)) + "(")
		for _, s := range l {
			b.WriteString(strconv.Itoa(len(s)) + ":" + s)
		}
		b.WriteByte(')')
	}
	return b.String()
}

// hostPoolKey encodes host pools for a group key: "" for none, else
// "P<n>" and each name length-prefixed, which no constraint key starts
// with.
func hostPoolKey(pools []string) string {
	if len(pools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("P" + strconv.Itoa(len(pools)))
	for _, p := range pools {
		b.WriteString(strconv.Itoa(len(p)) + ":" + p)
	}
	return b.String()
}

// constraintKey encodes a constraint set canonically (length-prefixed, so
// no label text can make two different sets collide).
func constraintKey(cs []model.Constraint) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	for i := range cs {
		writeConstraint(&b, &cs[i])
	}
	return b.String()
}

func writeConstraint(b *strings.Builder, c *model.Constraint) {
	writeString := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	switch {
	case len(c.AllOf) > 0:
		b.WriteString("&" + strconv.Itoa(len(c.AllOf)) + "(")
		for i := range c.AllOf {
			writeConstraint(b, &c.AllOf[i])
		}
		b.WriteByte(')')
	case len(c.AnyOf) > 0:
		b.WriteString("|" + strconv.Itoa(len(c.AnyOf)) + "(")
		for i := range c.AnyOf {
			writeConstraint(b, &c.AnyOf[i])
		}
		b.WriteByte(')')
	default:
		b.WriteString("o" + strconv.Itoa(int(c.Op)))
		writeString(c.Key)
		b.WriteString("v" + strconv.Itoa(len(c.Values)))
		for _, v := range c.Values {
			writeString(v)
		}
	}
}
