package mesostest

import (
	"fmt"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// handleCall validates and carries out a non-SUBSCRIBE call; it returns
// the HTTP status and, for errors, the message.
func (m *Master) handleCall(call *scheduler.Call, streamID string) (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats.Calls[call.Type.String()]++
	fw, code, msg := m.caller(call, streamID)
	if fw == nil {
		return code, msg
	}
	if field, ok := callFields[call.Type]; ok && !field.present(call) {
		return http.StatusBadRequest, "Expecting '" + field.name + "' to be present"
	}
	return m.carryOut(fw, call, m.clock.Now())
}

// caller returns the framework a call comes from, or nil with the HTTP
// status and message the master answers a call with when the framework
// is not given, not known, not subscribed or not on the stream it names.
func (m *Master) caller(call *scheduler.Call, streamID string) (*framework, int, string) {
	if call.FrameworkID == nil || call.FrameworkID.Value == "" {
		return nil, http.StatusBadRequest, "Expecting 'framework_id' to be present"
	}
	fw := m.frameworks[call.FrameworkID.Value]
	switch {
	case fw == nil:
		return nil, http.StatusForbidden, "Framework cannot be found"
	case fw.sub == nil:
		return nil, http.StatusForbidden, "Framework is not subscribed"
	case streamID == "":
		return nil, http.StatusBadRequest, "All non-subscribe calls should include the 'Mesos-Stream-Id' header"
	case streamID != fw.sub.streamID:
		return nil, http.StatusBadRequest, fmt.Sprintf("The stream ID '%s' included in this request didn't match the stream ID currently associated with framework ID %s", streamID, fw.id)
	}
	return fw, 0, ""
}

// callFields names the field a call of each type must carry, as the
// master names it when it is missing, and tells whether a call has it.
var callFields = map[scheduler.Call_Type]struct {
	name    string
	present func(*scheduler.Call) bool
}{
	scheduler.Call_ACCEPT:                       {"accept", func(c *scheduler.Call) bool { return c.Accept != nil }},
	scheduler.Call_DECLINE:                      {"decline", func(c *scheduler.Call) bool { return c.Decline != nil }},
	scheduler.Call_ACCEPT_INVERSE_OFFERS:        {"accept_inverse_offers", func(c *scheduler.Call) bool { return c.AcceptInverseOffers != nil }},
	scheduler.Call_DECLINE_INVERSE_OFFERS:       {"decline_inverse_offers", func(c *scheduler.Call) bool { return c.DeclineInverseOffers != nil }},
	scheduler.Call_KILL:                         {"kill", func(c *scheduler.Call) bool { return c.Kill != nil }},
	scheduler.Call_ACKNOWLEDGE:                  {"acknowledge", func(c *scheduler.Call) bool { return c.Acknowledge != nil }},
	scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS: {"acknowledge_operation_status", func(c *scheduler.Call) bool { return c.AcknowledgeOperationStatus != nil }},
	scheduler.Call_RECONCILE:                    {"reconcile", func(c *scheduler.Call) bool { return c.Reconcile != nil }},
}

// carryOut carries out a call from a subscribed framework that has the
// field of its type.
func (m *Master) carryOut(fw *framework, call *scheduler.Call, now time.Time) (int, string) {
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.teardown(fw)
	case scheduler.Call_ACCEPT:
		m.accept(fw, call.Accept, now)
	case scheduler.Call_DECLINE:
		m.decline(fw, call.Decline, now)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		m.answerInverseOffers(fw, call.AcceptInverseOffers.InverseOfferIDs, call.AcceptInverseOffers.Filters, "ACCEPTED", now)
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		m.answerInverseOffers(fw, call.DeclineInverseOffers.InverseOfferIDs, call.DeclineInverseOffers.Filters, "DECLINED", now)
	case scheduler.Call_REVIVE:
		fw.filters = map[string]time.Time{}
		fw.suppress = false
	case scheduler.Call_SUPPRESS:
		fw.suppress = true
	case scheduler.Call_KILL:
		m.kill(fw, call.Kill, now)
	case scheduler.Call_ACKNOWLEDGE:
		return m.acknowledgeCall(fw, call.Acknowledge)
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		return m.acknowledgeOperationCall(call.AcknowledgeOperationStatus)
	case scheduler.Call_RECONCILE:
		m.reconcile(fw, call.Reconcile.Tasks)
	case scheduler.Call_SHUTDOWN, scheduler.Call_MESSAGE, scheduler.Call_REQUEST:
		// Custom executors and allocator requests: nothing to emulate.
	default:
		return http.StatusBadRequest, fmt.Sprintf("Unsupported call type %s", call.Type)
	}
	return http.StatusAccepted, ""
}

