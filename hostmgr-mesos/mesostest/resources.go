package mesostest

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/model"
)

// resSum is an amount of the scalar resources the emulator knows, in whole
// units as Mesos keeps scalars (fixed point, three decimals): millicores,
// MiB and devices. Doubles convert at the edge (toUnits, resources).
type resSum struct {
	cpus, mem, disk, gpus int64
	rcpus, rmem           int64 // revocable
}

func (a resSum) add(b resSum) resSum {
	return resSum{a.cpus + b.cpus, a.mem + b.mem, a.disk + b.disk, a.gpus + b.gpus, a.rcpus + b.rcpus, a.rmem + b.rmem}
}

func (a resSum) sub(b resSum) resSum {
	return resSum{a.cpus - b.cpus, a.mem - b.mem, a.disk - b.disk, a.gpus - b.gpus, a.rcpus - b.rcpus, a.rmem - b.rmem}
}

func (a resSum) fits(b resSum) bool {
	return a.cpus <= b.cpus && a.mem <= b.mem && a.disk <= b.disk &&
		a.gpus <= b.gpus && a.rcpus <= b.rcpus && a.rmem <= b.rmem
}

// offerable mirrors Mesos's minimum allocatable resources: some CPU or
// some memory.
func (a resSum) offerable() bool {
	return a.cpus >= 10 || a.mem >= 32 || a.rcpus >= 10 || a.rmem >= 32
}

func (s AgentSpec) total() resSum {
	return resSum{model.CoresToMilli(s.CPU), model.WholeUnits(s.MemMB), model.WholeUnits(s.DiskMB), model.WholeUnits(s.GPU),
		model.CoresToMilli(s.RevocableCPU), model.WholeUnits(s.RevocableMemMB)}
}

// resources renders an amount as Mesos resources allocated to role.
func (a resSum) resources(role string, multiRole bool) []mesos.Resource {
	var out []mesos.Resource
	add := func(name string, kind int, v int64, revocable bool) {
		if v <= 0 {
			return
		}
		t := mesos.SCALAR
		star := "*"
		r := mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: model.DecimalOf(kind, v)}, Role: &star}
		if multiRole {
			rl := role
			r.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &rl}
		}
		if revocable {
			r.Revocable = &mesos.Resource_RevocableInfo{}
		}
		out = append(out, r)
	}
	add("cpus", 0, a.cpus, false)
	add("mem", 1, a.mem, false)
	add("disk", 2, a.disk, false)
	add("gpus", 3, a.gpus, false)
	add("cpus", 0, a.rcpus, true)
	add("mem", 1, a.rmem, true)
	return out
}

// attributes renders agent attributes as Mesos TEXT attributes.
func attributes(m map[string]string) []mesos.Attribute {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]mesos.Attribute, 0, len(keys))
	for _, k := range keys {
		out = append(out, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: m[k]}})
	}
	return out
}
