package mesostest

import (
	"context"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Run lets time pass until ctx ends: every AllocationInterval one Tick.
func (m *Master) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			m.closeAll()
			return nil
		case <-m.clock.After(m.cfg.AllocationInterval):
			m.Tick()
		}
	}
}

func (m *Master) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, fw := range m.frameworks {
		m.disconnect(fw)
	}
}

// Tick advances the emulation to the clock's now: task phases that are
// due, heartbeats, update retries, failover timeouts and one allocation.
func (m *Master) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.advanceTasks(now)
	if now.Sub(m.lastHeartbts) >= m.cfg.HeartbeatInterval {
		m.lastHeartbts = now
		for _, fw := range m.frameworks {
			m.send(fw, &scheduler.Event{Type: scheduler.Event_HEARTBEAT})
		}
	}
	m.retryUpdates(now)
	m.expireFrameworks(now)
	m.expireOffers(now)
	m.sendInverseOffers(now)
	m.allocate(now)
}

// expireFrameworks removes frameworks disconnected for longer than their
// failover timeout.
func (m *Master) expireFrameworks(now time.Time) {
	for _, fw := range m.frameworks {
		if fw.sub == nil && !fw.failAt.IsZero() && !now.Before(fw.failAt) {
			m.teardown(fw)
		}
	}
}

// allocate offers what agents have free to subscribed frameworks that are
// not suppressed, in OFFERS events of at most OfferBatch offers. As with
// the master's allocator, resources freed on an agent are offered anew
// while earlier offers of it are outstanding.
func (m *Master) allocate(now time.Time) {
	if len(m.agentOrder) == 0 {
		return
	}
	ids := make([]string, 0, len(m.frameworks))
	for id, fw := range m.frameworks {
		if fw.sub != nil && !fw.suppress {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	n := len(m.agentOrder)
	start := m.cursor % n
	m.cursor++
	for _, id := range ids {
		fw := m.frameworks[id]
		var batch []mesos.Offer
		for i := 0; i < n; i++ {
			a := m.agentOrder[(start+i)%n]
			if until, ok := fw.filters[a.spec.ID]; ok {
				if now.Before(until) {
					continue
				}
				delete(fw.filters, a.spec.ID)
			}
			if a.unreachable {
				continue
			}
			// Without GPU_RESOURCES a framework is offered nothing of an
			// agent with GPUs (the master's --filter_gpu_resources).
			if a.spec.GPU > 0 && !fw.gpu {
				continue
			}
			free := a.spec.total().sub(a.reserved).sub(a.used).sub(a.offered)
			if !fw.revocable {
				free.rcpus, free.rmem = 0, 0
			}
			free = nonNegative(free)
			extra, rest := offerableExtras(a.extra, fw.role)
			if !free.offerable() && !hasReserved(extra) {
				continue
			}
			a.extra = rest
			o := &offer{id: m.newID("O"), fw: fw, agent: a, sum: free, extra: extra, sentAt: now}
			o.resources = append(free.resources(fw.role, fw.multiRole), allocated(extra, fw)...)
			m.offers[o.id] = o
			fw.offers[o.id] = o
			a.offered = a.offered.add(free)
			mo := mesos.Offer{
				ID: mesos.OfferID{Value: o.id}, FrameworkID: mesos.FrameworkID{Value: fw.id},
				AgentID: mesos.AgentID{Value: a.spec.ID}, Hostname: a.spec.Hostname,
				Resources: o.resources, Attributes: attributes(a.spec.Attributes),
				Unavailability: a.maintenance,
			}
			if fw.multiRole {
				role := fw.role
				mo.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
			}
			batch = append(batch, mo)
			m.stats.OffersSent++
			if len(batch) == m.cfg.OfferBatch {
				m.send(fw, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: batch}})
				batch = nil
			}
		}
		if len(batch) > 0 {
			m.send(fw, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: batch}})
		}
	}
}

// expireOffers rescinds offers outstanding for longer than the offer
// timeout; their resources are offered again from this allocation on.
func (m *Master) expireOffers(now time.Time) {
	if m.cfg.OfferTimeout <= 0 {
		return
	}
	for _, o := range m.offers {
		if now.Sub(o.sentAt) >= m.cfg.OfferTimeout {
			m.rescind(o)
		}
	}
}

func nonNegative(r resSum) resSum {
	return resSum{max(r.cpus, 0), max(r.mem, 0), max(r.disk, 0), max(r.gpus, 0), max(r.rcpus, 0), max(r.rmem, 0)}
}
