package hostpool

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Host is one host as the policy sees it.
type Host struct {
	ID model.HostID
	// Pool is the host pool the host is in.
	Pool string
	// Capacity is what the shard may use on the host; Allocated what the
	// shard's runs hold there, Tasks how many runs.
	Capacity  model.Resources
	Allocated model.Resources
	Tasks     int
	// InService: the host is up and no operator holds it (drained or
	// down for maintenance). Only such hosts count toward a floor and may
	// move; a host the policy drains for a move (Target set) stays in
	// service.
	InService bool
	// Target is the host pool the policy is moving the host to; the host
	// is drained until nothing runs there.
	Target string
	// LastMoved is when the host last changed host pools (zero: never).
	LastMoved time.Time
}

// Input is everything a policy decision depends on.
type Input struct {
	Hosts []Host
	// Demand is, per host pool, what waits for a host there: tasks of
	// resource pools that name the host pool first, that found no host.
	Demand map[string]model.Resources
	// Floors is the fewest hosts in service each host pool keeps; absent
	// is 0.
	Floors map[string]int
	// MinStay is how long a host that moved stays before it may move
	// again, so that hosts do not flap between host pools.
	MinStay time.Duration
	Now     time.Time
}

// Kind is what a move does.
type Kind uint8

const (
	// MoveNow relabels an idle host: it is in To at once.
	MoveNow Kind = iota + 1
	// MoveDrain starts a move of a host that runs something: it is
	// drained (services move under their SLA) and moves once empty.
	MoveDrain
	// MoveFinish relabels a host drained for a move now that nothing runs
	// there, and puts it back in service.
	MoveFinish
	// MoveCancel ends the drain of a host whose move is no longer wanted
	// (the demand of its target is gone); it stays where it is.
	MoveCancel
)

