package mesostest

import (
	"fmt"
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

// sumOf adds up resources a task asks for, checking each the way the
// master's resource validation does; role is the role the framework's
// offers are allocated to ("" when not MULTI_ROLE).
func sumOf(rs []mesos.Resource, role string, multiRole bool) (resSum, error) {
	var s resSum
	for i := range rs {
		r := &rs[i]
		if r.GetType() != mesos.SCALAR || r.Scalar == nil {
			return s, fmt.Errorf("resource %q is not a scalar", r.Name)
		}
		v := r.Scalar.GetValue()
		if v <= 0 {
			return s, fmt.Errorf("resource %q has a non-positive value %v", r.Name, v)
		}
		if multiRole {
			if r.AllocationInfo == nil || r.AllocationInfo.GetRole() != role {
				return s, fmt.Errorf("resource %q is not allocated to role %q", r.Name, role)
			}
		} else if r.AllocationInfo != nil {
			return s, fmt.Errorf("resource %q has allocation_info but the framework is not MULTI_ROLE", r.Name)
		}
		rev := r.Revocable != nil
		cores, units := model.CoresToMilli(v), model.WholeUnits(v)
		switch {
		case r.Name == "cpus" && !rev:
			s.cpus += cores
		case r.Name == "mem" && !rev:
			s.mem += units
		case r.Name == "disk" && !rev:
			s.disk += units
		case r.Name == "gpus" && !rev:
			s.gpus += units
		case r.Name == "cpus" && rev:
			s.rcpus += cores
		case r.Name == "mem" && rev:
			s.rmem += units
		default:
			return s, fmt.Errorf("resource %q (revocable %v) is not offered by this cluster", r.Name, rev)
		}
	}
	return s, nil
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
