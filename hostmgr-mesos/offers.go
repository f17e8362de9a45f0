package mesos

import (
	"slices"
	"sort"
	"strconv"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// agentState is what the plugin knows of one Mesos agent.
type agentState struct {
	id       string
	hostname string
	host     model.HostID
	attrs    map[string]string
	offers   map[string]*heldOffer
	// ours is what this framework's live runs hold on the agent;
	// oursRevocable what its revocable runs hold of revocable resources.
	ours          model.Resources
	oursRevocable model.Resources
	// capacity and revocable are recomputed on every offer and
	// remembered between offers.
	capacity  model.Resources
	revocable model.Resources
	draining  map[string]bool // inverse offer ids
	reported  bool
	// failedAt is when FAILURE came for the agent (removed or
	// unreachable); zero while it is up. A failed agent is a host DOWN.
	failedAt time.Time
	// sawRevocable: the agent offered revocable resources at least once.
	sawRevocable bool
	// unavailableFrom is the start of the agent's maintenance, from its
	// inverse offers and offers; zero when none is scheduled.
	unavailableFrom time.Time
	// ports are the agent's port ranges as far as seen: every range ever
	// offered, and what this framework's runs hold.
	ports mesoslib.Ranges
	// volumes are the persistent volumes of this framework's role known
	// on the agent (offered, or created by a launch), by persistence id;
	// removals are the ones RemoveVolumes asked to delete.
	volumes  map[string]bool
	removals map[string]bool
	// waiting are launches not sent yet; ready: the agent is queued for
	// the dispatcher. declinedAt is when its offers were last declined
	// (with a refusal filter of DeclineRefuse).
	waiting    []parkedLaunch
	ready      bool
	declinedAt time.Time
}

type heldOffer struct {
	id        string
	agent     *agentState
	received  time.Time
	resources []mesoslib.Resource
}

// scalarNames are the Mesos names of model.ResourceKinds, in that order.
var scalarNames = [...]string{"cpus", "mem", "disk", "gpus"}

// scalars sums an offer's resources: non-revocable into the first result,
// revocable into the second. Mesos scalars are doubles of cores, MiB and
// devices; each converts to whole units here, once (cpus to millicores).
func scalars(rs []mesoslib.Resource) (plain, revocable model.Resources) {
	for i := range rs {
		r := &rs[i]
		if r.GetType() != mesoslib.SCALAR || r.Scalar == nil || r.IsPersistentVolume() {
			continue // a volume's disk is its instance's, not the host's
		}
		v := r.Scalar.GetValue()
		dst := &plain
		if r.Revocable != nil {
			dst = &revocable
		}
		if k := slices.Index(scalarNames[:], r.Name); k >= 0 {
			*dst = dst.Set(k, dst.Get(k)+model.UnitsOf(k, v))
		}
	}
	return plain, revocable
}

// offered sums the agent's held offers.
func (a *agentState) offered() (plain, revocable model.Resources) {
	for _, o := range a.offers {
		p, r := scalars(o.resources)
		plain, revocable = plain.Add(p), revocable.Add(r)
	}
	return plain, revocable
}

// refresh recomputes capacity from held offers and ours; it reports
// whether the host changed.
func (a *agentState) refresh() bool {
	plain, rev := a.offered()
	capacity := plain.Add(a.ours)
	changed := !a.reported || capacity != a.capacity || rev != a.revocable
	a.capacity, a.revocable = capacity, rev
	a.sawRevocable = a.sawRevocable || rev != model.Resources{}
	return changed
}

// hostOf describes an agent as a host.
func (a *agentState) hostOf(cluster string) model.Host {
	labels := make(map[string]string, len(a.attrs)+3)
	for k, v := range a.attrs {
		labels[k] = v
	}
	labels["mesos.agent_id"] = a.id
	if a.revocable.MilliCPU > 0 || a.revocable.MemMB > 0 {
		labels["mesos.revocable_cpus"] = model.FormatMilli(a.revocable.MilliCPU)
		labels["mesos.revocable_mem"] = model.FormatUnits(a.revocable.MemMB)
	}
	state := model.HostUp
	if a.underMaintenance() {
		state = model.HostDraining
		labels[hostmgr.LabelDrainDeadline] = a.unavailableFrom.UTC().Format(time.RFC3339)
	}
	if !a.failedAt.IsZero() {
		state = model.HostDown
	}
	ports := make([]model.PortRange, 0, len(a.ports))
	for _, r := range a.ports {
		ports = append(ports, model.PortRange{From: uint32(r.Begin), To: uint32(r.End)})
	}
	// The Mesos containerizer runs Docker images on every agent.
	return model.Host{ID: a.host, Hostname: a.hostname, Cluster: cluster, Kind: HostKind, State: state, Capacity: a.capacity,
		Labels: labels, Ports: ports, RunsImages: true}
}

// learn records the port ranges and volumes an offer shows; it reports
// whether the agent's ports grew.
func (a *agentState) learn(rs []mesoslib.Resource) bool {
	grew := false
	for i := range rs {
		r := &rs[i]
		switch {
		case r.Name == "ports" && r.GetType() == mesoslib.RANGES:
			before := a.ports.Size()
			a.ports = mesoslib.Ranges(append(append([]mesoslib.Value_Range(nil), a.ports...), r.GetRanges().GetRange()...)).Sort().Squash()
			grew = grew || a.ports.Size() != before
		case r.IsPersistentVolume():
			a.volumes[r.Disk.Persistence.GetID()] = true
		}
	}
	return grew
}

// attributeLabels renders Mesos attributes as host labels.
func attributeLabels(attrs []mesoslib.Attribute) map[string]string {
	out := make(map[string]string, len(attrs))
	for i := range attrs {
		at := &attrs[i]
		switch {
		case at.Text != nil:
			out[at.Name] = at.Text.GetValue()
		case at.Scalar != nil:
			out[at.Name] = strconv.FormatFloat(at.Scalar.GetValue(), 'g', -1, 64)
		case at.Set != nil:
			items := append([]string(nil), at.Set.Item...)
			sort.Strings(items)
			s := ""
			for j, it := range items {
				if j > 0 {
					s += ","
				}
				s += it
			}
			out[at.Name] = s
		case at.Ranges != nil:
			s := ""
			for j, r := range at.Ranges.Range {
				if j > 0 {
					s += ","
				}
				s += strconv.FormatUint(r.Begin, 10) + "-" + strconv.FormatUint(r.End, 10)
			}
			out[at.Name] = s
		}
	}
	return out
}

// pool is what is left of an agent's offers while tasks are carved from
// them: the non-revocable scalar resources and the port ranges, entry by
// entry, and the persistent volumes by persistence id.
type pool struct {
	entries []mesoslib.Resource
	volumes map[string]mesoslib.Resource
	// revocable are the offers' revocable scalars, for revocable runs.
	revocable []mesoslib.Resource
}

func newPool(offers []*heldOffer) *pool {
	p := &pool{volumes: map[string]mesoslib.Resource{}}
	for _, o := range offers {
		for _, r := range o.resources {
			switch {
			case r.IsPersistentVolume():
				p.volumes[r.Disk.Persistence.GetID()] = r
			case r.GetType() == mesoslib.SCALAR && r.Scalar != nil:
				c := r
				c.Scalar = &mesoslib.Value_Scalar{Value: r.Scalar.GetValue()}
				if r.Revocable != nil {
					p.revocable = append(p.revocable, c)
					continue
				}
				p.entries = append(p.entries, c)
			case r.Name == "ports" && r.GetType() == mesoslib.RANGES:
				c := r
				rs := mesoslib.Ranges(append([]mesoslib.Value_Range(nil), r.GetRanges().GetRange()...))
				for k := range rs { // a range given backwards is read forwards
					if rs[k].Begin > rs[k].End {
						rs[k].Begin, rs[k].End = rs[k].End, rs[k].Begin
					}
				}
				c.Ranges = &mesoslib.Value_Ranges{Range: rs.Sort().Squash()}
				p.entries = append(p.entries, c)
			}
		}
	}
	return p
}

// clone copies the pool, to restore it when a launch does not fit.
func (p *pool) clone() *pool {
	c := &pool{entries: make([]mesoslib.Resource, len(p.entries)), volumes: make(map[string]mesoslib.Resource, len(p.volumes))}
	for i, e := range p.entries {
		if e.Scalar != nil {
			e.Scalar = &mesoslib.Value_Scalar{Value: e.Scalar.Value}
		}
		if e.Ranges != nil {
			e.Ranges = &mesoslib.Value_Ranges{Range: append([]mesoslib.Value_Range(nil), e.Ranges.Range...)}
		}
		c.entries[i] = e
	}
	for k, v := range p.volumes {
		c.volumes[k] = v
	}
	c.revocable = cloneScalars(p.revocable)
	return c
}

func (p *pool) total() model.Resources {
	t, _ := scalars(p.entries)
	return t
}

// take carves want out of the pool, keeping each entry's role and
// allocation info; ok is false (and the pool unchanged) if it does not fit.
func (p *pool) take(want model.Resources) ([]mesoslib.Resource, bool) {
	if !want.Fits(p.total()) {
		return nil, false
	}
	var out []mesoslib.Resource
	for i, name := range scalarNames {
		need := want.Get(i)
		for j := range p.entries {
			if need <= 0 {
				break
			}
			e := &p.entries[j]
			if e.Name != name || e.Scalar == nil {
				continue
			}
			have := model.UnitsOf(i, e.Scalar.Value)
			if have <= 0 {
				continue
			}
			amount := min(need, have)
			c := *e
			c.Scalar = &mesoslib.Value_Scalar{Value: model.DecimalOf(i, amount)}
			out = append(out, c)
			e.Scalar.Value = model.DecimalOf(i, have-amount)
			need -= amount
		}
	}
	return out, true
}

// takePorts carves exactly these ports out of the offered port ranges,
// one resource per offer entry they come from. It returns the ports the
// offers lack; the pool must then be restored from a clone.
func (p *pool) takePorts(ports []model.NamedPort) ([]mesoslib.Resource, []uint32) {
	byEntry := map[int][]uint64{}
	var missing []uint32
	for _, np := range ports {
		found := -1
		for j := range p.entries {
			e := &p.entries[j]
			if e.Ranges != nil && mesoslib.Ranges(e.Ranges.Range).Search(uint64(np.Port)) >= 0 {
				found = j
				break
			}
		}
		if found < 0 {
			missing = append(missing, np.Port)
			continue
		}
		byEntry[found] = append(byEntry[found], uint64(np.Port))
		e := &p.entries[found]
		e.Ranges.Range, _ = mesoslib.Ranges(e.Ranges.Range).Partition(uint64(np.Port))
	}
	if len(missing) > 0 {
		return nil, missing // the caller restores the pool
	}
	idx := make([]int, 0, len(byEntry))
	for j := range byEntry {
		idx = append(idx, j)
	}
	sort.Ints(idx)
	out := make([]mesoslib.Resource, 0, len(idx))
	for _, j := range idx {
		c := p.entries[j]
		c.Ranges = &mesoslib.Value_Ranges{Range: mesoslib.NewRanges(byEntry[j]...)}
		out = append(out, c)
	}
	return out, nil
}

// takeUnreservedDisk carves mb of unreserved disk for a new reservation,
// keeping the entry's allocation info.
func (p *pool) takeUnreservedDisk(mb int64) (mesoslib.Resource, bool) {
	for j := range p.entries {
		e := &p.entries[j]
		if e.Name != "disk" || e.Scalar == nil || !e.IsUnreserved() || e.Disk != nil {
			continue
		}
		if have := model.WholeUnits(e.Scalar.Value); have >= mb {
			c := *e
			c.Scalar = &mesoslib.Value_Scalar{Value: float64(mb)}
			e.Scalar.Value = float64(have - mb)
			return c, true
		}
	}
	return mesoslib.Resource{}, false
}