var kindNames = [...]string{"", "move", "drain", "finish", "cancel"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Move is one decision about one host.
type Move struct {
	Kind Kind
	Host model.HostID
	From string
	To   string
	// Reason gives the figures behind the decision, for the move's event.
	Reason string
}

func (m Move) String() string {
	return m.Kind.String() + " " + string(m.Host) + " " + m.From + "->" + m.To
}

// Plan decides the moves of one policy period:
//
//  1. A host drained for a move finishes it once nothing runs there; a
//     host still running something whose target no longer has demand
//     stays where it is (the drain is cancelled).
//  2. Each host pool with demand (in name order) takes hosts until the
//     hosts given to it (moves in flight included) cover its demand in
//     every resource it asks for. Hosts come from host pools without
//     demand, never taking one below its floor: idle hosts first (they
//     move at once), then the least loaded hosts, to be drained, but only
//     where the rest of their host pool has room for what runs there.
//     Among equals, the host pool furthest above its floor gives first,
//     then the lower host id.
func Plan(in Input) []Move {
	p := &planner{in: &in, pools: map[string]*poolState{}, incoming: map[string]model.Resources{}}
	p.tally()
	p.settleInFlight()
	p.moveToDemand()
	return p.out
}

// poolState is a host pool as a plan sees it: its hosts in service (not
// moving away) and what they have free.
type poolState struct {
	inService int
	free      model.Resources
}

// planner is a Plan under way: each pool's state, the capacity moving
// into each pool, and the moves decided.
type planner struct {
	in       *Input
	pools    map[string]*poolState
	incoming map[string]model.Resources
	out      []Move
}

func (p *planner) state(pool string) *poolState {
	s := p.pools[pool]
	if s == nil {
		s = &poolState{}
		p.pools[pool] = s
	}
	return s
}

// keep counts host h in service in its pool.
func (p *planner) keep(h *Host) {
	s := p.state(h.Pool)
	s.inService++
	s.free = s.free.Add(h.Capacity.Sub(h.Allocated).Max(model.Resources{}))
}

// tally counts the hosts in service of each pool and the capacity moving
// into each.
func (p *planner) tally() {
	for i := range p.in.Hosts {
		h := &p.in.Hosts[i]
		if !h.InService {
			continue
		}
		p.state(h.Pool)
		if h.Target != "" {
			p.incoming[h.Target] = p.incoming[h.Target].Add(h.Capacity)
			continue
		}
		p.keep(h)
	}
}

// settleInFlight finishes the moves whose host drained and cancels those
// whose target has no pending demand any more (the host stays).
func (p *planner) settleInFlight() {
	for i := range p.in.Hosts {
		h := &p.in.Hosts[i]
		if h.Target == "" || !h.InService {
			continue
		}
		switch {
		case h.Tasks == 0:
			p.out = append(p.out, Move{Kind: MoveFinish, Host: h.ID, From: h.Pool, To: h.Target,
				Reason: "drained for the move to " + h.Target})
		case !wants(p.in.Demand[h.Target]):
			p.out = append(p.out, Move{Kind: MoveCancel, Host: h.ID, From: h.Pool, To: h.Target,
				Reason: h.Target + " has no pending demand any more"})
			p.incoming[h.Target] = p.incoming[h.Target].Sub(h.Capacity)
			p.keep(h)
		}
	}
}

// moveToDemand moves hosts to the host pools with demand, in name order,
// until the capacity moving in covers the demand or no donor is left.
func (p *planner) moveToDemand() {
	var receivers []string
	for pool, d := range p.in.Demand {
		if wants(d) {
			receivers = append(receivers, pool)
		}
	}
	slices.Sort(receivers)
	taken := map[model.HostID]bool{}
	for _, to := range receivers {
		need := p.in.Demand[to].Sub(p.incoming[to])
		for wants(need) {
			h := pickDonor(p.in, to, need, taken, func(pool string) (int, model.Resources) {
				s := p.state(pool)
				return s.inService, s.free
			})
			if h == nil {
				break
			}
			taken[h.ID] = true
			p.move(h, to)
			need = need.Sub(h.Capacity)
		}
	}
}

// move takes host h out of its pool's service towards pool to: at once
// when it runs nothing, after a drain otherwise.
func (p *planner) move(h *Host, to string) {
	s := p.state(h.Pool)
	s.inService--
	hostFree := h.Capacity.Sub(h.Allocated).Max(model.Resources{})
	s.free = s.free.Sub(hostFree).Sub(h.Allocated)
	kind := MoveNow
	if h.Tasks > 0 {
		kind = MoveDrain
	}
	p.out = append(p.out, Move{Kind: kind, Host: h.ID, From: h.Pool, To: to,
		Reason: fmt.Sprintf("%s: %s pending; %s: %d hosts in service, floor %d",
			to, p.in.Demand[to].String(), h.Pool, s.inService+1, p.in.Floors[h.Pool])})
}

// pickDonor returns the best host to give to host pool to, or nil.
func pickDonor(in *Input, to string, need model.Resources, taken map[model.HostID]bool, pool func(string) (inService int, free model.Resources)) *Host {
	var best *Host
	bestAbove := 0
	for i := range in.Hosts {
		h := &in.Hosts[i]
		if !h.InService || h.Target != "" || h.Pool == to || taken[h.ID] || wants(in.Demand[h.Pool]) {
			continue
		}
		if !h.LastMoved.IsZero() && in.Now.Sub(h.LastMoved) < in.MinStay {
			continue
		}
		if !helps(h.Capacity, need) {
			continue
		}
		n, free := pool(h.Pool)
		above := n - in.Floors[h.Pool]
		if above <= 0 {
			continue
		}
		if h.Tasks > 0 {
			// What runs there must fit on the rest of its host pool.
			rest := free.Sub(h.Capacity.Sub(h.Allocated).Max(model.Resources{}))
			if !h.Allocated.Fits(rest) {
				continue
			}
		}
		if best == nil || better(h, above, best, bestAbove) {
			best, bestAbove = h, above
		}
	}
	return best
}

// better orders donor hosts: idle first, then least allocated (cpu, then
// memory), then the host pool furthest above its floor, then the id.
func better(a *Host, aAbove int, b *Host, bAbove int) bool {
	if (a.Tasks == 0) != (b.Tasks == 0) {
		return a.Tasks == 0
	}
	if c := cmp.Or(cmp.Compare(a.Allocated.MilliCPU, b.Allocated.MilliCPU), cmp.Compare(a.Allocated.MemMB, b.Allocated.MemMB),
		cmp.Compare(bAbove, aAbove)); c != 0 {
		return c < 0
	}
	return a.ID < b.ID
}

// helps reports whether a host of capacity c has any of what need asks for.
func helps(c, need model.Resources) bool {
	return (need.MilliCPU > 0 && c.MilliCPU > 0) || (need.MemMB > 0 && c.MemMB > 0) ||
		(need.DiskMB > 0 && c.DiskMB > 0) || (need.GPU > 0 && c.GPU > 0)
}

// wants reports whether a demand asks for anything.
func wants(d model.Resources) bool {
	return d.MilliCPU > 0 || d.MemMB > 0 || d.DiskMB > 0 || d.GPU > 0
}

// ParseFloors reads floors as "batch=2,services=4".
func ParseFloors(s string) (map[string]int, error) {
	out := map[string]int{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !model.ValidHostPoolName(name) {
			return nil, fmt.Errorf("%q: want HOSTPOOL=N with a host pool name of lowercase letters, digits and -", part)
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q: the floor must be a whole number >= 0", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%q: host pool %s given twice", part, name)
		}
		out[name] = v
	}
	return out, nil
}
