package mesostest

import (
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Maintenance, as docs/maintenance.md describes it. Scheduling an agent's
// maintenance puts it in Draining mode: its outstanding offers are
// rescinded and offered again with the unavailability, and every
// framework using resources there (running tasks) gets an inverse offer.
// A framework ACCEPTs or DECLINEs it (ACCEPT_INVERSE_OFFERS,
// DECLINE_INVERSE_OFFERS), a hint the master records and does not act
// on; it gets a new one once the call's filter (refuse_seconds, 5 s by
// default) has passed, while it still uses resources there. Ending the
// maintenance rescinds outstanding inverse offers and offers; offers
// without unavailability tell frameworks it is over. Taking the machine
// down is RemoveAgent.

// StartMaintenance schedules maintenance of an agent from start for d.
func (m *Master) StartMaintenance(id string, start time.Time, d time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(id)
	if err != nil {
		return err
	}
	ns := d.Nanoseconds()
	a.maintenance = &mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: start.UnixNano()}, Duration: &mesos.DurationInfo{Nanoseconds: ns}}
	m.rescindOffersOf(a)
	m.sendInverseOffers(m.clock.Now())
	return nil
}

// StopMaintenance ends an agent's maintenance: its outstanding inverse
// offers and offers are rescinded, and it is offered without
// unavailability again.
func (m *Master) StopMaintenance(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(id)
	if err != nil {
		return err
	}
	a.maintenance = nil
	a.answers = nil
	m.rescindInverseOffers(a)
	m.rescindOffersOf(a)
	return nil
}

// InverseOfferAnswers returns how frameworks answered the inverse offers
// of an agent's current maintenance: framework id -> ACCEPTED or
// DECLINED, as the master's maintenance status shows them.
func (m *Master) InverseOfferAnswers(agentID string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(agentID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(a.answers))
	for k, v := range a.answers {
		out[k] = v
	}
	return out, nil
}

// sendInverseOffers sends an inverse offer for every agent under
// maintenance to every subscribed framework that runs tasks there and has
// none outstanding nor filtered.
func (m *Master) sendInverseOffers(now time.Time) {
	for _, a := range m.agentOrder {
		if a.maintenance == nil || a.unreachable || len(a.tasks) == 0 {
			continue
		}
		using := map[*framework]bool{}
		for _, t := range a.tasks {
			using[t.fw] = true
		}
		fws := make([]*framework, 0, len(using))
		for fw := range using {
			fws = append(fws, fw)
		}
		sort.Slice(fws, func(i, j int) bool { return fws[i].id < fws[j].id })
		for _, fw := range fws {
			if until, ok := fw.inverseFilters[a.spec.ID]; ok && now.Before(until) {
				continue
			}
			m.sendInverseOffer(fw, a)
		}
	}
}

func (m *Master) sendInverseOffer(fw *framework, a *agent) {
	if a.maintenance == nil || fw.sub == nil {
		return
	}
	if _, sent := a.inverse[fw.id]; sent {
		return
	}
	id := m.newID("IO")
	a.inverse[fw.id] = id
	aid := mesos.AgentID{Value: a.spec.ID}
	m.send(fw, &scheduler.Event{Type: scheduler.Event_INVERSE_OFFERS, InverseOffers: &scheduler.Event_InverseOffers{
		InverseOffers: []mesos.InverseOffer{{OfferID: mesos.OfferID{Value: id}, FrameworkID: mesos.FrameworkID{Value: fw.id}, AgentID: &aid, Unavailability: *a.maintenance}},
	}})
}

// answerInverseOffers records a framework's answer to its outstanding
// inverse offers; ids that are not outstanding are ignored.
func (m *Master) answerInverseOffers(fw *framework, ids []mesos.OfferID, f *mesos.Filters, answer string, now time.Time) {
	refuse := refuseFor(f)
	for _, id := range ids {
		for _, a := range m.agentOrder {
			if a.inverse[fw.id] != id.Value {
				continue
			}
			delete(a.inverse, fw.id)
			if a.answers == nil {
				a.answers = map[string]string{}
			}
			a.answers[fw.id] = answer
			if fw.inverseFilters == nil {
				fw.inverseFilters = map[string]time.Time{}
			}
			fw.inverseFilters[a.spec.ID] = now.Add(refuse)
		}
	}
}

// rescindInverseOffers rescinds an agent's outstanding inverse offers.
func (m *Master) rescindInverseOffers(a *agent) {
	for fwID, ioID := range a.inverse {
		if fw := m.frameworks[fwID]; fw != nil {
			m.send(fw, &scheduler.Event{Type: scheduler.Event_RESCIND_INVERSE_OFFER,
				RescindInverseOffer: &scheduler.Event_RescindInverseOffer{InverseOfferID: mesos.OfferID{Value: ioID}}})
		}
	}
	a.inverse = map[string]string{}
}

// rescindOffersOf rescinds an agent's outstanding offers.
func (m *Master) rescindOffersOf(a *agent) int {
	n := 0
	for _, o := range m.offers {
		if o.agent == a {
			m.rescind(o)
			n++
		}
	}
	return n
}
