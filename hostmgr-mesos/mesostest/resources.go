package mesostest

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// resSum is an amount of the scalar resources the emulator knows.
type resSum struct {
	cpus, mem, disk, gpus float64
	rcpus, rmem           float64 // revocable
}

const slack = 1e-9

func (a resSum) add(b resSum) resSum {
	return resSum{a.cpus + b.cpus, a.mem + b.mem, a.disk + b.disk, a.gpus + b.gpus, a.rcpus + b.rcpus, a.rmem + b.rmem}
}

func (a resSum) sub(b resSum) resSum {
	return resSum{a.cpus - b.cpus, a.mem - b.mem, a.disk - b.disk, a.gpus - b.gpus, a.rcpus - b.rcpus, a.rmem - b.rmem}
}

func (a resSum) fits(b resSum) bool {
	return a.cpus <= b.cpus+slack && a.mem <= b.mem+slack && a.disk <= b.disk+slack &&
		a.gpus <= b.gpus+slack && a.rcpus <= b.rcpus+slack && a.rmem <= b.rmem+slack
}

// offerable mirrors Mesos's minimum allocatable resources: some CPU or
// some memory.
func (a resSum) offerable() bool {
	return a.cpus >= 0.01 || a.mem >= 32 || a.rcpus >= 0.01 || a.rmem >= 32
}

func (s AgentSpec) total() resSum {
	return resSum{s.CPU, s.MemMB, s.DiskMB, s.GPU, s.RevocableCPU, s.RevocableMemMB}
}

// resources renders an amount as Mesos resources allocated to role.
func (a resSum) resources(role string, multiRole bool) []mesos.Resource {
	var out []mesos.Resource
	add := func(name string, v float64, revocable bool) {
		if v < slack {
			return
		}
		t := mesos.SCALAR
		star := "*"
		r := mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}, Role: &star}
		if multiRole {
			rl := role
			r.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &rl}
		}
		if revocable {
			r.Revocable = &mesos.Resource_RevocableInfo{}
		}
		out = append(out, r)
	}
	add("cpus", a.cpus, false)
	add("mem", a.mem, false)
	add("disk", a.disk, false)
	add("gpus", a.gpus, false)
	add("cpus", a.rcpus, true)
	add("mem", a.rmem, true)
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