func (m *Master) acknowledgeCall(fw *framework, ack *scheduler.Call_Acknowledge) (int, string) {
	if len(ack.UUID) != 16 {
		return http.StatusBadRequest, "Failed to parse UUID: not 16 bytes"
	}
	m.acknowledge(fw, ack.TaskID.Value, ack.UUID)
	return http.StatusAccepted, ""
}

func (m *Master) acknowledgeOperationCall(ack *scheduler.Call_AcknowledgeOperationStatus) (int, string) {
	if len(ack.UUID) != 16 || ack.OperationID.Value == "" {
		return http.StatusBadRequest, "ACKNOWLEDGE_OPERATION_STATUS needs a 16-byte uuid and an operation id"
	}
	m.stats.OperationAcks++
	return http.StatusAccepted, ""
}

// decline answers DECLINE: the framework's offers among those named go
// back to their agents, which are filtered for the framework for the
// refuse time.
func (m *Master) decline(fw *framework, dec *scheduler.Call_Decline, now time.Time) {
	refuse := refuseFor(dec.Filters)
	for _, id := range dec.OfferIDs {
		o := m.offers[id.Value]
		if o == nil || o.fw != fw {
			continue
		}
		m.recover(o)
		m.stats.OffersDecline++
		if refuse > 0 {
			fw.filters[o.agent.spec.ID] = now.Add(refuse)
		}
	}
}

func refuseFor(f *mesos.Filters) time.Duration {
	// Filters absent means the default filter (refuse_seconds = 5).
	if f == nil {
		return defaultRefuse
	}
	return time.Duration(f.GetRefuseSeconds() * float64(time.Second))
}

func (m *Master) startTask(fw *framework, a *agent, ti *mesos.TaskInfo, sum resSum, extra mesos.Resources, now time.Time) {
	m.nextID++
	t := &task{id: ti.TaskID.Value, fw: fw, agent: a, sum: sum, extra: unallocated(extra), state: mesos.TASK_STAGING, index: -1, seq: m.nextID}
	m.taskEnv(t, ti)
	t.health, t.check = ti.HealthCheck, ti.Check
	a.used = a.used.add(sum)
	a.tasks[t.id] = t
	fw.tasks[t.id] = t
	if m.cfg.KeepTaskInfos {
		m.launched[t.id] = *ti
	}
	m.stats.TasksLaunched++
	m.schedule(t, phaseStarting, now)
}

// reconcile answers RECONCILE: with no tasks, the latest state of every
// task the master knows; otherwise, for each task asked about, its latest
// state, or TASK_GONE / TASK_UNKNOWN (partition-aware) or TASK_LOST when
// the master does not know it.
func (m *Master) reconcile(fw *framework, tasks []scheduler.Call_Reconcile_Task) {
	reason := mesos.REASON_RECONCILIATION
	if len(tasks) == 0 {
		for _, t := range fw.tasks {
			m.reconciled(t)
		}
		return
	}
	for _, q := range tasks {
		agentID := ""
		if q.AgentID != nil {
			agentID = q.AgentID.Value
		}
		if t := fw.tasks[q.TaskID.Value]; t != nil {
			m.reconciled(t)
			continue
		}
		goneState, gone := m.removed[agentID]
		state := mesos.TASK_LOST
		msg := "Reconciliation: task is unknown"
		switch {
		case fw.partition && gone:
			state, msg = goneState, "Reconciliation: task is unknown to the removed agent"
		case fw.partition:
			state = mesos.TASK_UNKNOWN
		}
		m.masterUpdate(fw, q.TaskID.Value, agentID, state, &reason, msg)
	}
}

// reconciled sends a task's latest state, health and check status, as
// the master answers reconciliation.
func (m *Master) reconciled(t *task) {
	reason := mesos.REASON_RECONCILIATION
	if t.agent.unreachable && !t.terminal() {
		m.masterUpdate(t.fw, t.id, t.agent.spec.ID, unreachableState(t.fw), &reason, "Reconciliation: task is on an unreachable agent")
		return
	}
	st := m.status(t.id, t.agent.spec.ID, t.state, &reason, "Reconciliation: latest task state", mesos.SOURCE_MASTER)
	t.annotate(&st)
	m.send(t.fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
}

// teardown removes a framework: its tasks are killed, its offers
// recovered, its id refused from now on.
func (m *Master) teardown(fw *framework) {
	for _, t := range fw.tasks {
		if !t.terminal() {
			m.unschedule(t)
			m.release(t)
		}
	}
	for _, o := range fw.offers {
		m.recover(o)
	}
	for _, a := range m.agentOrder {
		delete(a.inverse, fw.id)
	}
	if fw.sub != nil {
		close(fw.sub.closed)
		fw.sub = nil
	}
	delete(m.frameworks, fw.id)
	m.removedFw[fw.id] = true
}
