package mesostest

import (
	"fmt"
	"github.com/peloton-federated/peloton/shard/model"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// applyOperation carries out a RESERVE, UNRESERVE, CREATE or DESTROY on
// the pool, following docs/reservation.md and docs/persistent-volume.md:
// only dynamic reservations for the framework's role (never "*") with the
// framework's principal; persistent volumes only on reserved disk, with an
// id unique per role on the agent, a relative non-nested container path
// and mode RW; a volume is unreserved only after it is destroyed. It
// returns why the operation is invalid, "" when it was applied.
func (m *Master) applyOperation(fw *framework, a *agent, pool *acceptPool, op *mesos.Offer_Operation) string {
	switch op.GetType() {
	case mesos.Offer_Operation_RESERVE:
		if op.Reserve == nil || len(op.Reserve.Resources) == 0 {
			return "Invalid RESERVE Operation: no resources to reserve"
		}
		return m.reserve(fw, a, pool, op.Reserve.Resources)
	case mesos.Offer_Operation_UNRESERVE:
		if op.Unreserve == nil || len(op.Unreserve.Resources) == 0 {
			return "Invalid UNRESERVE Operation: no resources to unreserve"
		}
		return m.unreserve(fw, a, pool, op.Unreserve.Resources)
	case mesos.Offer_Operation_CREATE:
		if op.Create == nil || len(op.Create.Volumes) == 0 {
			return "Invalid CREATE Operation: no volumes to create"
		}
		return m.create(fw, a, pool, op.Create.Volumes)
	case mesos.Offer_Operation_DESTROY:
		if op.Destroy == nil || len(op.Destroy.Volumes) == 0 {
			return "Invalid DESTROY Operation: no volumes to destroy"
		}
		return m.destroy(fw, a, pool, op.Destroy.Volumes)
	}
	return "unsupported operation " + op.GetType().String()
}

// checkReserved validates a reserved scalar of an operation: well formed,
// dynamically reserved for the framework's role, allocated as the
// framework's offers are.
func checkReserved(kind string, fw *framework, r *mesos.Resource) string {
	if err := r.Validate(); err != nil {
		return fmt.Sprintf("Invalid %s Operation: %s: %v", kind, r, err)
	}
	if !r.IsDynamicallyReserved() {
		return fmt.Sprintf("Invalid %s Operation: %s is not dynamically reserved", kind, r)
	}
	if role := r.ReservationRole(); role != fw.role {
		return fmt.Sprintf("Invalid %s Operation: %s is reserved for role '%s', which framework %s does not hold", kind, r, role, fw.id)
	}
	if r.GetType() != mesos.SCALAR || r.Revocable != nil {
		return fmt.Sprintf("Invalid %s Operation: %s: this cluster reserves non-revocable scalar resources only", kind, r)
	}
	if msg := checkAllocation(r, fw); msg != "" {
		return fmt.Sprintf("Invalid %s Operation: %s", kind, msg)
	}
	return ""
}

func checkAllocation(r *mesos.Resource, fw *framework) string {
	if fw.multiRole {
		if r.AllocationInfo == nil || r.AllocationInfo.GetRole() != fw.role {
			return fmt.Sprintf("resource %q is not allocated to role %q", r.Name, fw.role)
		}
	} else if r.AllocationInfo != nil {
		return fmt.Sprintf("resource %q has allocation_info but the framework is not MULTI_ROLE", r.Name)
	}
	return ""
}

func scalarSum(r *mesos.Resource) (resSum, bool) {
	v := r.GetScalar().GetValue()
	switch r.Name {
	case "cpus":
		return resSum{cpus: model.CoresToMilli(v)}, true
	case "mem":
		return resSum{mem: model.WholeUnits(v)}, true
	case "disk":
		return resSum{disk: model.WholeUnits(v)}, true
	case "gpus":
		return resSum{gpus: model.WholeUnits(v)}, true
	}
	return resSum{}, false
}

func (m *Master) reserve(fw *framework, a *agent, pool *acceptPool, rs []mesos.Resource) string {
	var sum resSum
	principal := fw.info.GetPrincipal()
	for i := range rs {
		r := &rs[i]
		if msg := checkReserved("RESERVE", fw, r); msg != "" {
			return msg
		}
		if r.IsPersistentVolume() {
			return fmt.Sprintf("Invalid RESERVE Operation: %s is a persistent volume; reserve the disk, then CREATE the volume", r)
		}
		p := reservationPrincipal(r)
		switch {
		case principal == "" && p != "":
			return fmt.Sprintf("A reserve operation was attempted with no principal, but there is a reserved resource in the request with principal '%s' set in `ReservationInfo`", p)
		case principal != "" && p != principal:
			return fmt.Sprintf("A reserve operation was attempted by principal '%s', which does not match a reserved resource in the request with principal '%s'", principal, p)
		}
		s, ok := scalarSum(r)
		if !ok {
			return fmt.Sprintf("Invalid RESERVE Operation: %s is not a resource of this cluster", r)
		}
		sum = sum.add(s)
	}
	if !sum.fits(pool.unres) {
		return fmt.Sprintf("Invalid RESERVE Operation: %s is not contained in the unreserved offered resources", describe(rs))
	}
	pool.unres = pool.unres.sub(sum)
	a.reserved = a.reserved.add(sum)
	pool.extra.Add(mesos.Resources(rs).Clone()...)
	return ""
}

func (m *Master) unreserve(fw *framework, a *agent, pool *acceptPool, rs []mesos.Resource) string {
	var sum resSum
	for i := range rs {
		r := &rs[i]
		if msg := checkReserved("UNRESERVE", fw, r); msg != "" {
			return msg
		}
		if r.IsPersistentVolume() {
			return fmt.Sprintf("Invalid UNRESERVE Operation: %s is a persistent volume; DESTROY it before unreserving its disk", r)
		}
		s, _ := scalarSum(r)
		sum = sum.add(s)
	}
	if !containsAll(pool.extra, rs) {
		return fmt.Sprintf("Invalid UNRESERVE Operation: %s is not contained in the offered resources", describe(rs))
	}
	pool.extra.Subtract(rs...)
	pool.unres = pool.unres.add(sum)
	a.reserved = a.reserved.sub(sum)
	return ""
}

// existingVolumes maps the persistence ids of role on the agent, the
// pool's included, to the task using each ("" for none).
func (m *Master) existingVolumes(a *agent, pool *acceptPool, role string) map[string]string {
	ids := map[string]string{}
	visit := func(rs mesos.Resources, task string) {
		for _, v := range volumesOf(rs, task, nil) {
			if v.Role == role {
				ids[v.ID] = task
			}
		}
	}
	m.agentResources(a, visit)
	visit(pool.extra, "")
	return ids
}

func (m *Master) create(fw *framework, a *agent, pool *acceptPool, vols []mesos.Resource) string {
	existing := m.existingVolumes(a, pool, fw.role)
	principal := fw.info.GetPrincipal()
	stripped := make(mesos.Resources, 0, len(vols))
	for i := range vols {
		v := &vols[i]
		if err := v.Validate(); err != nil {
			return fmt.Sprintf("Invalid CREATE Operation: %s: %v", v, err)
		}
		if v.Name != "disk" || !v.IsPersistentVolume() {
			return fmt.Sprintf("Invalid CREATE Operation: %s is not a persistent volume", v)
		}
		if !v.IsReserved("") {
			return "Invalid CREATE Operation: Persistent volumes cannot be created from unreserved resources"
		}
		if msg := checkReserved("CREATE", fw, v); msg != "" {
			return msg
		}
		p := v.Disk.Persistence
		vol := v.Disk.Volume
		path := vol.GetContainerPath()
		switch {
		case p.GetID() == "":
			return "Invalid CREATE Operation: a persistent volume needs a non-empty persistence id"
		case vol == nil:
			return "Invalid CREATE Operation: Expecting 'volume' to be set for persistent volume " + p.GetID()
		case vol.HostPath != nil:
			return "Invalid CREATE Operation: Expecting 'host_path' to be unset for persistent volume " + p.GetID()
		case path == "" || strings.HasPrefix(path, "/") || strings.Contains(path, "/") || path == "." || path == "..":
			return fmt.Sprintf("Invalid CREATE Operation: persistent volume %s: container path '%s' must be a non-nested relative path", p.GetID(), path)
		case vol.GetMode() != mesos.RW:
			return fmt.Sprintf("Invalid CREATE Operation: persistent volume %s: mode must be RW", p.GetID())
		case p.Principal != nil && p.GetPrincipal() != principal:
			return fmt.Sprintf("Invalid CREATE Operation: persistent volume %s has principal '%s', the framework's is '%s'", p.GetID(), p.GetPrincipal(), principal)
		}
		if _, used := existing[p.GetID()]; used {
			return fmt.Sprintf("Invalid CREATE Operation: Persistence ID '%s' for role '%s' is already in use on agent %s", p.GetID(), fw.role, a.spec.ID)
		}
		existing[p.GetID()] = ""
		stripped = append(stripped, stripVolume(*v))
	}
	if !containsAll(pool.extra, stripped) {
		return "Invalid CREATE Operation: Insufficient disk resources: the offers do not hold " + describe(stripped)
	}
	pool.extra.Subtract(stripped...)
	pool.extra.Add(mesos.Resources(vols).Clone()...)
	return ""
}

func (m *Master) destroy(fw *framework, a *agent, pool *acceptPool, vols []mesos.Resource) string {
	existing := m.existingVolumes(a, pool, fw.role)
	stripped := make(mesos.Resources, 0, len(vols))
	for i := range vols {
		v := &vols[i]
		if err := v.Validate(); err != nil {
			return fmt.Sprintf("Invalid DESTROY Operation: %s: %v", v, err)
		}
		if !v.IsPersistentVolume() {
			return fmt.Sprintf("Invalid DESTROY Operation: %s is not a persistent volume", v)
		}
		if msg := checkReserved("DESTROY", fw, v); msg != "" {
			return msg
		}
		id := v.Disk.Persistence.GetID()
		task, ok := existing[id]
		switch {
		case !ok:
			return fmt.Sprintf("Invalid DESTROY Operation: persistent volume %s does not exist on agent %s", id, a.spec.ID)
		case task != "":
			return fmt.Sprintf("Invalid DESTROY Operation: persistent volume %s is in use by task %s", id, task)
		}
		stripped = append(stripped, stripVolume(*v))
	}
	if !containsAll(pool.extra, vols) {
		return "Invalid DESTROY Operation: the offers do not hold " + describe(vols)
	}
	pool.extra.Subtract(vols...)
	pool.extra.Add(stripped...)
	return ""
}

// splitResources divides resources a task or executor uses into
// unreserved scalars, summed, and the rest (port ranges, reserved scalars,
// persistent volumes), checking each the way the master's resource
// validation does.
func splitResources(rs []mesos.Resource, fw *framework) (resSum, mesos.Resources, error) {
	var s resSum
	var extra mesos.Resources
	for i := range rs {
		r := &rs[i]
		if err := r.Validate(); err != nil {
			return s, nil, fmt.Errorf("resource %q: %v", r.Name, err)
		}
		if msg := checkAllocation(r, fw); msg != "" {
			return s, nil, fmt.Errorf("%s", msg)
		}
		if r.GetType() == mesos.SCALAR && r.IsUnreserved() && r.Disk == nil {
			if err := s.addScalar(r); err != nil {
				return s, nil, err
			}
			continue
		}
		if err := checkOtherResource(r, fw); err != nil {
			return s, nil, err
		}
		extra = append(extra, *r)
	}
	return s, extra, nil
}

// scalarKind is an unreserved scalar resource: its name and whether it is
// revocable.
type scalarKind struct {
	name      string
	revocable bool
}

// offeredScalars add an amount of each unreserved scalar the emulated
// agents offer to a sum: cpus in millicores, the others in whole units.
var offeredScalars = map[scalarKind]func(s *resSum, v float64){
	{"cpus", false}: func(s *resSum, v float64) { s.cpus += model.CoresToMilli(v) },
	{"mem", false}:  func(s *resSum, v float64) { s.mem += model.WholeUnits(v) },
	{"disk", false}: func(s *resSum, v float64) { s.disk += model.WholeUnits(v) },
	{"gpus", false}: func(s *resSum, v float64) { s.gpus += model.WholeUnits(v) },
	{"cpus", true}:  func(s *resSum, v float64) { s.rcpus += model.CoresToMilli(v) },
	{"mem", true}:   func(s *resSum, v float64) { s.rmem += model.WholeUnits(v) },
}

// addScalar adds an unreserved scalar to the sum, refusing one the
// cluster does not offer or a non-positive amount.
func (s *resSum) addScalar(r *mesos.Resource) error {
	v := r.Scalar.GetValue()
	if v <= 0 {
		return fmt.Errorf("resource %q has a non-positive value %v", r.Name, v)
	}
	kind := scalarKind{r.Name, r.Revocable != nil}
	add := offeredScalars[kind]
	if add == nil {
		return fmt.Errorf("resource %q (revocable %v) is not offered by this cluster", r.Name, kind.revocable)
	}
	add(s, v)
	return nil
}

// checkOtherResource checks a resource other than an unreserved scalar:
// unreserved port ranges, or a scalar reserved for the framework's role.
func checkOtherResource(r *mesos.Resource, fw *framework) error {
	switch {
	case r.Revocable != nil:
		return fmt.Errorf("revocable resource %q must be an unreserved scalar", r.Name)
	case r.Name == "ports" && r.GetType() == mesos.RANGES && r.IsUnreserved():
	case r.IsReserved(""):
		if role := r.ReservationRole(); role != fw.role {
			return fmt.Errorf("resource %q is reserved for role %q, not the framework's role %q", r.Name, role, fw.role)
		}
		if _, ok := scalarSum(r); !ok || r.GetType() != mesos.SCALAR {
			return fmt.Errorf("reserved resource %q is not offered by this cluster", r.Name)
		}
	default:
		return fmt.Errorf("resource %q of type %s is not offered by this cluster", r.Name, r.GetType())
	}
	return nil
}
