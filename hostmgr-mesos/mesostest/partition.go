package mesostest

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Agents that fail, as the master sees them (mesos.proto's TaskState and
// FrameworkInfo.Capability.PARTITION_AWARE; docs/high-availability-
// framework-guide.md): an agent that stops answering is marked
// unreachable, and may come back; an agent that is removed, or that an
// operator marks gone, never comes back under its id. Either way its
// offers are rescinded and every framework gets FAILURE; its tasks are
// reported, without a uuid, with the state below. Partition-aware
// frameworks learn the exact case; others get TASK_LOST.

// unreachableState is what a framework hears of a task on an unreachable
// agent.
func unreachableState(fw *framework) mesos.TaskState {
	if fw.partition {
		return mesos.TASK_UNREACHABLE
	}
	return mesos.TASK_LOST
}

// PartitionAgent marks an agent unreachable, as after failed health
// checks: its offers and inverse offers are rescinded, its tasks reported
// TASK_UNREACHABLE (TASK_LOST to frameworks that are not partition-aware)
// and FAILURE sent. The tasks run on; their updates wait until the agent
// reregisters (ReconnectAgent). Reconciliation answers TASK_UNREACHABLE
// (TASK_LOST) for them meanwhile, and a KILL of one does not reach it.
func (m *Master) PartitionAgent(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(id)
	if err != nil {
		return err
	}
	if a.unreachable {
		return nil
	}
	a.unreachable = true
	m.rescindAgent(a)
	reason := mesos.REASON_AGENT_REMOVED
	for _, t := range a.tasks {
		if !t.terminal() {
			m.masterUpdate(t.fw, t.id, id, unreachableState(t.fw), &reason, "Agent "+id+" is unreachable")
		}
	}
	m.sendFailure(id)
	return nil
}

// ReconnectAgent lets an unreachable agent reregister: it is offered
// again, and the updates its tasks generated meanwhile are sent. Tasks
// that ran on are not killed, whatever the framework's capabilities
// (Mesos 1.5 and later); the master sends no update for them, so
// frameworks learn that they run by reconciliation.
func (m *Master) ReconnectAgent(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(id)
	if err != nil {
		return err
	}
	if !a.unreachable {
		return fmt.Errorf("%w: %s is not unreachable", ErrInvalidAgent, id)
	}
	a.unreachable = false
	for _, t := range a.tasks {
		m.sendHead(t)
	}
	for _, fw := range m.frameworks {
		for _, t := range fw.tasks {
			if t.agent == a && t.terminal() {
				m.sendHead(t) // ended while unreachable
			}
		}
	}
	return nil
}

// RemoveAgent takes an agent out of the cluster for good, as when its
// host was shut down: its offers are rescinded, its tasks reported
// TASK_GONE to partition-aware frameworks (TASK_LOST to others), and
// FAILURE sent unless it was unreachable already.
func (m *Master) RemoveAgent(id string) error {
	return m.removeAgent(id, mesos.TASK_GONE, mesos.REASON_AGENT_REMOVED, "agent "+id+" was removed")
}

// MarkAgentGone is the operator's MARK_AGENT_GONE: the agent is asserted
// shut down and removed; its tasks are reported TASK_GONE_BY_OPERATOR to
// partition-aware frameworks (TASK_LOST to others).
func (m *Master) MarkAgentGone(id string) error {
	return m.removeAgent(id, mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, "agent "+id+" was marked gone by an operator")
}

func (m *Master) removeAgent(id string, gone mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.agentByID(id)
	if err != nil {
		return err
	}
	m.rescindAgent(a)
	for _, t := range a.tasks {
		state := mesos.TASK_LOST
		if t.fw.partition {
			state = gone
		}
		m.endTask(t, state, reason, msg, false)
	}
	for _, fw := range m.frameworks {
		for _, t := range fw.tasks {
			if t.agent == a { // ended, its update never acknowledged
				delete(fw.tasks, t.id)
			}
		}
	}
	delete(m.agents, id)
	for i, x := range m.agentOrder {
		if x == a {
			m.agentOrder = append(m.agentOrder[:i], m.agentOrder[i+1:]...)
			break
		}
	}
	m.removed[id] = gone
	if !a.unreachable {
		m.sendFailure(id)
	}
	return nil
}

// rescindAgent rescinds an agent's outstanding offers and inverse offers.
func (m *Master) rescindAgent(a *agent) {
	m.rescindOffersOf(a)
	m.rescindInverseOffers(a)
}

func (m *Master) sendFailure(agentID string) {
	for _, fw := range m.frameworks {
		aid := mesos.AgentID{Value: agentID}
		m.send(fw, &scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &aid}})
	}
}
