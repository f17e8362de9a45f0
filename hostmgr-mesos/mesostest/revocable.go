package mesostest

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Revocable resources (docs/oversubscription.md): an agent's
// oversubscribed slack (AgentSpec.RevocableCPU, RevocableMemMB) is offered,
// marked revocable, to frameworks with the REVOCABLE_RESOURCES capability
// only, and tasks may use it. When the estimate shrinks, the QoS
// controller preempts tasks on revocable resources until the rest fits:
// they end TASK_GONE (TASK_LOST for frameworks that are not
// partition-aware) with REASON_CONTAINER_PREEMPTED.

// SetRevocable changes an agent's revocable slack: its outstanding offers
// are rescinded, and tasks using revocable resources are preempted, the
// latest launched first, until what the rest use fits.
func (m *Master) SetRevocable(agentID string, cpu, memMB float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(agentID)
	if err != nil {
		return err
	}
	a.spec.RevocableCPU, a.spec.RevocableMemMB = cpu, memMB
	m.rescindOffersOf(a)
	var users []*task
	for _, t := range a.tasks {
		if t.sum.rcpus > 0 || t.sum.rmem > 0 {
			users = append(users, t)
		}
	}
	sort.Slice(users, func(i, j int) bool { return users[i].seq > users[j].seq })
	total := a.spec.total()
	for _, t := range users {
		if a.used.rcpus <= total.rcpus && a.used.rmem <= total.rmem {
			break
		}
		state := mesos.TASK_LOST
		if t.fw.partition {
			state = mesos.TASK_GONE
		}
		m.endTask(t, state, mesos.REASON_CONTAINER_PREEMPTED, "Task preempted: the agent's revocable resources shrank", true)
	}
	return nil
}
