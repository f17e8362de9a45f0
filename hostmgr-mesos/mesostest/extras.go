package mesostest

import (
	"fmt"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

// An agent's resources other than its unreserved scalars ("extras") are
// kept as Mesos resources and combined with mesos-go's Resources
// arithmetic, which follows Mesos's own (src/common/resources.cpp): port
// ranges, dynamically reserved scalars and persistent volumes. Extras at
// rest on an agent carry no allocation info; offered ones carry the
// framework's role when it is MULTI_ROLE.

// DefaultPorts is the port range of an agent whose spec names none, as a
// Mesos agent offers by default.
var DefaultPorts = []mesos.Value_Range{{Begin: 31000, End: 32000}}

func portsResource(rs []mesos.Value_Range) mesos.Resource {
	t := mesos.RANGES
	star := "*"
	return mesos.Resource{Name: "ports", Type: &t, Ranges: &mesos.Value_Ranges{Range: append([]mesos.Value_Range(nil), rs...)}, Role: &star}
}

// validRanges reports whether ranges are well formed and do not overlap.
func validRanges(rs []mesos.Value_Range) bool {
	r := portsResource(rs)
	return r.Validate() == nil
}

// offerableExtras splits what the agent has at rest into what a framework
// of role may be offered (unreserved ports, resources reserved for role)
// and the rest.
func offerableExtras(extra mesos.Resources, role string) (offer, rest mesos.Resources) {
	for i := range extra {
		r := extra[i]
		if r.IsUnreserved() || (role != "*" && r.ReservationRole() == role) {
			offer = append(offer, r)
		} else {
			rest = append(rest, r)
		}
	}
	return offer, rest
}

// hasReserved reports whether any of rs is reserved.
func hasReserved(rs mesos.Resources) bool {
	for i := range rs {
		if !rs[i].IsUnreserved() {
			return true
		}
	}
	return false
}

func allocated(rs mesos.Resources, fw *framework) mesos.Resources {
	out := rs.Clone()
	if fw.multiRole {
		out.Allocate(fw.role)
	}
	return out
}

func unallocated(rs mesos.Resources) mesos.Resources {
	return rs.Clone().Unallocate()
}

// stripVolume is a persistent volume's resource without its disk info:
// the reserved disk it was created from.
func stripVolume(v mesos.Resource) mesos.Resource {
	c := mesos.Resources{v}.Clone()[0]
	if src := c.GetDisk().GetSource(); src != nil {
		c.Disk = &mesos.Resource_DiskInfo{Source: src}
	} else {
		c.Disk = nil
	}
	return c
}

// VolumeView is a persistent volume on an agent.
type VolumeView struct {
	ID, Role, Principal string
	ContainerPath       string
	SizeMB              float64
	// Labels are the labels of the volume's reservation.
	Labels map[string]string
	// Task is the task using the volume, "" when none does.
	Task string
}

// ReservationView is a dynamically reserved scalar on an agent that is
// not a persistent volume.
type ReservationView struct {
	Name, Role, Principal string
	Amount                float64
	Labels                map[string]string
}

// volumesOf lists the persistent volumes among rs, used by task ("" at
// rest or offered).
func volumesOf(rs mesos.Resources, task string, out []VolumeView) []VolumeView {
	for i := range rs {
		r := &rs[i]
		p := r.GetDisk().GetPersistence()
		if p == nil {
			continue
		}
		out = append(out, VolumeView{ID: p.GetID(), Role: r.ReservationRole(), Principal: reservationPrincipal(r),
			ContainerPath: r.GetDisk().GetVolume().GetContainerPath(), SizeMB: r.GetScalar().GetValue(),
			Labels: labelMap(reservationLabels(r)), Task: task})
	}
	return out
}

func reservationPrincipal(r *mesos.Resource) string {
	if rs := r.GetReservations(); len(rs) > 0 {
		return rs[len(rs)-1].GetPrincipal()
	}
	return r.GetReservation().GetPrincipal()
}

func reservationLabels(r *mesos.Resource) *mesos.Labels {
	if rs := r.GetReservations(); len(rs) > 0 {
		return rs[len(rs)-1].GetLabels()
	}
	return r.GetReservation().GetLabels()
}

func labelMap(l *mesos.Labels) map[string]string {
	if l == nil || len(l.Labels) == 0 {
		return nil
	}
	out := make(map[string]string, len(l.Labels))
	for _, x := range l.Labels {
		out[x.Key] = x.GetValue()
	}
	return out
}

// agentResources is every extra of an agent wherever it is: at rest,
// offered, or used by a task (with the task's id).
func (m *Master) agentResources(a *agent, visit func(rs mesos.Resources, task string)) {
	visit(a.extra, "")
	for _, o := range m.offers {
		if o.agent == a {
			visit(o.extra, "")
		}
	}
	ids := make([]string, 0, len(a.tasks))
	for id := range a.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		visit(a.tasks[id].extra, id)
	}
}

func (m *Master) agentByID(id string) (*agent, error) {
	a, ok := m.agents[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	return a, nil
}

// Volumes returns the persistent volumes on an agent, sorted by id.
func (m *Master) Volumes(agentID string) ([]VolumeView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(agentID)
	if err != nil {
		return nil, err
	}
	var out []VolumeView
	m.agentResources(a, func(rs mesos.Resources, task string) { out = volumesOf(rs, task, out) })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Reservations returns the dynamically reserved scalars of an agent that
// are not persistent volumes, merged where they are alike.
func (m *Master) Reservations(agentID string) ([]ReservationView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(agentID)
	if err != nil {
		return nil, err
	}
	var all mesos.Resources
	m.agentResources(a, func(rs mesos.Resources, _ string) {
		for i := range rs {
			r := rs[i]
			if r.IsReserved("") && r.GetType() == mesos.SCALAR && !r.IsPersistentVolume() {
				r.AllocationInfo = nil
				all.Add1(r)
			}
		}
	})
	out := make([]ReservationView, 0, len(all))
	for i := range all {
		r := &all[i]
		out = append(out, ReservationView{Name: r.Name, Role: r.ReservationRole(), Principal: reservationPrincipal(r),
			Amount: r.GetScalar().GetValue(), Labels: labelMap(reservationLabels(r))})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role < out[j].Role
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// FreePorts returns an agent's port ranges that no task uses, offered or
// not.
func (m *Master) FreePorts(agentID string) ([]mesos.Value_Range, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(agentID)
	if err != nil {
		return nil, err
	}
	var free mesos.Resources
	m.agentResources(a, func(rs mesos.Resources, task string) {
		if task != "" {
			return
		}
		for i := range rs {
			if rs[i].Name == "ports" && rs[i].IsUnreserved() {
				r := rs[i]
				r.AllocationInfo = nil
				free.Add1(r)
			}
		}
	})
	ports, _ := resources.Ports(free...)
	return []mesos.Value_Range(ports.Sort().Squash()), nil
}
