package mesos

import (
	"slices"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Revocable resources (docs/oversubscription.md). The plugin subscribes
// with REVOCABLE_RESOURCES, so offers may hold revocable cpus and mem: an
// agent's oversubscribed slack. The shard's revocable work (Launch
// .Revocable) takes its cpus and mem from those only, its disk and GPUs
// from the ordinary resources; ordinary runs never use revocable ones.
// The shard places revocable work on hosts' slack, which it reads from
// hostmgr.UsageReporter: MeasuredUsage reports, for an agent that ever
// offered revocable resources, the usage that makes that slack equal to
// the agent's revocable cpus and mem (offered, plus what this framework's
// revocable runs hold). When Mesos preempts a revocable run (the slack
// shrank), it ends TASK_GONE and is reported LOST.

var _ hostmgr.UsageReporter = (*Plugin)(nil)

// revocableKinds are the resources Mesos offers revocable.
var revocableKinds = [...]string{"cpus", "mem"}

// hold adds (sign 1) or removes (-1) what a run holds on the agent.
func (a *agentState) hold(r *runState, sign int64) {
	if !r.revocable {
		a.ours = a.ours.Add(r.res.Scale(sign)).Max(model.Resources{})
		return
	}
	rev, plain := splitRevocable(r.res)
	a.oursRevocable = a.oursRevocable.Add(rev.Scale(sign)).Max(model.Resources{})
	a.ours = a.ours.Add(plain.Scale(sign)).Max(model.Resources{})
}

// splitRevocable divides what a revocable run needs into what revocable
// resources give (cpus, mem) and the rest.
func splitRevocable(want model.Resources) (rev, plain model.Resources) {
	rev = model.Resources{MilliCPU: want.MilliCPU, MemMB: want.MemMB}
	return rev, want.Sub(rev)
}

// takeFor carves a launch's scalars: a revocable one's cpus and mem from
// the revocable entries, everything else from the ordinary ones.
func (p *pool) takeFor(l *hostmgr.Launch) ([]mesoslib.Resource, bool) {
	if !l.Revocable {
		return p.take(l.Task.Resources)
	}
	rev, plain := splitRevocable(l.Task.Resources)
	_, have := scalars(p.revocable)
	if !rev.Fits(have) || !plain.Fits(p.total()) {
		return nil, false
	}
	out, _ := p.take(plain)
	for i, name := range scalarNames {
		if !slices.Contains(revocableKinds[:], name) {
			continue
		}
		need := rev.Get(i)
		for j := range p.revocable {
			e := &p.revocable[j]
			if need <= 0 {
				break
			}
			if e.Name != name {
				continue
			}
			avail := model.UnitsOf(i, e.Scalar.Value)
			amount := min(need, avail)
			if amount <= 0 {
				continue
			}
			c := *e
			c.Scalar = &mesoslib.Value_Scalar{Value: model.DecimalOf(i, amount)}
			out = append(out, c)
			e.Scalar.Value = model.DecimalOf(i, avail-amount)
			need -= amount
		}
	}
	return out, true
}

func cloneScalars(rs []mesoslib.Resource) []mesoslib.Resource {
	out := make([]mesoslib.Resource, len(rs))
	for i, r := range rs {
		r.Scalar = &mesoslib.Value_Scalar{Value: r.Scalar.GetValue()}
		out[i] = r
	}
	return out
}

// MeasuredUsage implements hostmgr.UsageReporter: the usage that makes
// the shard's slack on the host (what it allocated less what is used)
// equal to the agent's revocable cpus and mem. It is not known for an
// agent that never offered revocable resources.
func (p *Plugin) MeasuredUsage(host model.HostID) (model.Resources, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.byHost[host]
	if a == nil || !a.sawRevocable {
		return model.Resources{}, false
	}
	slack := a.revocable.Add(a.oursRevocable)
	// The shard's allocation here is what this framework's ordinary runs
	// hold; usage may come out negative, the slack then exceeding it.
	return a.ours.Sub(model.Resources{MilliCPU: slack.MilliCPU, MemMB: slack.MemMB}), true
}
