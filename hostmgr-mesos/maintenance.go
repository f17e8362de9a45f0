package mesos

import (
	"context"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// Maintenance (docs/maintenance.md). An agent scheduled for maintenance is
// offered with its unavailability, and frameworks running tasks there get
// inverse offers. Either makes the agent's host DRAINING, with the
// maintenance's start as its drain deadline (hostmgr.LabelDrainDeadline):
// the shard moves services off under their SLA, lets batch runs finish
// until the start and kills them then, and kills revocable work at once.
// The plugin answers each inverse offer: ACCEPT when it can keep that
// promise (the start is ahead, or nothing of this framework runs there),
// DECLINE otherwise, with DeclineRefuse as the filter, so that the master
// asks again. Maintenance ends when the inverse offers are rescinded and
// the agent's offers come without unavailability; while an agent is
// under maintenance the plugin does not suppress offers, so that it
// hears of the end.

// noteUnavailability records the unavailability an offer carries (nil:
// none, the maintenance is over); it reports whether the agent changed.
func (a *agentState) noteUnavailability(u *mesoslib.Unavailability) bool {
	if u == nil {
		changed := a.underMaintenance()
		a.unavailableFrom, a.draining = time.Time{}, map[string]bool{}
		return changed
	}
	start := time.Unix(0, u.Start.Nanoseconds)
	changed := !start.Equal(a.unavailableFrom)
	a.unavailableFrom = start
	return changed
}

func (a *agentState) underMaintenance() bool {
	return len(a.draining) > 0 || !a.unavailableFrom.IsZero()
}

// maintenanceLocked reports whether any agent is under maintenance.
func (p *Plugin) maintenanceLocked() bool {
	for _, a := range p.agents {
		if a.underMaintenance() {
			return true
		}
	}
	return false
}

// inverseOffers marks the agents under maintenance draining and answers
// each inverse offer.
func (p *Plugin) inverseOffers(ctx context.Context, ios []mesoslib.InverseOffer) {
	now := p.clock.Now()
	p.mu.Lock()
	c := p.conn
	var accept, decline []mesoslib.OfferID
	for i := range ios {
		io := &ios[i]
		a := (*agentState)(nil)
		if io.AgentID != nil {
			a = p.agents[io.AgentID.Value]
		}
		if a == nil {
			accept = append(accept, io.OfferID) // nothing of ours there
			continue
		}
		a.draining[io.OfferID.Value] = true
		a.noteUnavailability(&io.Unavailability)
		p.changed[a] = true
		if a.unavailableFrom.After(now) || !p.runsOnLocked(a.id) {
			accept = append(accept, io.OfferID)
		} else {
			decline = append(decline, io.OfferID)
		}
	}
	p.mu.Unlock()
	p.wake()
	refuse := calls.RefuseSeconds(p.cfg.DeclineRefuse)
	if len(accept) > 0 {
		p.spawn(nil, func() {
			if err := p.call(ctx, c, calls.AcceptInverseOffers(accept...).With(refuse)); err != nil {
				p.log.Warn("accepting inverse offers", "err", err)
			}
		})
	}
	if len(decline) > 0 {
		p.spawn(nil, func() {
			if err := p.call(ctx, c, calls.DeclineInverseOffers(decline...).With(refuse)); err != nil {
				p.log.Warn("declining inverse offers", "err", err)
			}
		})
	}
}

// runsOnLocked reports whether a live run of this framework is on agent.
func (p *Plugin) runsOnLocked(agentID string) bool {
	for _, r := range p.runs {
		if r.agentID == agentID && !r.ended {
			return true
		}
	}
	return false
}

func (p *Plugin) rescindInverse(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.agents {
		if a.draining[id] {
			delete(a.draining, id)
			if len(a.draining) == 0 {
				a.unavailableFrom = time.Time{} // offers tell if it goes on
			}
			p.changed[a] = true
		}
	}
	p.wake()
}
