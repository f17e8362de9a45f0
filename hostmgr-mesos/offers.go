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
	// ours is what this framework's live runs hold on the agent.
	ours model.Resources
	// capacity and revocable are recomputed on every offer and
	// remembered between offers.
	capacity  model.Resources
	revocable model.Resources
	draining  map[string]bool // inverse offer ids
	reported  bool
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
		if r.GetType() != mesoslib.SCALAR || r.Scalar == nil {
			continue
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
	if len(a.draining) > 0 {
		state = model.HostDraining
	}
	return model.Host{ID: a.host, Hostname: a.hostname, Cluster: cluster, Kind: HostKind, State: state, Capacity: a.capacity, Labels: labels}
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
// them: the non-revocable scalar resources, entry by entry.
type pool struct {
	entries []mesoslib.Resource
}

func newPool(offers []*heldOffer) *pool {
	p := &pool{}
	for _, o := range offers {
		for _, r := range o.resources {
			if r.GetType() == mesoslib.SCALAR && r.Scalar != nil && r.Revocable == nil {
				c := r
				c.Scalar = &mesoslib.Value_Scalar{Value: r.Scalar.GetValue()}
				p.entries = append(p.entries, c)
			}
		}
	}
	return p
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
			if e.Name != name {
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

// taskInfo builds the TaskInfo of a launch on agentID.
func taskInfo(l *hostmgr.Launch, agentID string, resources []mesoslib.Resource) mesoslib.TaskInfo {
	shell := false
	value := l.Task.Command
	env := &mesoslib.Environment{}
	keys := make([]string, 0, len(l.Task.Env))
	for k := range l.Task.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := l.Task.Env[k]
		env.Variables = append(env.Variables, mesoslib.Environment_Variable{Name: k, Value: &v})
	}
	run := string(l.Run)
	env.Variables = append(env.Variables, mesoslib.Environment_Variable{Name: "PELOTON_RUN_ID", Value: &run})
	ti := mesoslib.TaskInfo{
		Name:      run,
		TaskID:    mesoslib.TaskID{Value: run},
		AgentID:   mesoslib.AgentID{Value: agentID},
		Resources: resources,
		Command: &mesoslib.CommandInfo{
			Shell:       &shell,
			Value:       &value,
			Arguments:   append([]string{l.Task.Command}, l.Task.Args...),
			Environment: env,
		},
	}
	if len(l.Labels) > 0 {
		lk := make([]string, 0, len(l.Labels))
		for k := range l.Labels {
			lk = append(lk, k)
		}
		sort.Strings(lk)
		ti.Labels = &mesoslib.Labels{}
		for _, k := range lk {
			v := l.Labels[k]
			ti.Labels.Labels = append(ti.Labels.Labels, mesoslib.Label{Key: k, Value: &v})
		}
	}
	if l.Task.KillGrace > 0 {
		ti.KillPolicy = &mesoslib.KillPolicy{GracePeriod: &mesoslib.DurationInfo{Nanoseconds: l.Task.KillGrace.Nanoseconds()}}
	}
	return ti
}
